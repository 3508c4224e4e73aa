// Least-squares fit of NCCL's tuning model per protocol. Time is linear in the two unknowns once
// each point's algorithm and protocol are fixed: t = a x L + b x S / B with a = latency_factor and
// b = 1 / bandwidth_efficiency, so each round attributes the points with the current factors
// and solves one small weighted least-squares problem per protocol, as fit.cpp does for tiers.
#include "stepcast/calibrate/fit_nccl.hpp"

#include <Eigen/Dense>
#include <cmath>
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

NcclFit fit_nccl(const std::vector<NcclSample>& samples) {
  NcclFit result;
  std::vector<ProtocolRow> rows;
  std::vector<std::pair<NcclProtocol, cost::NcclAlgorithm>> picks;
  for (result.rounds = 1; result.rounds <= kMaxRounds; ++result.rounds) {
    rows.clear();
    for (const NcclSample& s : samples) rows.push_back(attribute(s, result.tuning));
    std::vector<std::pair<NcclProtocol, cost::NcclAlgorithm>> now;
    for (const ProtocolRow& r : rows) now.emplace_back(r.protocol, r.algorithm);
    if (result.rounds > 1 && now == picks) break;
    picks = std::move(now);
    result.protocols.clear();
    for (std::size_t p = 0; p < cost::kNcclProtocols; ++p) {
      const auto protocol = static_cast<NcclProtocol>(p);
      std::vector<const ProtocolRow*> mine;
      for (const ProtocolRow& r : rows) {
        if (r.protocol == protocol) mine.push_back(&r);
      }
      const std::optional<cost::NcclProtocolTuning> t = solve(mine);
      result.tuning[p] = t.value_or(cost::NcclProtocolTuning{});
      if (!t) continue;
      std::vector<double> abs_err;
      for (const ProtocolRow* r : mine) abs_err.push_back(std::fabs(residual_pct(*r, *t)));
      result.protocols.push_back(
          {protocol, *t,
           cost::FitSummary{static_cast<int>(mine.size()), percentile(abs_err, 50.0), percentile(abs_err, 100.0)}});
    }
  }
  result.rounds = std::min(result.rounds, kMaxRounds);
  return result;
}

void store_nccl_fit(const NcclFit& fit, const std::string& source, cost::Calibration& calibration) {
  for (const NcclProtocolFit& p : fit.protocols) {
    calibration.nccl_protocols[p.protocol] = cost::CalibratedNcclProtocol{p.tuning, p.fit, source};
  }
}

}  // namespace stepcast::calibrate
