// Declaring the what-if options; their meaning lives in report/plan_inputs.hpp (the topology
// request), topology/overrides.hpp and cost/memory_margin.hpp.
#include "what_if_options.hpp"

#include "option_checks.hpp"

namespace stepcast::cli {

void add_topology_what_if_options(CLI::App& command, int& gpus, int& gpus_per_domain, std::vector<std::string>& sets) {
  command
      .add_option("--gpus", gpus,
                  "GPUs the plan runs on: whole nodes (the node count follows) or fewer than one node holds "
                  "(2 or 4 of an 8-GPU node); with --gpus-per-domain, a multiple of it")
      ->check(positive_number());
  command
      .add_option("--gpus-per-domain", gpus_per_domain,
                  "GPUs the plan uses of each scale-up (NVLink) domain, whole trays with their NICs, e.g. 64 of an "
                  "NVL72 rack's 72 (--gpus 256 --gpus-per-domain 64: 4 racks of 64)")
      ->check(positive_number());
  command
      .add_option("--set", sets,
                  "Change a topology figure without editing the file, e.g. --set nics.bandwidth=\"200 Gbps\" "
                  "(repeatable; checked as the file's own)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_what_if_options(CLI::App& command, int& gpus, int& gpus_per_domain, std::vector<std::string>& sets,
                         std::string& memory_margin) {
  add_topology_what_if_options(command, gpus, gpus_per_domain, sets);
  command.add_option(
      "--memory-margin", memory_margin,
      "Keep this much of each GPU's memory free, e.g. \"5%\" or \"2 GiB\": plans within it count as not fitting");
}

}  // namespace stepcast::cli
