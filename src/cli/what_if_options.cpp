// Declaring the what-if options; their meaning lives in report/plan_inputs.hpp (the topology
// request), topology/overrides.hpp and cost/memory_margin.hpp.
#include "what_if_options.hpp"

#include "option_checks.hpp"

namespace stepcast::cli {

void add_topology_what_if_options(CLI::App& command, int& gpus, std::vector<std::string>& sets) {
  command
      .add_option("--gpus", gpus,
                  "GPUs the plan runs on: whole nodes (the node count follows) or fewer than one node holds "
                  "(2 or 4 of an 8-GPU node)")
      ->check(positive_number());
  command
      .add_option("--set", sets,
                  "Change a topology figure without editing the file, e.g. --set nics.bandwidth=\"200 Gbps\" "
                  "(repeatable; checked as the file's own)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_what_if_options(CLI::App& command, int& gpus, std::vector<std::string>& sets, std::string& memory_margin) {
  add_topology_what_if_options(command, gpus, sets);
  command.add_option(
      "--memory-margin", memory_margin,
      "Keep this much of each GPU's memory free, e.g. \"5%\" or \"2 GiB\": plans within it count as not fitting");
}

}  // namespace stepcast::cli
