// Rows of measured collectives checked against what the topology's links can carry at all.
#include "stepcast/calibrate/nccl_tests_plausible.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/collectives.hpp"

namespace stepcast::calibrate {
namespace {

/// How far beyond the topology's own figures a row may go before it is called impossible.
constexpr double kMargin = 10.0;

std::string gbps(double bytes_per_s) { return fmt::format("{:.4g} GB/s", bytes_per_s / 1e9); }

/// The row's line for the error's location; JSON input has none.
std::string line_of(const MeasuredPoint& p) { return p.line > 0 ? std::to_string(p.line) : std::string(); }

}  // namespace

void check_physically_possible(const Measurements& measurements, const topology::Topology& topology) {
  double fastest_Bps = topology.gpu().memory_bandwidth.value();
  double shortest_latency_s = std::numeric_limits<double>::infinity();
  for (const topology::Link& link : topology.links()) {
    fastest_Bps = std::max(fastest_Bps, link.bandwidth.value());
    if (link.latency.value() > 0.0) shortest_latency_s = std::min(shortest_latency_s, link.latency.value());
  }
  for (const MeasuredCollective& run : measurements.runs) {
    if (run.ranks < 2) continue;  // one rank moves no data: its times are copies in HBM, or nothing
    for (const MeasuredPoint& p : run.points) {
      const double size = p.size.value();
      const double time = p.out_of_place.time.value();
      if (!(size > 0.0)) continue;
      const auto fail = [&](const std::string& why) {
        throw InputError(measurements.file, line_of(p),
                         fmt::format("{} bytes over {} ranks in {:.6g} us: {}; the row cannot be a measurement of "
                                     "this machine (a corrupt row, or a log of another one?)",
                                     size, run.ranks, time * 1e6, why));
      };
      if (time < shortest_latency_s / kMargin) {
        fail(fmt::format("below a tenth of the shortest link latency of topology {} ({:.6g} us)", topology.name(),
                         shortest_latency_s * 1e6));
      }
      const double busbw = size / time * cost::busbw_factor(run.op, run.ranks);
      if (busbw > kMargin * fastest_Bps) {
        fail(fmt::format("a bus bandwidth of {}, above 10 x the fastest link or memory of topology {} ({})",
                         gbps(busbw), topology.name(), gbps(fastest_Bps)));
      }
    }
  }
}

}  // namespace stepcast::calibrate
