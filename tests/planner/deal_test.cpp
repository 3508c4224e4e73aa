// Dealing units to ranks by predicted cost (longest processing time first); every expected
// assignment below is worked by hand from the rule in deal.hpp.
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/planner/deal.hpp"

namespace deal_test {

using namespace stepcast;

namespace {

std::vector<double> loads(const std::vector<double>& costs, const std::vector<int>& worker_of, int workers) {
  std::vector<double> load(static_cast<std::size_t>(workers), 0.0);
  for (std::size_t i = 0; i < costs.size(); ++i) load[static_cast<std::size_t>(worker_of[i])] += costs[i];
  return load;
}

}  // namespace

TEST_CASE("deal_by_cost gives the costliest unit its own worker instead of dealing round-robin") {
  // Round-robin would put units 0 and 2 on worker 0 (101 vs 2); LPT: 100 -> w0, then each 1 to
  // the lighter w1 (1, 2, 3).
  const std::vector<double> costs = {100.0, 1.0, 1.0, 1.0};
  CHECK(planner::deal_by_cost(costs, 2) == std::vector<int>{0, 1, 1, 1});
}

TEST_CASE("deal_by_cost balances a hand-worked case exactly") {
  // Sorted: 7(u0) 5(u1) 4(u2) 3(u3) 3(u4) 2(u5). Loads: w0=7; w1=5; u2->w1=9; u3->w0=10;
  // u4->w1=12; u5->w0=12. Both 12 = 24/2, the optimum.
  const std::vector<double> costs = {7.0, 5.0, 4.0, 3.0, 3.0, 2.0};
  const std::vector<int> got = planner::deal_by_cost(costs, 2);
  CHECK(got == std::vector<int>{0, 1, 1, 0, 1, 0});
  CHECK(loads(costs, got, 2) == std::vector<double>{12.0, 12.0});
}

TEST_CASE("deal_by_cost meets Graham's 4/3 - 1/(3m) bound on his tight example") {
  // Graham (1969): on m = 2 workers, costs 3,3,2,2,2 give LPT 7 (3+2+2) against the optimum 6
  // (3+3 | 2+2+2): 7/6 = 4/3 - 1/6, the bound reached.
  const std::vector<double> costs = {3.0, 3.0, 2.0, 2.0, 2.0};
  const std::vector<int> got = planner::deal_by_cost(costs, 2);
  CHECK(got == std::vector<int>{0, 1, 0, 1, 0});
  CHECK(loads(costs, got, 2) == std::vector<double>{7.0, 5.0});
}

TEST_CASE("deal_by_cost breaks ties by unit index and lowest worker, so every rank agrees") {
  CHECK(planner::deal_by_cost({1.0, 1.0, 1.0, 1.0}, 2) == std::vector<int>{0, 1, 0, 1});
  CHECK(planner::deal_by_cost({1.0, 1.0, 1.0}, 1) == std::vector<int>{0, 0, 0});
  CHECK(planner::deal_by_cost({}, 3).empty());
  // More workers than units: each unit alone, the rest idle.
  CHECK(planner::deal_by_cost({2.0, 5.0}, 4) == std::vector<int>{1, 0});
}

TEST_CASE("deal_by_cost refuses a cost that is not a finite non-negative number") {
  CHECK_THROWS_AS(planner::deal_by_cost({1.0, -1.0}, 2), InternalError);
  CHECK_THROWS_AS(planner::deal_by_cost({1.0}, 0), InternalError);
}

}  // namespace deal_test
