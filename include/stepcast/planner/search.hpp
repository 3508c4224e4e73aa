// Plan search: every candidate of a search space checked against the plan rules and the memory
// model, the rest ranked by predicted step time; evaluated in parallel, reduced in id order.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/planner/candidates.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::planner {

/// The figures of one valid plan that reports show (no explanations: they stay with `predict`).
struct PlanMetrics {
  Seconds step_time;
  Seconds compute;
  Seconds bubble;
  Seconds exposed_communication;
  Seconds optimizer;
  double tokens_per_s = 0.0;
  double mfu = 0.0;              ///< model FLOPs utilisation, 0..1
  cost::MemoryBreakdown memory;  ///< explanation left empty
  Bytes gpu_memory;              ///< the capacity it was checked against
  bool fits = false;
};

/// What became of one candidate.
struct Evaluation {
  enum class Outcome { kInvalid, kDoesNotFit, kFits };
  Outcome outcome = Outcome::kInvalid;
  /// For kInvalid: the first rule broken, with its numbers; for kDoesNotFit: the memory shortfall
  /// (plan::Rule::kFitsGpuMemory).
  plan::Verdict verdict;
  /// Filled for kDoesNotFit (memory only) and kFits (everything).
  PlanMetrics metrics;
  /// Layers the candidate offloads in the plan evaluated in its place: the fewest that fit
  /// (evaluate_candidate); 0: the candidate itself was evaluated.
  int offloaded = 0;

  /// The plan these figures are of: `candidate`, with the layers it offloads.
  [[nodiscard]] plan::Plan plan_of(const plan::Plan& candidate) const {
    plan::Plan p = candidate;
    if (offloaded > 0) p.offload_layers = offloaded;
    return p;
  }
};

/// Options of a search beyond the space itself.
struct SearchOptions {
  /// Memory options and achieved compute fraction for the predictor; `explain` is ignored
  /// (the search never formats explanations).
  graph::StepOptions step;
  /// Worker threads; 0 = std::thread::hardware_concurrency(). The result does not depend on it.
  int threads = 0;
  /// Called from worker threads with the number of candidates just finished (for a progress line).
  std::function<void(std::size_t)> on_progress;
};

/// Checks one plan, in this order: tp inside a node (when the space asks), plan::problems,
/// memory against the topology's GPU, then predicts its step. `plan` must be resolved.
Evaluation evaluate_plan(const workload::Workload& workload, const topology::Topology& topology, const plan::Plan& plan,
                         const SearchSpace& space, const graph::StepOptions& step_options);

/// A searched candidate: evaluate_plan, and where it does not fit but could offload activations
/// (one stage, no recompute, nothing offloaded yet, a topology with a host link), the same plan
/// with the fewest offloaded layers that fit (offload-layers=, Megatron-Core's cpu_offloading)
/// in its place (`offloaded`, plan_of).
Evaluation evaluate_candidate(const workload::Workload& workload, const topology::Topology& topology,
                              const plan::Plan& plan, const SearchSpace& space, const graph::StepOptions& step_options);

/// A fitting plan with its candidate id.
struct RankedPlan {
  std::size_t id = 0;
  plan::Plan plan;
  PlanMetrics metrics;
  /// The discrete-event engine's step time, for plans refined by refine_top.
  std::optional<Seconds> simulated_step_time;
  /// Other spellings of this plan that the model prices identically, merged into it
  /// (merge_equivalent_plans).
  std::vector<plan::Plan> equivalents;
};

/// Candidates rejected for one rule, counted together whatever their numbers; `example` is the
/// verdict of the lowest candidate id.
struct Rejection {
  plan::Rule rule = plan::Rule::kDpDerivable;
  std::size_t count = 0;
  plan::Verdict example;
};

struct SearchResult {
  std::size_t candidates = 0;
  std::size_t invalid = 0;      ///< broke a plan rule (counted under its first rule)
  std::size_t not_fitting = 0;  ///< valid, but over the GPU's memory
  /// Every distinct fitting plan, fastest first; equal step times in candidate-id order. Spellings
  /// of one plan are merged into its first (plan_dedup.hpp).
  std::vector<RankedPlan> ranked;
  std::size_t merged = 0;  ///< fitting candidates merged into another's row as a spelling of it
  /// Rules by count (largest first), then by their summary text; plan::Rule::kFitsGpuMemory included.
  std::vector<Rejection> rejections;
  /// When nothing fits: the valid plan that needs the least memory (ties by id), for reports.
  std::optional<RankedPlan> least_memory;
};

/// Enumerates the space and evaluates every candidate. Throws InputError when the workload has
/// no shape (a bare parameter count has no layers to split).
SearchResult search(const workload::Workload& workload, const topology::Topology& topology, const SearchSpace& space,
                    const SearchOptions& options = {});

}  // namespace stepcast::planner
