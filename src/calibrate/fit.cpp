// Least-squares fit of the alpha-beta tier parameters to measured collectives. The model is the
// one the predictor uses (cost::estimate_collective), so a fit is only as linear as its terms:
// time = latency_time + bandwidth_time = a*alpha + b*(1/B) for the tier the estimate names.
#include "stepcast/calibrate/fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {
namespace {

using cost::Bottleneck;
using cost::CollectiveOp;

// One row of the regression, with its coefficients in SI units.
struct Row {
  const Sample* sample = nullptr;
  double a_steps = 0.0;  // seconds of latency per second of alpha
  double b_bytes = 0.0;  // bytes over the bottleneck tier
  double t_s = 0.0;      // measured time
};

struct Line {
  double alpha_s = 0.0;
  double inv_bw_s_per_byte = 0.0;
  bool bandwidth_fitted = true;
};

std::string_view bandwidth_field(Bottleneck b) {
  switch (b) {
    case Bottleneck::kIntraNode:
      return "intra_bw";
    case Bottleneck::kNodeNics:
      return "node_bw";
    case Bottleneck::kGpuNic:
      return "gpu_nic_bw";
    case Bottleneck::kNone:
      break;
  }
  STEPCAST_UNREACHABLE("a collective over two or more ranks has a bottleneck");
}

double bandwidth_of(const topology::CommTiers& t, Bottleneck b) {
  switch (b) {
    case Bottleneck::kIntraNode:
      return t.intra_bw.value();
    case Bottleneck::kNodeNics:
      return t.node_bw.value();
    case Bottleneck::kGpuNic:
      return t.gpu_nic_bw.value();
    case Bottleneck::kNone:
      break;
  }
  STEPCAST_UNREACHABLE("a collective over two or more ranks has a bottleneck");
}

// Alpha-beta latency per step: inside one node the intra-node figure, across nodes the network's.
double alpha_of(const topology::CommTiers& t) {
  return t.nodes <= 1 ? t.intra_latency.value() : t.inter_latency.value();
}

// Weighted least squares on relative error: minimise sum(((a x + b y) - t) / t)^2.
Line solve(const std::vector<Row>& rows, std::size_t lo, std::size_t hi, double fallback_inv_bw) {
  const auto n = static_cast<Eigen::Index>(hi - lo);
  Eigen::MatrixXd m(n, 2);
  Eigen::VectorXd rhs = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Row& r = rows[lo + static_cast<std::size_t>(i)];
    m(i, 0) = r.a_steps / r.t_s;
    m(i, 1) = r.b_bytes / r.t_s;
  }
  Line line;
  const Eigen::Vector2d both = m.colPivHouseholderQr().solve(rhs);
  line.alpha_s = both(0);
  line.inv_bw_s_per_byte = both(1);
  if (line.alpha_s < 0.0) {
    // A negative latency has no meaning: fit the bandwidth alone through the origin.
    line.alpha_s = 0.0;
    line.inv_bw_s_per_byte = m.col(1).dot(rhs) / m.col(1).squaredNorm();
  }
  if (!(line.inv_bw_s_per_byte > 0.0)) {
    // Time does not grow with size here (latency-bound regime): keep the topology's bandwidth
    // and fit the latency alone.
    line.bandwidth_fitted = false;
    line.inv_bw_s_per_byte = fallback_inv_bw;
    const Eigen::VectorXd rest = rhs - m.col(1) * fallback_inv_bw;
    const double sq = m.col(0).squaredNorm();
    line.alpha_s = sq > 0.0 ? std::max(0.0, m.col(0).dot(rest) / sq) : 0.0;
  }
  return line;
}

double residual_pct(const Row& r, const Line& l) {
  return (r.a_steps * l.alpha_s + r.b_bytes * l.inv_bw_s_per_byte - r.t_s) / r.t_s * 100.0;
}

double sum_sq(const std::vector<Row>& rows, std::size_t lo, std::size_t hi, const Line& l) {
  double s = 0.0;
  for (std::size_t i = lo; i < hi; ++i) s += std::pow(residual_pct(rows[i], l), 2);
  return s;
}

