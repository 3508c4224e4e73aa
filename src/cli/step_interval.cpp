// The --interval-runs option of predict and simulate.
#include "step_interval.hpp"

namespace stepcast::cli {

void add_interval_options(CLI::App& command, IntervalOptions& o) {
  command
      .add_option("--interval-runs", o.runs,
                  "Measured runs files whose errors give the step time's 90% interval (default: the four shipped "
                  "development sources, each predicted by the defaults fitted without it); the runs of the plan's GPU "
                  "generation and plan family are used")
      ->expected(1, -1);
}

}  // namespace stepcast::cli
