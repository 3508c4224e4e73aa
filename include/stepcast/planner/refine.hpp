// Refinement of the top plans of a search with the discrete-event engine: the analytical model
// ranks thousands of plans, the engine re-times the best few with contention and schedules.
#pragma once

#include <cstddef>
#include <functional>

#include "stepcast/planner/search.hpp"

namespace stepcast::planner {

/// Simulates one step of the first `k` ranked plans (graph::plan_step_graph + sim::simulate_step) and
/// re-orders those k by simulated step time (ties by candidate id); the rest keep their order.
/// Each refined plan gets `simulated_step_time`. `threads` as in SearchOptions.
/// `on_plan`, if set, is called from the worker threads after each simulated plan (a progress line).
void refine_top(SearchResult& result, const workload::Workload& workload, const topology::Topology& topology,
                std::size_t k, const graph::StepOptions& step_options, int threads = 0,
                const std::function<void()>& on_plan = {});

/// The event engine's step time of one plan, as refine_top computes it for each of its k.
Seconds simulated_step_time(const workload::Workload& workload, const topology::Topology& topology,
                            const plan::Plan& plan, const graph::StepOptions& step_options);

/// Re-orders the first min(k, ranked) plans by simulated_step_time (which each must have), ties
/// by candidate id: refine_top's last step, for step times computed elsewhere.
void rank_by_simulation(SearchResult& result, std::size_t k);

}  // namespace stepcast::planner
