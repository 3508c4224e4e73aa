// `stepcast resilience`: the options; report::resilience_command makes the output.
#include <CLI/CLI.hpp>
#include <memory>

#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "stepcast/report/resilience_command.hpp"

namespace stepcast::cli {

void add_resilience_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::ResilienceRequest>>();
  CLI::App* sub = app.add_subcommand(
      "resilience",
      "Checkpoint size and write/restore time, the optimal checkpoint interval (Young 1974, Daly 2006) and goodput, "
      "stragglers and the input-pipeline bound of a plan");
  add_plan_options(*sub, command->request.plan, true, false);
  sub->add_option(
         "--storage", command->request.storage,
         "Checkpoint storage: a bandwidth (\"2 GB/s\", a shared file system's aggregate), node:<bw> (local NVMe "
         "per node), shared:<bw>, client:<bw> (object store, per rank), or nvme, fsx, s3")
      ->required();
  sub->add_option("--mtbf", command->request.mtbf,
                  "Mean time between failures of ONE node, e.g. \"24 h\"; the job's is this / nodes");
  sub->add_option("--failure-rate", command->request.failure_rate, "Failures per GPU-hour (instead of --mtbf)")
      ->check(positive_number());
  sub->add_option("--spot-interruption-rate", command->request.spot_rate,
                  "Spot interruptions per node-hour, e.g. 0.05 (instead of --mtbf)")
      ->check(positive_number());
  sub->add_option("--restart", command->request.restart, "Relaunch time after a failure, before the restore read")
      ->capture_default_str();
  sub->add_flag("--async", command->request.async,
                "Stage the checkpoint in host memory; only the copy stalls training");
  sub->add_option("--host-copy-bandwidth", command->request.host_copy_bandwidth,
                  "Device-to-host copy rate per GPU (--async)")
      ->capture_default_str();
  sub->add_option("--host-memory", command->request.host_memory, "Host memory per node free for staging (--async)")
      ->capture_default_str();
  sub->add_flag("--with-gradients", command->request.with_gradients,
                "Save gradients too (to resume inside a gradient-accumulation window); Megatron-LM, PyTorch DCP and "
                "DeepSpeed save none");
  sub->add_option("--restore-plan", command->request.restore_plan,
                  "Also restore under this plan, e.g. \"fsdp=16\" or \"tp=4\"");
  sub->add_option("--step-time", command->request.step_time,
                  "Step time, e.g. \"2.5 s\" (default: predicted, when the workload has a shape)");
  sub->add_option("--input-bandwidth", command->request.input_bandwidth,
                  "Aggregate read bandwidth of the training data, e.g. \"5 GB/s\"");
  sub->add_option("--decode-rate", command->request.decode_rate, "Samples per second one node's data loaders decode")
      ->check(positive_number());
  sub->add_option("--token-bytes", command->request.token_bytes,
                  "Bytes per stored token id (default 2 when the vocabulary fits uint16, else 4)")
      ->check(positive_number());
  sub->add_option("--step-cv", command->request.step_cv,
                  "Coefficient of variation of one GPU's step time, for stragglers")
      ->check(non_negative_number());
  sub->add_option("--slow-gpu-probability", command->request.slow_probability, "Chance that a GPU runs a step slowly")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--slow-gpu-factor", command->request.slow_factor, "How many times slower a slow GPU is")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  sub->add_flag("--json", command->request.json, "One JSON object instead of the text report");
  sub->add_flag("--explain", command->request.explain, "Show each figure's formula and inputs");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { emit(report::resilience_command(command->request), command->output); });
}

}  // namespace stepcast::cli
