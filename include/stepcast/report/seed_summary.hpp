// The spread of a simulated step time over random seeds (`simulate --seeds N`): with per-task or
// per-step noise each seed draws other slow GPUs, so one seed's step is one sample of many.
#pragma once

#include <cstdint>
#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::report {

struct SeedSummary {
  std::uint64_t first_seed = 1;
  std::vector<Seconds> step_times;  ///< one per seed, first_seed first
  Seconds mean;
  Seconds p50;  ///< nearest-rank percentiles: the ceil(q N)-th smallest
  Seconds p90;
  Seconds max;
};

/// The summary of `step_times` (at least one), simulated with seeds first_seed, first_seed + 1, ...
SeedSummary summarize_seeds(std::uint64_t first_seed, std::vector<Seconds> step_times);

}  // namespace stepcast::report
