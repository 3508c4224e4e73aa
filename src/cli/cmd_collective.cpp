// `stepcast collective`: the predicted cost of one collective, or of a sweep of sizes, on a
// topology, reported in nccl-tests' terms (time, algbw, busbw) with the formula terms on request.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "budget.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/report/collective_command.hpp"
#include "what_if_options.hpp"

namespace stepcast::cli {

void add_collective_command(CLI::App& app) {
  auto options = std::make_shared<CommandOptions<report::CollectiveRequest>>();
  auto budget = std::make_shared<Budget>();
  CLI::App* cmd = app.add_subcommand(
      "collective",
      "Predict the time of one collective (or a sweep of sizes) on a topology, in nccl-tests' terms:\n"
      "bytes sent per rank, latency steps, time, algbw and busbw, and the bottleneck tier.");
  cmd->add_option(
         "--op", options->request.op,
         "Collective: " + cost::accepted_collective_ops() + " (nccl-tests' all_reduce, alltoall, sendrecv also)")
      ->required();
  cmd->add_option(
      "--algorithm", options->request.algorithm,
      "Algorithm: " + cost::accepted_algorithms() +
          ", or auto (NCCL's choice), collnetdirect, collnetchain, nvls, nvlstree or pat. Default: ring where the "
          "collective has one, else "
          "direct. "
          "all-reduce: ring, tree, hierarchical; reduce-scatter, all-gather: ring, hierarchical; broadcast, "
          "reduce: ring, tree; all-to-all, send-recv: direct. auto prices every algorithm and protocol with "
          "NCCL's own tuning model (2.29: tree, ring x LL, LL128, Simple; collnetdirect, collnetchain, nvls, "
          "nvlstree, pat x Simple; CollNet where the topology's collnet block turns it on) and picks NCCL's choice");
  cmd->add_option("--protocol", options->request.protocol,
                  "NCCL protocol: " + cost::accepted_nccl_protocols() +
                      ", or auto (default with --algorithm auto). Prices the algorithm with NCCL's tuning model, as "
                      "NCCL_PROTO does; with ring, tree or nvls it fixes the algorithm as NCCL_ALGO does");
  cmd->add_option("--size", options->request.size, "nccl-tests' size S with a unit, e.g. \"14e9 B\", \"256 MiB\"");
  cmd->add_option("--sizes", options->request.sizes,
                  "A sweep MIN:MAX[:FACTOR] (factor 2 by default), e.g. \"1MiB:16GiB\"; prints a table");
  CLI::Option* ranks =
      cmd->add_option("--ranks", options->request.ranks, "Ranks taking part, GPUs 0..ranks-1 (default: every GPU)");
  cmd->add_option("--topology", options->request.topology, "Topology JSON file, e.g. topologies/flat-400gbps.json")
      ->required();
  CLI::Option* nodes =
      cmd->add_option("--nodes", options->request.nodes, "Override the node count of a cluster-form topology");
  cmd->add_flag("--json", options->request.json,
                "Print one JSON object (time_s, bytes_sent_per_rank, steps, algbw_GBps, busbw_GBps, ...)");
  cmd->add_flag("--explain", options->request.explain, "Show the formula terms and inputs behind every figure");
  add_topology_what_if_options(*cmd, options->request.gpus, options->request.gpus_per_domain, options->request.sets);
  cmd->add_option("-o,--output", options->output, "Write the output to FILE (atomically) instead of stdout");
  cmd->add_option("--calibration", options->request.calibration,
                  "Calibration file from `stepcast calibrate`: measured latencies and bandwidths per tier, and with "
                  "--algorithm auto or --protocol, NCCL's model corrected per protocol");
  cmd->add_option("--engine", options->request.engine,
                  "Cost engine: analytical, des (default analytical; des runs the collective as flows in the "
                  "discrete-event engine)");
  add_budget_options(*cmd, *budget);
  cmd->callback([options, ranks, nodes, budget] {
    options->request.approve_work = [budget](const planner::WorkEstimate& work) {
      check_budget(work, *budget, "simulating this collective on the event engine",
                   "use fewer --ranks or --nodes, fewer sizes, or --engine analytical");
    };
    options->request.ranks_given = ranks->count() > 0;
    options->request.nodes_given = nodes->count() > 0;
    emit(report::collective_command(options->request), options->output);
  });
}

}  // namespace stepcast::cli
