// Mean and nearest-rank percentiles of a step time over seeds.
#include "stepcast/report/seed_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "stepcast/core/errors.hpp"

namespace stepcast::report {

namespace {

// The nearest-rank percentile (the ceil(q N)-th smallest value, 1-based): always one of the samples.
Seconds nearest_rank(const std::vector<Seconds>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

}  // namespace

SeedSummary summarize_seeds(std::uint64_t first_seed, std::vector<Seconds> step_times) {
  if (step_times.empty()) throw InternalError("a seed summary needs at least one step time");
  SeedSummary s;
  s.first_seed = first_seed;
  std::vector<Seconds> sorted = step_times;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  for (Seconds t : step_times) sum += t.value();
  s.mean = Seconds(sum / static_cast<double>(step_times.size()));
  s.p50 = nearest_rank(sorted, 0.5);
  s.p90 = nearest_rank(sorted, 0.9);
  s.max = sorted.back();
  s.step_times = std::move(step_times);
  return s;
}

}  // namespace stepcast::report