double median_abs(const std::vector<Row>& rows, std::size_t lo, std::size_t hi, const Line& l) {
  std::vector<double> e;
  for (std::size_t i = lo; i < hi; ++i) e.push_back(std::fabs(residual_pct(rows[i], l)));
  return percentile(e, 50.0);
}

// Regimes as [lo, hi) ranges of rows sorted by size: split the worst-fitting regime at the size
// boundary that minimises the squared relative error, while it fits badly and may be split.
std::vector<std::pair<std::size_t, std::size_t>> regimes(const std::vector<Row>& rows, double fallback_inv_bw,
                                                         const FitOptions& o) {
  std::vector<std::pair<std::size_t, std::size_t>> parts{{0, rows.size()}};
  const auto min_pts = static_cast<std::size_t>(o.min_points_per_regime);
  while (static_cast<int>(parts.size()) < o.max_regimes) {
    std::optional<std::size_t> worst;
    double worst_sq = 0.0;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const auto [lo, hi] = parts[p];
      if (hi - lo < 2 * min_pts) continue;
      const Line l = solve(rows, lo, hi, fallback_inv_bw);
      if (median_abs(rows, lo, hi, l) <= o.split_above_pct) continue;
      const double sq = sum_sq(rows, lo, hi, l);
      if (!worst || sq > worst_sq) {
        worst = p;
        worst_sq = sq;
      }
    }
    if (!worst) break;
    const auto [lo, hi] = parts[*worst];
    std::optional<std::size_t> best;
    double best_sq = worst_sq;
    for (std::size_t k = lo + min_pts; k + min_pts <= hi; ++k) {
      if (!(rows[k - 1].sample->size < rows[k].sample->size)) continue;  // split between sizes only
      const double sq = sum_sq(rows, lo, k, solve(rows, lo, k, fallback_inv_bw)) +
                        sum_sq(rows, k, hi, solve(rows, k, hi, fallback_inv_bw));
      if (sq < best_sq) {
        best = k;
        best_sq = sq;
      }
    }
    if (!best) break;
    parts[*worst] = {lo, *best};
    parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(*worst) + 1, {*best, hi});
  }
  return parts;
}

std::string file_list(const std::vector<Row>& rows, std::size_t lo, std::size_t hi) {
  std::set<std::string> files;
  for (std::size_t i = lo; i < hi; ++i) {
    const std::string& w = rows[i].sample->where;
    const auto colon = w.rfind(':');
    files.insert(colon == std::string::npos ? w : w.substr(0, colon));
  }
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

}  // namespace

Holdout Holdout::parse(const std::string& text) {
  Holdout h;
  if (text.empty() || text == "none") return h;
  if (text == "every-other") {
    h.kind = Kind::kEveryOther;
    return h;
  }
  constexpr std::string_view kSizes = "sizes>=";
  constexpr std::string_view kRanks = "ranks=";
  if (text.rfind(kSizes, 0) == 0) {
    h.kind = Kind::kSizesAtLeast;
    try {
      h.size = parse_bytes(text.substr(kSizes.size()));
    } catch (const UnitError& e) {
      throw InputError("--holdout", {}, e.what());
    }
    return h;
  }
  if (text.rfind(kRanks, 0) == 0) {
    h.kind = Kind::kRanks;
    const std::string n = text.substr(kRanks.size());
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9) {
      throw InputError("--holdout", {}, fmt::format("expected ranks=N with a whole number N, got \"{}\"", text));
    }
    h.ranks = std::stoi(n);
    return h;
  }
  throw InputError("--holdout", {},
                   fmt::format("unknown holdout \"{}\" (expected none, every-other, sizes>=SIZE or ranks=N)", text));
}

bool Holdout::holds_out(const MeasuredCollective& run, std::size_t index) const {
  switch (kind) {
    case Kind::kNone:
      return false;
    case Kind::kEveryOther:
      return index % 2 == 1;
    case Kind::kSizesAtLeast:
      return !(run.points[index].size < size);
    case Kind::kRanks:
      return run.ranks == ranks;
  }
  STEPCAST_UNREACHABLE("every holdout kind is handled");
}

