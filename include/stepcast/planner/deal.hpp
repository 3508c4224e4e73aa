// Dealing independent units of work (table cells, plans to simulate, validation runs) to a
// number of workers by their predicted cost, so that the slowest worker finishes early.
#pragma once

#include <cstddef>
#include <vector>

namespace stepcast::planner {

/// The worker of each unit, by the longest-processing-time-first rule (Graham, "Bounds on
/// multiprocessing timing anomalies", SIAM J. Appl. Math. 17(2), 1969): units in decreasing
/// cost (ties by index), each to the least-loaded worker so far (ties by lowest worker). The
/// busiest worker's load is at most 4/3 - 1/(3 workers) of the optimum. Deterministic: the same
/// costs and worker count give the same assignment on every rank. Preconditions: workers >= 1,
/// costs finite and >= 0.
std::vector<int> deal_by_cost(const std::vector<double>& costs, int workers);

}  // namespace stepcast::planner
