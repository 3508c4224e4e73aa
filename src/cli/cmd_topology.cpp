// `stepcast topology`: loads and validates a topology file and summarises it: the GPU model and
// its figures, nodes, GPUs, links per tier, and the per-tier figures a collective over all GPUs sees.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "commands.hpp"
#include "output.hpp"
#include "stepcast/report/topology_command.hpp"
#include "what_if_options.hpp"

namespace stepcast::cli {

void add_topology_command(CLI::App& app) {
  auto options = std::make_shared<CommandOptions<report::TopologyRequest>>();
  CLI::App* cmd = app.add_subcommand(
      "topology",
      "Load and validate a topology file (cluster or graph form) and summarise it: the GPU model and its\n"
      "figures, nodes, GPUs, links per tier, and the per-tier bandwidths and latencies a collective over\n"
      "all GPUs sees. A bad file gets one error naming the file, the JSON pointer and the rule (exit 2).");
  cmd->add_option("--topology", options->request.topology, "Topology JSON file, e.g. topologies/p4d-24xlarge.json")
      ->required();
  CLI::Option* nodes =
      cmd->add_option("--nodes", options->request.nodes, "Override the node count of a cluster-form topology");
  cmd->add_flag("--json", options->request.json, "Print one JSON object (SI units under suffixed keys)");
  add_topology_what_if_options(*cmd, options->request.gpus, options->request.gpus_per_domain, options->request.sets);
  cmd->add_option("-o,--output", options->output, "Write the output to FILE (atomically) instead of stdout");
  cmd->callback([options, nodes] {
    options->request.nodes_given = nodes->count() > 0;
    emit(report::topology_command(options->request), options->output);
  });
}

}  // namespace stepcast::cli
