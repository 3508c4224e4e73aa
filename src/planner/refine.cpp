// Re-timing the best plans on the event engine, one plan per thread, results stored by rank.
#include "stepcast/planner/refine.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "stepcast/core/errors.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::planner {

Seconds simulated_step_time(const workload::Workload& workload, const topology::Topology& topology,
                            const plan::Plan& plan, const graph::StepOptions& step_options) {
  graph::StepOptions options = step_options;
  options.explain = false;
  options.memory.explain = false;
  sim::SimOptions sim_options;
  sim_options.model.calibration = options.calibration;
  return sim::simulate_step(topology, graph::plan_step_graph(workload, plan, topology, options), sim_options).step_time;
}

void rank_by_simulation(SearchResult& result, std::size_t k) {
  const std::size_t n = std::min(k, result.ranked.size());
  for (std::size_t i = 0; i < n; ++i)
    STEPCAST_ASSERT(result.ranked[i].simulated_step_time, "every refined plan has a simulated step time");
  std::stable_sort(result.ranked.begin(), result.ranked.begin() + static_cast<std::ptrdiff_t>(n),
                   [](const RankedPlan& a, const RankedPlan& b) {
                     if (*a.simulated_step_time != *b.simulated_step_time)
                       return *a.simulated_step_time < *b.simulated_step_time;
                     return a.id < b.id;
                   });
}

void refine_top(SearchResult& result, const workload::Workload& workload, const topology::Topology& topology,
                std::size_t k, const graph::StepOptions& step_options, int threads,
                const std::function<void()>& on_plan) {
  const std::size_t n = std::min(k, result.ranked.size());
  if (n == 0) return;
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        RankedPlan& r = result.ranked[i];
        r.simulated_step_time = simulated_step_time(workload, topology, r.plan, step_options);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (on_plan) on_plan();
    }
  };
  {
    const int wanted = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::jthread> pool;
    for (int t = 1; t < std::min<int>(wanted, static_cast<int>(n)); ++t) pool.emplace_back(worker);
    worker();
  }
  // The error of the best-ranked plan surfaces, whatever thread met it first.
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  rank_by_simulation(result, n);
}

}  // namespace stepcast::planner
