// Job MTBF from per-node, per-GPU or spot rates; Young's and Daly's checkpoint intervals; and the
// expected goodput of an interval under Daly's complete model of exponential failures.
#include "stepcast/cost/failure.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

Seconds job_mtbf_from_node_mtbf(Seconds node_mtbf, int nodes) {
  STEPCAST_ASSERT(node_mtbf.value() > 0.0 && nodes >= 1, "node MTBF > 0 and at least one node");
  return node_mtbf / static_cast<double>(nodes);
}

Seconds job_mtbf_from_gpu_rate(double failures_per_gpu_hour, int gpus) {
  STEPCAST_ASSERT(failures_per_gpu_hour > 0.0 && gpus >= 1, "failure rate > 0 and at least one GPU");
  return Seconds(unit::kSecondsPerHour / (failures_per_gpu_hour * static_cast<double>(gpus)));
}

Seconds job_mtbf_from_spot_rate(double interruptions_per_node_hour, int nodes) {
  STEPCAST_ASSERT(interruptions_per_node_hour > 0.0 && nodes >= 1, "interruption rate > 0 and at least one node");
  return Seconds(unit::kSecondsPerHour / (interruptions_per_node_hour * static_cast<double>(nodes)));
}

Seconds young_interval(Seconds checkpoint_stall, Seconds mtbf) {
  STEPCAST_ASSERT(checkpoint_stall.value() > 0.0 && mtbf.value() > 0.0, "stall and MTBF must be positive");
  // Young (1974): tau = sqrt(2 delta M).
  return Seconds(std::sqrt(2.0 * checkpoint_stall.value() * mtbf.value()));
}

Seconds daly_interval(Seconds checkpoint_stall, Seconds mtbf) {
  STEPCAST_ASSERT(checkpoint_stall.value() > 0.0 && mtbf.value() > 0.0, "stall and MTBF must be positive");
  const double delta = checkpoint_stall.value();
  const double m = mtbf.value();
  // Daly (2006): beyond delta = 2M the perturbation series no longer converges and the optimum is M.
  if (delta >= 2.0 * m) return mtbf;
  const double x = delta / (2.0 * m);
  return Seconds(std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta);
}

GoodputBreakdown expected_goodput(Seconds interval, Seconds checkpoint_stall, Seconds restart, Seconds mtbf) {
  STEPCAST_ASSERT(interval.value() > 0.0 && mtbf.value() > 0.0, "interval and MTBF must be positive");
  STEPCAST_ASSERT(checkpoint_stall.value() >= 0.0 && restart.value() >= 0.0, "stall and restart are not negative");
  const double tau = interval.value();
  const double delta = checkpoint_stall.value();
  const double r = restart.value();
  const double m = mtbf.value();
  // Daly (2006), complete model: W = M e^(R/M) (e^((tau+delta)/M) - 1) per segment of tau work.
  // expm1 keeps the difference accurate when (tau + delta) << M.
  const double segment = m * std::exp(r / m) * std::expm1((tau + delta) / m);
  // When the job fails far more often than it can restart and checkpoint, the expected time per
  // segment overflows: the job makes no progress, which is an answer, not a bug.
  if (!std::isfinite(segment) || !(tau / segment > 0.0)) {
    throw InfeasibleError(fmt::format(
        "the job fails every {:.3g} s on average (its MTBF), against a restart of {:.3g} s and a checkpoint stall of "
        "{:.3g} s: it would make no progress; use fewer or more reliable nodes, faster restarts or cheaper checkpoints",
        m, r, delta));
  }
  GoodputBreakdown out;
  out.interval = interval;
  out.expected_segment = Seconds(segment);
  out.goodput = tau / segment;
  out.write_fraction = delta / segment;
  // Rounding can leave a tiny negative remainder when failures are negligible (M >> tau).
  const double failure_fraction = std::max(0.0, 1.0 - out.goodput - out.write_fraction);
  // Young (1974): a failure costs on average half a segment of rework plus the restart.
  const double rework_cost = (tau + delta) / 2.0;
  const double share = rework_cost / (rework_cost + r);
  out.rework_fraction = failure_fraction * share;
  out.restart_fraction = failure_fraction - out.rework_fraction;
  STEPCAST_ASSERT(out.goodput > 0.0 && out.goodput <= 1.0, "goodput is a fraction");
  return out;
}

std::vector<GoodputBreakdown> goodput_curve(Seconds optimal, std::span<const double> factors, Seconds checkpoint_stall,
                                            Seconds restart, Seconds mtbf) {
  std::vector<GoodputBreakdown> rows;
  rows.reserve(factors.size());
  for (const double f : factors) rows.push_back(expected_goodput(optimal * f, checkpoint_stall, restart, mtbf));
  return rows;
}

}  // namespace stepcast::cost
