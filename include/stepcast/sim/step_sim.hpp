// The discrete-event engine's evaluation of a step graph (graph/step_graph.hpp): each simulated
// rank's compute stream runs its stage's tasks in the order of the pipeline schedule, layer by
// layer and slice by slice, its calls placed as their anchors say; each stage's data-parallel
// stream runs its collectives in issue order; sends, collectives and buckets are flows on the
// network, so they contend where they share links. One simulated rank per stage stands for its
// tensor-parallel peers and data-parallel replicas, which the plan makes symmetric; with per-step
// noise every replica's stages run, and a collective starts when every rank of its groups has
// reached it. Nothing here reads the analytical engine's figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim {

/// Per-GPU slowdown and noise.
struct Perturbation {
  std::optional<int> slow_gpu;   ///< this GPU's compute runs `slowdown` times longer
  std::optional<int> slow_node;  ///< every GPU of this node does
  double slowdown = 1.0;
  double noise_cv = 0.0;  ///< per-task coefficient of variation of compute time
  /// Per-GPU, per-step coefficient of variation: each GPU draws one factor ~ Normal(1, step_cv)
  /// that stretches all its compute in the step. Above 0, every data-parallel replica is
  /// simulated, so the collectives wait for the slowest rank of their groups.
  double step_cv = 0.0;
  std::uint64_t seed = 1;
};

/// How the simulation runs.
struct SimOptions {
  /// How each collective is priced before it becomes flows (NCCL's pick, calibration).
  cost::CollectiveModel model;
  Perturbation perturbation;
  bool record_trace = false;
  /// false: every call and send takes the collective model's time for its group beside the groups
  /// of its kind (the analytical engine's price), on links of its own; the engines then differ only
  /// in how the schedule overlaps the calls with the compute (`scripts/compare-engines`).
  bool contention = true;
};

/// One interval of a track, for the trace.
struct TraceSpan {
  int track = 0;  ///< index into StepResult::tracks
  double start_s = 0.0;
  double end_s = 0.0;
  std::string name;
};

struct StepBreakdown {
  Seconds compute;  ///< compute tasks of the critical rank
  Seconds bubble;   ///< its compute stream idle (pipeline, sends) before its last task ends
  /// Its compute stream waiting on calls inside its layers (slice and layer-start anchors) and on
  /// its stage stream's gathers, by the role of their group ("tensor", "shard group", ...).
  std::map<std::string, Seconds> waits;
  /// The same waits by node of the step graph (index into StepGraph::comm).
  std::vector<Seconds> node_waits;
  Seconds dp_exposed;      ///< its stage stream's work after its last task
  Seconds optimizer;       ///< optimizer plus the updated parameters' gathers after it
  Seconds straggler_wait;  ///< step time minus the same step without slowdown or noise
  [[nodiscard]] Seconds wait(const std::string& role) const {
    const auto it = waits.find(role);
    return it == waits.end() ? Seconds(0.0) : it->second;
  }
};

struct StepResult {
  Seconds step_time;
  StepBreakdown breakdown;
  int critical_stage = 0;
  std::vector<std::string> critical_path;  ///< the critical stage's tasks, in order, abridged
  std::vector<double> tier_utilization;    ///< indexed by LinkTier: bytes / (capacity x step)
  std::vector<std::string> tracks;
  std::vector<TraceSpan> spans;
  std::uint64_t events = 0;
  int simulated_ranks = 0;            ///< one per stage, times the replicas under step noise
  std::vector<Seconds> rank_compute;  ///< compute of each simulated rank, index replica * pp + stage
};

/// Runs one step of `graph` on `topo`. With a perturbation, also runs the unperturbed step to
/// measure the wait on stragglers. A simulated rank runs at the pace of the slowest GPU it stands
/// for (its tensor-parallel peers wait for it inside every layer). Preconditions: the layout's GPUs
/// fit the topology; under interleaving the micro-batches are a multiple of pp.
StepResult simulate_step(const topology::Topology& topo, const graph::StepGraph& graph, const SimOptions& options = {});

}  // namespace stepcast::sim