std::vector<Sample> select_samples(const std::vector<Measurements>& all, const topology::Topology& topology,
                                   const PointFilter& filter, bool held_out, std::optional<cost::Algorithm> algorithm,
                                   std::vector<RowUse>* use) {
  std::vector<Sample> out;
  std::vector<RowUse> tally(all.size());
  for (std::size_t file = 0; file < all.size(); ++file) {
    const Measurements& m = all[file];
    RowUse& count = tally[file];
    for (const MeasuredCollective& run : m.runs) {
      const std::string at = run.first_line > 0 ? std::to_string(run.first_line) : std::string();
      if (run.ranks < 2) {  // one rank moves no data: nothing to compare
        count.single_rank += static_cast<int>(run.points.size());
        continue;
      }
      if (run.ranks > topology.gpu_count()) {
        throw InputError(m.file, at,
                         fmt::format("the {} run has {} ranks but topology {} has {} GPUs (pass --nodes)", run.program,
                                     run.ranks, topology.name(), topology.gpu_count()));
      }
      topology::CommTiers tiers = topology.tiers(run.ranks);
      // Fewer ranks per host than the topology's GPUs per node (nccl-tests -g/--ntasks-per-node
      // below the node's size): every (gpus per node / ranks per host)-th GPU, so each node holds
      // that many ranks, each on its own GPU and NIC as on a node of that size.
      if (run.hosts > 0 && run.hosts != tiers.nodes && run.ranks % run.hosts == 0) {
        const int per_host = run.ranks / run.hosts;
        const int stride = topology.gpus_per_node() / per_host;
        if (topology.gpus_per_node() % per_host == 0 && (run.ranks - 1) * stride < topology.gpu_count()) {
          tiers = topology.tiers(run.ranks, stride);
        }
      }
      if (run.hosts > 0 && run.hosts != tiers.nodes) {
        throw InputError(m.file, at,
                         fmt::format("the {} run's {} ranks ran on {} hosts, but topology {} ({} GPUs per node) places "
                                     "them on {} nodes: use a topology with {} GPUs per node",
                                     run.program, run.ranks, run.hosts, topology.name(), topology.gpus_per_node(),
                                     tiers.nodes, run.ranks / run.hosts));
      }
      const cost::Algorithm alg = algorithm.value_or(cost::algorithms_for(run.op).front());
      if (!cost::is_supported(run.op, alg)) {
        throw InputError("--algorithm", {},
                         fmt::format("{} has no {} algorithm (accepted: {})", cost::to_string(run.op),
                                     cost::to_string(alg), cost::accepted_algorithms(run.op)));
      }
      for (std::size_t i = 0; i < run.points.size(); ++i) {
        const MeasuredPoint& p = run.points[i];
        if (!(p.size.value() > 0.0) || !(p.out_of_place.time.value() > 0.0)) {
          ++count.empty;
          continue;
        }
        if (p.size < filter.min_size || (filter.max_size && *filter.max_size < p.size)) {
          ++count.outside_sizes;
          continue;
        }
        if (filter.holdout.holds_out(run, i) != held_out) {
          ++count.holdout;
          continue;
        }
        ++count.used;
        Sample s;
        s.op = run.op;
        s.algorithm = alg;
        s.size = p.size;
        s.measured = p.out_of_place.time;
        s.measured_busbw = p.out_of_place.busbw;
        s.tiers = tiers;
        s.where = p.line > 0 ? fmt::format("{}:{}", m.file, p.line) : m.file;
        out.push_back(std::move(s));
      }
    }
  }
  if (use) *use = std::move(tally);
  return out;
}

