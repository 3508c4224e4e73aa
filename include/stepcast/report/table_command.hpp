// `stepcast table`: capacity tables over workloads x clusters x GPU counts (the best plan found by
// search, or a plan family), with training days, GPU-hours and cost. The command line and the
// Python module both call table_command.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/planner/capacity.hpp"
#include "stepcast/report/command_output.hpp"
#include "stepcast/report/fine_tuning.hpp"
#include "stepcast/report/progress.hpp"

namespace stepcast::report {

struct TableRequest {
  std::vector<std::string> workloads;
  std::vector<std::string> topologies;
  std::vector<int> gpus;
  int global_batch = 0;
  int seq = 0;
  double tokens = 0.0;
  std::vector<double> prices;
  std::string plan;  ///< a plan family in compact form; empty: search every plan
  int threads = 0;   ///< 0: every core; the output does not depend on it
  int refine = 0;
  int max_mbs = 16;
  int max_cp = 1;
  std::string precision;
  std::string optimizer;  ///< --optimizer: every plan's (empty: adam)
  bool flash = false;
  bool no_flash = false;
  int doc_len = 0;                ///< --doc-len: every plan packs documents of this many tokens (0: none)
  FineTuningOptions fine_tuning;  ///< --peft, --lora-rank, --lora-targets: every plan's fine-tuning
  std::string format = "text";
  std::string calibration;
  std::vector<std::string> sets;
  int gpus_per_domain = 0;  ///< --gpus-per-domain: GPUs used of each scale-up domain (0: all)
  std::string memory_margin;
  /// Approves the cells' searches, counted largest cells first; none: whatever they cost.
  WorkApproval approve_work;
};

/// Runs the sweep's cells somewhere other than this process alone (the cli deals them over MPI
/// ranks), advancing `progress` per cell; nothing on a process that writes no output.
using SharedSweep = std::function<std::optional<std::vector<planner::CapacityCell>>(
    const planner::CapacityRequest& request, Progress& progress)>;

/// The capacity report in the request's format. Without `shared_sweep` every cell runs here on
/// `threads` threads; a process whose shared_sweep returns nothing gets empty output. Bad input
/// throws InputError.
CommandOutput table_command(const TableRequest& request, const SharedSweep& shared_sweep = {});

}  // namespace stepcast::report
