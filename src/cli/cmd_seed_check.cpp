// `stepcast seed-check`, also the default report: the worked communication check of the seed
// document (7B model, fp16 gradients, ring all-reduce on 400 Gbps links, 8-way FSDP memory),
// computed by the cost model, then the same all-reduce on p4d nodes that share their NICs.
#include <string>

#include "commands.hpp"
#include "output.hpp"
#include "stepcast/report/seed_check_command.hpp"

namespace stepcast::cli {

void add_seed_check_command(CLI::App& app) {
  auto options = std::make_shared<CommandOptions<report::SeedCheckRequest>>();
  CLI::App* cmd = app.add_subcommand(
      "seed-check", "The seed's worked check: 7B fp16 gradient all-reduce on 400 Gbps, 8-way FSDP memory, p4d nodes");
  cmd->add_option("--workload", options->request.workload, "Model (7e9 parameters in the seed)")->capture_default_str();
  cmd->add_option("--topology", options->request.flat, "The flat machine, one GPU per 400 Gbps link")
      ->capture_default_str();
  cmd->add_option("--cluster", options->request.cluster, "The multi-GPU node type for the second table")
      ->capture_default_str();
  cmd->add_flag("--json", options->request.json, "Print one JSON object instead of text");
  cmd->add_option("-o,--output", options->output, "Write to FILE (atomically) instead of stdout");
  cmd->callback([options] { emit(report::seed_check_command(options->request), options->output); });
}

void run_default_report() { emit(report::seed_check_command({}), {}); }

}  // namespace stepcast::cli