std::vector<RegimeFit> fit_samples(const std::vector<Sample>& samples, const std::string& origin,
                                   const FitOptions& options) {
  // Group by what the rows fit: collective, algorithm, whether nodes are crossed, bottleneck tier.
  using Key = std::tuple<int, int, bool, int>;
  std::map<Key, std::vector<Row>> groups;
  std::map<Key, double> fallback;
  for (const Sample& s : samples) {
    const cost::CollectiveCost c = cost::estimate_collective(s.op, s.algorithm, s.size, s.tiers);
    if (c.bottleneck == Bottleneck::kNone) continue;
    const double alpha0 = alpha_of(s.tiers);
    Row r;
    r.sample = &s;
    r.a_steps = alpha0 > 0.0 ? c.latency_time.value() / alpha0 : static_cast<double>(c.steps);
    r.b_bytes = c.bandwidth_time.value() * bandwidth_of(s.tiers, c.bottleneck);
    r.t_s = s.measured.value();
    const Key key{static_cast<int>(s.op), static_cast<int>(s.algorithm), s.tiers.nodes > 1,
                  static_cast<int>(c.bottleneck)};
    groups[key].push_back(r);
    fallback[key] = 1.0 / bandwidth_of(s.tiers, c.bottleneck);
  }
  std::vector<RegimeFit> fits;
  for (auto& [key, rows] : groups) {
    const auto op = static_cast<CollectiveOp>(std::get<0>(key));
    const auto alg = static_cast<cost::Algorithm>(std::get<1>(key));
    const bool across = std::get<2>(key);
    const auto bottleneck = static_cast<Bottleneck>(std::get<3>(key));
    if (rows.size() < 2) {
      throw InputError(origin, {},
                       fmt::format("{} ({}): {} point(s) left to fit, need at least 2 sizes", cost::to_string(op),
                                   cost::to_string(alg), rows.size()));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& x, const Row& y) { return x.sample->size < y.sample->size; });
    const auto parts = regimes(rows, fallback[key], options);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const auto [lo, hi] = parts[p];
      const Line line = solve(rows, lo, hi, fallback[key]);
      RegimeFit f;
      f.algorithm = alg;
      f.alpha_field = across ? "inter_latency" : "intra_latency";
      f.bandwidth_field = std::string(bandwidth_field(bottleneck));
      f.alpha = Seconds(line.alpha_s);
      f.bandwidth = BytesPerSecond(1.0 / line.inv_bw_s_per_byte);
      for (std::size_t i = lo; i < hi; ++i) f.residual_pct.push_back(residual_pct(rows[i], line));
      std::vector<double> abs_err;
      for (double e : f.residual_pct) abs_err.push_back(std::fabs(e));
      cost::CollectiveCalibration& e = f.entry;
      e.op = op;
      e.min_size = p == 0 ? Bytes(0.0) : rows[lo].sample->size;
      if (p + 1 < parts.size()) e.max_size = rows[parts[p + 1].first].sample->size - Bytes(1.0);
      e.fit = cost::FitSummary{static_cast<int>(hi - lo), percentile(abs_err, 50.0), percentile(abs_err, 100.0)};
      e.source = fmt::format(
          "least-squares fit (relative error) of {} points of {} ({}) on {}, sizes {} to {}, from {}", hi - lo,
          cost::to_string(op), cost::to_string(alg), across ? "several nodes" : "one node",
          format_bytes(rows[lo].sample->size), format_bytes(rows[hi - 1].sample->size), file_list(rows, lo, hi));
      const cost::CalibratedLatency alpha{f.alpha, e.source};
      if (across) {
        e.tiers.inter_latency = alpha;
      } else {
        e.tiers.intra_latency = alpha;
      }
      if (line.bandwidth_fitted) {
        const cost::CalibratedBandwidth bw{f.bandwidth, e.source};
        switch (bottleneck) {
          case Bottleneck::kIntraNode:
            e.tiers.intra_bw = bw;
            break;
          case Bottleneck::kNodeNics:
            e.tiers.node_bw = bw;
            break;
          case Bottleneck::kGpuNic:
            e.tiers.gpu_nic_bw = bw;
            break;
          case Bottleneck::kNone:
            STEPCAST_UNREACHABLE("filtered above");
        }
      } else {
        f.bandwidth_field += " (kept: latency-bound regime)";
      }
      fits.push_back(std::move(f));
    }
  }
  return fits;
}

}  // namespace stepcast::calibrate
