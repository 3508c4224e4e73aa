// The analytical engine's view of a step graph's communication: every node priced by the one
// collective model on its group (NICs shared with the groups beside it), its calls counted from
// its placement, and the part the compute leaves exposed in closed form, one rule per anchor.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::graph {

/// Calls of one size.
struct CallGroup {
  std::int64_t count = 0;
  Bytes size;  ///< nccl-tests' S of each
};

/// A node's collective calls as NCCL is asked for them, grouped by size: whole buckets and a
/// smaller last one, or the layers' units and the first carrying the parameters outside them.
struct Calls {
  std::vector<CallGroup> groups;  ///< in the order first added; one per size, none empty

  void add(std::int64_t count, Bytes size) {
    if (count <= 0) return;
    for (CallGroup& g : groups) {
      if (g.size.value() == size.value()) {
        g.count += count;
        return;
      }
    }
    groups.push_back({count, size});
  }
  void add(const Calls& other) {
    for (const CallGroup& g : other.groups) add(g.count, g.size);
  }
  [[nodiscard]] std::int64_t count() const {
    std::int64_t n = 0;
    for (const CallGroup& g : groups) n += g.count;
    return n;
  }
};

/// One communication node as the analytical engine evaluates it.
struct CommTerm {
  std::string name;
  std::string role;  ///< its group's kind (GroupSpec::role)
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  std::string model;  ///< what priced a full-size call: NCCL's pick ("ring/Simple") or a closed form
  int ranks = 1;
  int stride = 1;   ///< GPU index distance between consecutive ranks of the group
  Bytes size;       ///< nccl-tests' S of one full-size call
  Calls calls;      ///< per step, by size
  Seconds time;     ///< all calls, as if nothing overlapped
  Seconds exposed;  ///< the part that adds to the step time
  /// Its full-size calls lie outside the range the calibration was fitted on (an extrapolation).
  bool outside_calibration = false;
  int blocks = 0;  ///< NCCL's thread blocks (SMs) a full-size call holds while it runs
};

/// Collectives priced for one topology and calibration, remembered by group shape, collective
/// and size: the planner prices the same collectives for thousands of plans. The answers are the
/// same with or without it. Not thread-safe: one per thread.
class PriceCache {
 public:
  struct Priced {
    Seconds time;
    std::string model;
    bool outside_calibration = false;
    int blocks = 0;
  };
  using GroupKey = std::tuple<int, int, int, int>;  // ranks, stride, concurrent groups, their offset
  /// Read once; the inner none: a GPU NCCL's model does not know.
  std::optional<std::optional<cost::NcclHardware>> hardware;
  std::map<GroupKey, cost::CollectiveGroup> groups;
  std::map<std::tuple<GroupKey, int, double>, Priced> prices;  // group, collective, size in bytes
};

/// How the analytical engine prices the graph's collectives.
struct Pricing {
  const topology::Topology* topology = nullptr;
  cost::CollectiveModel model;
  PriceCache* cache = nullptr;  ///< not owned; may be null (then one for this evaluation)
  bool explain = true;
};

/// What one micro-batch's passes through a stage wait for the calls inside its layers, and how
/// much longer their compute runs beside the part of those calls it hides (the calls' SM share of
/// that part: slow_compute_beside_calls).
struct LayerWaits {
  Seconds forward;
  Seconds backward;
  Seconds slowed_forward;
  Seconds slowed_backward;
};

/// The graph's communication, evaluated.
struct AnalyticalComm {
  std::vector<CommTerm> terms;  ///< one per node, in node order
  Seconds exposed;              ///< sum of the terms' exposed time
  /// The exposed time of calls inside the layers (slice and layer-start anchors): it lengthens
  /// every micro-batch's slot, which the pipeline bubble scales with.
  Seconds in_layers;
  /// Per term: the part of its time in the forward passes (the rest runs in the backward).
  std::vector<double> forward_share;
  /// Ring exchanges beside the attention, step by step, for --explain (empty without).
  Explanation ring_steps;
};

AnalyticalComm evaluate_communication(const StepGraph& graph, const Pricing& pricing);

/// Per stage: each term inside the layers, whose calls are the busiest stage's, exposed (and its
/// hidden part slowing the compute on a GPU of `sm_count` SMs) in proportion to the stage's calls
/// and shared between the passes as its time is.
std::vector<LayerWaits> stage_layer_waits(const AnalyticalComm& comm, const StepGraph& graph, int sm_count);

/// The terms inside the layers as `stage` waits for them, when its micro-batches rather than the
/// busiest stage's set the step: exposed in proportion to its calls, times `exposed_part` (the
/// part of them no other wait of the step hides); `exposed` and `in_layers` follow.
void pace_layer_calls(AnalyticalComm& comm, const StepGraph& graph, int stage, double exposed_part);

/// The compute time the collectives beside it take: while a call runs, the compute beside it has
/// the SMs the call leaves, so over the part of the calls the compute hides (their time less their
/// exposed part) it loses the calls' SM share of that time. The parameter gathers beside the first
/// forward are exposed that much less (the slowed pass hides more of them).
/// Sends between stages are left out (a peer's few channels).
Seconds slow_compute_beside_calls(AnalyticalComm& comm, const StepGraph& graph, int sm_count);

}  // namespace stepcast::graph
