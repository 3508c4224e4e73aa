// The shared options of the measurement commands.
#include "measured_options.hpp"

#include <fmt/format.h>

#include "option_checks.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::cli {

void add_measured_options(CLI::App& command, MeasuredOptions& o, const std::string& verb,
                          const std::string& holdout_help) {
  command
      .add_option(
          "--measured", o.measured,
          "nccl-tests log, stepcast-nccl-bench, stepcast-kernel-bench or scripts/measure-eager-host JSON (repeatable)")
      ->required()
      ->expected(1, -1);
  command.add_option("--topology", o.topology, "Topology the measurements ran on, e.g. topologies/dgx-h100.json")
      ->required();
  command
      .add_option("--nodes", o.nodes,
                  "Nodes each measured run spanned, for logs without \"# Rank\" lines (a log that names "
                  "other hosts is refused), and the node count of a cluster-form topology (default: what "
                  "the runs need)")
      ->check(positive_number());
  command.add_option("--op", o.op,
                     "Collective of runs whose log names no nccl-tests program: " + cost::accepted_collective_ops() +
                         " (a log that names another is refused)");
  command
      .add_option("--ranks", o.ranks,
                  "Ranks of each run, for logs without \"# Rank\" lines (a log that lists "
                  "other ranks is refused)")
      ->check(positive_number());
  command
      .add_option("--gpus-per-node", o.gpus_per_node,
                  "Ranks per node of each run, for logs without \"# Rank\" lines (a log that places them "
                  "otherwise is refused)")
      ->check(positive_number());
  command.add_flag("--verbose", o.verbose, "List every line of the measured files that was skipped, and why");
  command.add_option("--algorithm", o.algorithm,
                     verb == "Fit" ? "Algorithm to fit with (default: each collective's default)"
                                   : "Algorithm to predict with: auto (NCCL's tuning model picks, as NCCL does and as "
                                     "predict prices collectives; the default), default (each collective's closed-form "
                                     "default, as calibrate fits) or one of stepcast's");
  command.add_option("--min-size", o.min_size, verb + " only sizes >= this, e.g. 1MiB");
  command.add_option("--max-size", o.max_size, verb + " only sizes <= this");
  command.add_option("--holdout", o.holdout, holdout_help);
}

}  // namespace stepcast::cli
