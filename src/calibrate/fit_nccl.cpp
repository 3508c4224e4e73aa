// Least-squares fit of NCCL's tuning model per protocol. Time is linear in the two unknowns once
// each point's algorithm and protocol are fixed: t = a x L + b x S / B with a = latency_factor and
// b = 1 / bandwidth_efficiency, so each round attributes the points with the current factors
// and solves one small weighted least-squares problem per protocol, as fit.cpp does for tiers;
// the round whose factors price all points best is kept.
#include "stepcast/calibrate/fit_nccl.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <optional>

#include "stepcast/calibrate/validation.hpp"

namespace stepcast::calibrate {
namespace {

using cost::NcclProtocol;

constexpr int kMaxRounds = 20;

// One row: NCCL's own latency and bandwidth time of the picked candidate, and the measurement.
struct ProtocolRow {
  NcclProtocol protocol = NcclProtocol::kSimple;
  cost::NcclAlgorithm algorithm = cost::NcclAlgorithm::kRing;
  double latency_s = 0.0;
  double bandwidth_s = 0.0;
  double size_bytes = 0.0;
  double measured_s = 0.0;
};

ProtocolRow attribute(const NcclSample& s, const cost::NcclTuning& tuning) {
  const cost::NcclCandidate pick = cost::nccl_choose(s.op, s.size, s.system, {}, tuning).chosen();
  // The same candidate without the fitted factors: the model's own L and S / B.
  const cost::NcclCandidate plain = cost::nccl_choose(s.op, s.size, s.system, {pick.algorithm, pick.protocol}).chosen();
  return {pick.protocol,  pick.algorithm,    plain.latency.value(), plain.bandwidth_time.value(),
          s.size.value(), s.measured.value()};
}

double residual_pct(const ProtocolRow& r, const cost::NcclProtocolTuning& t) {
  const double predicted = t.latency_factor * r.latency_s + r.bandwidth_s / t.bandwidth_efficiency;
  return (predicted - r.measured_s) / r.measured_s * 100.0;
}

// Weighted least squares on relative error: minimise sum(((a L + b S/B) - t) / t)^2.
std::optional<cost::NcclProtocolTuning> solve(const std::vector<const ProtocolRow*>& rows) {
  bool sizes_differ = false;
  for (const ProtocolRow* r : rows) sizes_differ = sizes_differ || r->size_bytes != rows.front()->size_bytes;
  if (!sizes_differ) return std::nullopt;
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd m(n, 2);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ProtocolRow& r = *rows[static_cast<std::size_t>(i)];
    m(i, 0) = r.latency_s / r.measured_s;
    m(i, 1) = r.bandwidth_s / r.measured_s;
  }
  const Eigen::Vector2d x = m.colPivHouseholderQr().solve(ones);
  double a = x(0);
  double b = x(1);
  // A non-positive factor has no meaning: hold it at NCCL's 1 and fit the other alone.
  if (!(b > 0.0)) {
    b = 1.0;
    a = m.col(0).dot(ones - m.col(1)) / m.col(0).squaredNorm();
  } else if (!(a > 0.0)) {
    a = 1.0;
    b = m.col(1).dot(ones - m.col(0)) / m.col(1).squaredNorm();
  }
  if (!(a > 0.0) || !(b > 0.0)) return std::nullopt;
  return cost::NcclProtocolTuning{a, 1.0 / b};
}

}  // namespace

std::vector<NcclSample> nccl_samples(const std::vector<Sample>& samples, const topology::Topology& topology) {
  std::vector<NcclSample> out;
  for (const Sample& s : samples) {
    if (!cost::has_nccl_tuning(s.op) || s.tiers.ranks < 2) continue;
    out.push_back({s.op, s.size, s.measured, cost::nccl_system(topology, s.tiers)});
  }
  return out;
}

namespace {

// Sum of squared relative errors of the times NCCL's choice under `tuning` gives.
double objective(const std::vector<NcclSample>& samples, const cost::NcclTuning& tuning) {
  double sum = 0.0;
  for (const NcclSample& s : samples) {
    const double e = (cost::nccl_pick(s.op, s.size, s.system, {}, tuning).time - s.measured) / s.measured;
    sum += e * e;
  }
  return sum;
}

// Per protocol, the points NCCL picks it for under `tuning` and their errors: the fit residual
// that validate with the calibration shows.
std::vector<NcclProtocolFit> residuals(const std::vector<NcclSample>& samples, const cost::NcclTuning& tuning,
                                       const std::vector<bool>& fitted) {
  std::vector<NcclProtocolFit> out;
  for (std::size_t p = 0; p < cost::kNcclProtocols; ++p) {
    if (!fitted[p]) continue;
    const auto protocol = static_cast<NcclProtocol>(p);
    std::vector<double> abs_err;
    for (const NcclSample& s : samples) {
      const ProtocolRow r = attribute(s, tuning);
      if (r.protocol == protocol) abs_err.push_back(std::fabs(residual_pct(r, tuning[p])));
    }
    // None when NCCL picks the protocol for no point under the fitted factors: its factors still
    // price the sizes where it would win.
    std::optional<cost::FitSummary> summary;
    if (!abs_err.empty()) {
      summary =
          cost::FitSummary{static_cast<int>(abs_err.size()), percentile(abs_err, 50.0), percentile(abs_err, 100.0)};
    }
    out.push_back({protocol, tuning[p], summary});
  }
  return out;
}

}  // namespace

NcclFit fit_nccl(const std::vector<NcclSample>& samples) {
  NcclFit result;
  std::vector<ProtocolRow> rows;
  std::vector<std::pair<NcclProtocol, cost::NcclAlgorithm>> picks;
  // Re-attributing with new factors can move points between protocols and back without settling,
  // so every round's tuning is scored over all points and the best one is kept.
  cost::NcclTuning tuning;
  double best = std::numeric_limits<double>::infinity();
  std::vector<bool> best_fitted(cost::kNcclProtocols, false);
  for (result.rounds = 1; result.rounds <= kMaxRounds; ++result.rounds) {
    rows.clear();
    for (const NcclSample& s : samples) rows.push_back(attribute(s, tuning));
    std::vector<std::pair<NcclProtocol, cost::NcclAlgorithm>> now;
    for (const ProtocolRow& r : rows) now.emplace_back(r.protocol, r.algorithm);
    if (result.rounds > 1 && now == picks) break;
    picks = std::move(now);
    std::vector<bool> fitted(cost::kNcclProtocols, false);
    for (std::size_t p = 0; p < cost::kNcclProtocols; ++p) {
      const auto protocol = static_cast<NcclProtocol>(p);
      std::vector<const ProtocolRow*> mine;
      for (const ProtocolRow& r : rows) {
        if (r.protocol == protocol) mine.push_back(&r);
      }
      const std::optional<cost::NcclProtocolTuning> t = solve(mine);
      tuning[p] = t.value_or(cost::NcclProtocolTuning{});
      fitted[p] = t.has_value();
    }
    const double score = objective(samples, tuning);
    if (score < best) {
      best = score;
      result.tuning = tuning;
      best_fitted = fitted;
    }
  }
  result.rounds = std::min(result.rounds, kMaxRounds);
  result.protocols = residuals(samples, result.tuning, best_fitted);
  return result;
}

void store_nccl_fit(const NcclFit& fit, const std::string& source, cost::Calibration& calibration) {
  for (const NcclProtocolFit& p : fit.protocols) {
    calibration.nccl_protocols[p.protocol] = cost::CalibratedNcclProtocol{p.tuning, p.fit, source};
  }
}

}  // namespace stepcast::calibrate
