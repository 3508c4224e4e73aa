// The shared options of plan-based commands.
#include "plan_options.hpp"

#include <fmt/format.h>

#include "option_checks.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "what_if_options.hpp"

namespace stepcast::cli {

void add_plan_options(CLI::App& command, PlanOptions& o, bool need_topology, bool checks_memory) {
  command.add_option("--workload", o.workload, "Workload JSON (workloads/*.json) or a Hugging Face config.json")
      ->required();
  auto* topo = command.add_option("--topology", o.topology, "Topology JSON (topologies/*.json)");
  if (need_topology) topo->required();
  command.add_option("--nodes", o.nodes, "Nodes of the topology to use (cluster-form files)")->check(positive_number());
  command.add_option("--plan", o.plan,
                     "Plan in compact form, e.g. \"dp=8,tp=2,pp=4,zero=1,mbs=1,recompute=selective\" or \"fsdp=8\", "
                     "or a plan JSON file; degrees left out are derived from the GPU count");
  command.add_option("--global-batch", o.global_batch, "Sequences per optimizer step (overrides gbs=)")
      ->check(positive_number());
  command.add_option("--seq", o.seq, "Tokens per sequence (overrides seq= and the workload's)")
      ->check(positive_number());
  command.add_option("--precision", o.precision, "fp32, tf32, bf16, fp16, fp8, mxfp8 or nvfp4 (overrides precision=)");
  command.add_option("--optimizer", o.optimizer, "adam, adamw, sgd-momentum, sgd or muon (overrides optimizer=)");
  command.add_option("--overhead", o.overhead, "Framework/CUDA-context memory per GPU, e.g. \"1 GiB\" (default 1 GiB)");
  command.add_option(
      "--calibration", o.calibration,
      "Calibration file from `stepcast calibrate`: measured tier latencies/bandwidths, compute fractions");
  if (checks_memory) {
    add_what_if_options(command, o.gpus, o.gpus_per_domain, o.sets, o.memory_margin);
  } else {
    add_topology_what_if_options(command, o.gpus, o.gpus_per_domain, o.sets);
  }
}

}  // namespace stepcast::cli
