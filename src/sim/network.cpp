// Flow-level network: transfers become max-min shared flows over link directions. Only the flows
// whose rate changed are settled and rescheduled, so a start or end costs its component, not the
// whole network.
#include "stepcast/sim/network.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/des/time.hpp"

namespace stepcast::sim {

namespace {
// Event payloads: the transfer id in the low 32 bits; this bit marks an arrival (else a drain).
constexpr std::uint64_t kArrivalBit = std::uint64_t{1} << 32;
constexpr std::uint64_t kIdMask = kArrivalBit - 1;
// Bytes a drain may leave over from rounding its time to a whole picosecond, relative to size.
constexpr double kDrainSlack = 1e-6;

ResourceId resource_of(const topology::Hop& hop) { return 2 * hop.link + (hop.forward ? 0U : 1U); }
}  // namespace

Network::Network(const topology::Topology& topo, const des::Engine& engine, TransferObserver& observer)
    : topo_(&topo), engine_(&engine), observer_(&observer) {
  for (const topology::Link& link : topo.links()) {
    // Full duplex: one resource per direction, forward (a->b) first.
    sharing_.add_resource(link.bandwidth);
    sharing_.add_resource(link.bandwidth);
    link_latency_.push_back(des::to_ticks(link.latency));
    traffic_.capacity[static_cast<std::size_t>(link.tier)] += 2.0 * link.bandwidth.value();
  }
}

const std::vector<std::vector<topology::Hop>>& Network::routes(int src, int dst) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
  auto it = routes_.find(key);
  if (it == routes_.end()) it = routes_.emplace(key, topo_->routes(src, dst)).first;
  return it->second;
}

TransferPattern Network::pattern(std::span<const std::pair<int, int>> pairs) {
  const std::vector<double> ones(pairs.size(), 1.0);
  return pattern(pairs, ones);
}

TransferPattern Network::pattern(std::span<const std::pair<int, int>> pairs, std::span<const double> weights) {
  STEPCAST_ASSERT(weights.size() == pairs.size(), "one weight per pair");
  TransferPattern p;
  std::vector<std::pair<ResourceId, double>> crossed;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [src, dst] = pairs[i];
    if (src == dst) continue;
    STEPCAST_ASSERT(weights[i] > 0.0, "a member moves a positive share of the bytes");
    ++p.members;
    // A member spread over several routes (a GPU with several NICs) puts an even part on each.
    const auto& spread = routes(src, dst);
    const double part = weights[i] / static_cast<double>(spread.size());
    for (const std::vector<topology::Hop>& route : spread) {
      des::Tick latency = 0;
      for (const topology::Hop& hop : route) {
        crossed.emplace_back(resource_of(hop), part);
        latency += link_latency_[hop.link];
        p.top_tier = std::max(p.top_tier, topo_->links()[hop.link].tier);
      }
      p.latency = std::max(p.latency, latency);
    }
  }
  std::sort(crossed.begin(), crossed.end());
  for (std::size_t i = 0; i < crossed.size();) {
    double weight = 0.0;
    std::size_t j = i;
    for (; j < crossed.size() && crossed[j].first == crossed[i].first; ++j) weight += crossed[j].second;
    p.usages.push_back(Usage{crossed[i].first, weight});
    i = j;
  }
  return p;
}

std::uint32_t Network::new_transfer() {
  if (!free_transfers_.empty()) {
    const std::uint32_t id = free_transfers_.back();
    free_transfers_.pop_back();
    return id;
  }
  transfers_.emplace_back();
  return static_cast<std::uint32_t>(transfers_.size() - 1);
}

void Network::start(const TransferPattern& pattern, Bytes bytes, std::uint64_t tag, int latency_steps) {
  start_with_latency(pattern, bytes, tag, pattern.latency * latency_steps);
}

void Network::start_with_latency(const TransferPattern& pattern, Bytes bytes, std::uint64_t tag, des::Tick latency) {
  STEPCAST_ASSERT(bytes.value() >= 0.0, "a transfer moves a non-negative number of bytes");
  const des::Tick now = engine_->now();
  const std::uint32_t id = new_transfer();
  Transfer& t = transfers_[id];
  t = Transfer{};
  t.tag = tag;
  t.latency = latency;
  t.last = now;
  t.live = true;
  t.remaining_bytes = bytes.value();
  if (pattern.usages.empty() || bytes.value() <= 0.0) {
    // Nothing crosses a link: only the latency remains.
    events_.schedule(now + t.latency, kArrivalBit | id);
    t.live = false;
    return;
  }
  for (const Usage& u : pattern.usages) {
    const topology::Link& link = topo_->links()[u.resource / 2];
    traffic_.bytes[static_cast<std::size_t>(link.tier)] += u.weight * bytes.value();
  }
  t.flow = sharing_.add_flow(pattern.usages, pattern.rate_cap);
  if (transfer_of_flow_.size() <= t.flow) transfer_of_flow_.resize(t.flow + 1);
  transfer_of_flow_[t.flow] = id;
  dirty_ = true;
}

des::Tick Network::next_event_tick() {
  if (dirty_) {
    const des::Tick now = engine_->now();
    changed_.clear();
    sharing_.solve(changed_);
    if (!changed_.empty()) ++solves_;
    for (const SharedFlowId f : changed_) {
      Transfer& t = transfers_[transfer_of_flow_[f]];
      // Settle the bytes moved at the old rate, then time the rest at the new one.
      t.remaining_bytes -= t.rate_Bps * des::to_seconds(now - t.last).value();
      t.remaining_bytes = std::max(t.remaining_bytes, 0.0);
      t.last = now;
      t.rate_Bps = sharing_.rate(f).value();
      events_.cancel(t.drain);
      const des::Tick left = des::to_ticks(Bytes(t.remaining_bytes) / BytesPerSecond(t.rate_Bps));
      t.drain = events_.schedule(now + left, transfer_of_flow_[f]);
    }
    dirty_ = false;
  }
  return events_.next_tick();
}

void Network::drained(std::uint32_t id, des::Tick now) {
  Transfer& t = transfers_[id];
  const double left = t.remaining_bytes - t.rate_Bps * des::to_seconds(now - t.last).value();
  STEPCAST_ASSERT(left <= kDrainSlack * t.remaining_bytes + 1.0, "a drained transfer must have moved all its bytes");
  sharing_.remove_flow(t.flow);
  t.live = false;
  dirty_ = true;
  events_.schedule(now + t.latency, kArrivalBit | id);
}

void Network::advance_to(des::Tick now) {
  while (events_.next_tick() == now) {
    const des::Event e = events_.pop();
    const auto id = static_cast<std::uint32_t>(e.payload & kIdMask);
    if ((e.payload & kArrivalBit) == 0) {
      drained(id, now);
      continue;
    }
    const std::uint64_t tag = transfers_[id].tag;
    free_transfers_.push_back(id);
    observer_->on_transfer_done(now, tag);
  }
}

}  // namespace stepcast::sim
