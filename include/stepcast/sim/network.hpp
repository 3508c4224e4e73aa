// A flow-level network on a Topology: a transfer is a flow along its route, every link direction
// a separate resource shared max-min fairly; rates are recomputed when flows start or end, and a
// transfer arrives when its last byte has drained plus its route's latency.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/des/event_queue.hpp"
#include "stepcast/sim/max_min.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim {

/// Receives the arrival of transfers started on a Network.
class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  /// The transfer started with `tag` has fully arrived at `now`.
  virtual void on_transfer_done(des::Tick now, std::uint64_t tag) = 0;
};

/// The link directions crossed by a set of identical transfers that start and end together
/// (one step of a ring: every rank sends one chunk to its neighbour). Prepared once, started many
/// times. Treating them as one flow whose weight on a link is the number of members crossing it
/// gives each member the same rate, the rate of the slowest: exact for symmetric patterns, and
/// what a step-synchronous collective waits for anyway.
struct TransferPattern {
  std::vector<Usage> usages;  ///< sorted by resource
  des::Tick latency = 0;      ///< the longest member route's latency
  int members = 0;
  topology::LinkTier top_tier = topology::LinkTier::kIntraNode;  ///< the outermost tier crossed
  /// What each member reaches on its own, whatever the links leave: the collective model's rate
  /// for its algorithm and protocol (infinite: only the links limit it).
  BytesPerSecond rate_cap = BytesPerSecond(std::numeric_limits<double>::infinity());
};

/// Bytes carried per link tier (each member and each hop counted).
struct TierTraffic {
  std::array<double, 3> bytes{};     ///< indexed by LinkTier
  std::array<double, 3> capacity{};  ///< sum of the tier's link directions' capacities, B/s
};

class Network final : public des::Model {
 public:
  /// The network of `topo`, timed by `engine`'s clock, reporting arrivals to `observer`.
  Network(const topology::Topology& topo, const des::Engine& engine, TransferObserver& observer);

  /// The pattern of the transfers pairs[i].first -> pairs[i].second (GPU indices). A pair with
  /// equal ends moves nothing and costs nothing.
  TransferPattern pattern(std::span<const std::pair<int, int>> pairs);
  /// As above, member i moving weights[i] times the bytes each start gives it (one weight per
  /// pair, > 0): members of unequal traffic that start and end together.
  TransferPattern pattern(std::span<const std::pair<int, int>> pairs, std::span<const double> weights);
  /// Starts `bytes` per member along `pattern` now; `tag` comes back to the observer on arrival,
  /// `latency_steps` times the pattern's latency after the last byte has drained.
  void start(const TransferPattern& pattern, Bytes bytes, std::uint64_t tag, int latency_steps = 1);
  /// As start, arriving `latency` after the last byte has drained (the collective model's
  /// latency, instead of the route's).
  void start_with_latency(const TransferPattern& pattern, Bytes bytes, std::uint64_t tag, des::Tick latency);

  des::Tick next_event_tick() override;
  void advance_to(des::Tick now) override;

  [[nodiscard]] const TierTraffic& traffic() const { return traffic_; }
  [[nodiscard]] std::size_t active_flows() const { return sharing_.live_flows(); }
  /// Rate re-computations made (solves that changed at least one flow).
  [[nodiscard]] std::uint64_t solves() const { return solves_; }

 private:
  struct Transfer {
    double remaining_bytes = 0.0;  // per member, at tick `last`
    double rate_Bps = 0.0;
    des::Tick last = 0;
    des::Tick latency = 0;
    std::uint64_t tag = 0;
    SharedFlowId flow = 0;
    des::EventHandle drain;
    bool live = false;
  };
  const std::vector<std::vector<topology::Hop>>& routes(int src, int dst);
  std::uint32_t new_transfer();
  void drained(std::uint32_t id, des::Tick now);

  const topology::Topology* topo_;
  const des::Engine* engine_;
  TransferObserver* observer_;
  MaxMinSharing sharing_;
  des::EventQueue events_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<std::uint32_t> transfer_of_flow_;
  std::vector<SharedFlowId> changed_;
  std::unordered_map<std::uint64_t, std::vector<std::vector<topology::Hop>>> routes_;  // looked up, never iterated
  std::vector<des::Tick> link_latency_;
  TierTraffic traffic_;
  std::uint64_t solves_ = 0;
  bool dirty_ = false;
};

}  // namespace stepcast::sim
