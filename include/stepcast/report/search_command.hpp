// `stepcast search`: every valid plan of a model on a cluster, pruned by GPU memory, ranked by
// predicted step time, the best few re-timed on the event engine. The command line and the Python
// module both call search_command.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "stepcast/graph/predict.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/report/command_output.hpp"
#include "stepcast/report/fine_tuning.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

// The analytical ranking's top few, re-timed on the event engine unless refine = 0: the engine
// sees contention and schedules the closed form does not, and 5 plans take seconds, not minutes.
inline constexpr int kDefaultSearchRefine = 5;

struct SearchRequest {
  std::string workload;
  std::string topology;
  int nodes = 0;
  int global_batch = 0;
  int seq = 0;
  int top = 10;
  int refine = kDefaultSearchRefine;
  int threads = 0;  ///< 0: every core; the output does not depend on it
  int max_mbs = 16;
  int max_cp = 1;
  std::string precision;
  std::string optimizer;  ///< --optimizer: every plan's (empty: adam)
  bool flash = false;
  bool no_flash = false;
  int doc_len = 0;                ///< --doc-len: every plan packs documents of this many tokens (0: none)
  FineTuningOptions fine_tuning;  ///< --peft, --lora-rank, --lora-targets: every plan's fine-tuning
  bool json = false;
  std::string format = "text";
  /// Text with every column; without it the text fits 120 columns.
  bool wide = false;
  std::string calibration;
  int gpus = 0;
  int gpus_per_domain = 0;  ///< --gpus-per-domain: GPUs used of each scale-up domain (0: all)
  std::vector<std::string> sets;
  std::string memory_margin;
  /// --compare (repeatable): plans (compact form) to set beside the best, each with its rank, or
  /// why it was left out, and the step-time terms it loses (or wins) by.
  std::vector<std::string> compare;
  /// Approves the search's candidates, then the refinement's simulations; none: whatever they cost.
  WorkApproval approve_work;
};

/// Re-times the best `k` plans of `result` on the event engine somewhere other than this process
/// alone (the cli deals them over MPI ranks) and re-ranks them; false on a process that writes no
/// output.
using SharedRefine =
    std::function<bool(planner::SearchResult& result, const workload::Workload& workload,
                       const topology::Topology& topology, std::size_t k, const graph::StepOptions& step)>;

/// The search report in the request's format (--json wins over --format). Without `shared_refine`
/// the best `refine` plans are simulated here on `threads` threads; a process whose shared_refine
/// returns false gets empty output. Bad input throws InputError.
CommandOutput search_command(const SearchRequest& request, const SharedRefine& shared_refine = {});

}  // namespace stepcast::report
