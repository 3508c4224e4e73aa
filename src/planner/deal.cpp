// Longest processing time first: sort once, then a linear scan for the least-loaded worker
// (worker counts are small: the ranks of one job).
#include "stepcast/planner/deal.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stepcast/core/errors.hpp"

namespace stepcast::planner {

std::vector<int> deal_by_cost(const std::vector<double>& costs, int workers) {
  STEPCAST_ASSERT(workers >= 1, "dealing needs at least one worker");
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (const double c : costs) STEPCAST_ASSERT(std::isfinite(c) && c >= 0.0, "unit costs are finite and non-negative");
  std::stable_sort(order.begin(), order.end(), [&costs](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(workers), 0.0);
  std::vector<int> worker_of(costs.size(), 0);
  for (const std::size_t unit : order) {
    const auto least = std::min_element(load.begin(), load.end());  // the first of equal loads
    *least += costs[unit];
    worker_of[unit] = static_cast<int>(least - load.begin());
  }
  return worker_of;
}

}  // namespace stepcast::planner
