// Max-min fair sharing of resources (link directions) among flows, by progressive filling
// (Bertsekas and Gallager, "Data Networks", 2nd ed., section 6.5.2), with a rate limit per flow
// (a flow's own cap acts as a link only it crosses). Pure maths, like SimGrid's
// lmm: no time, no topology. A flow may stand for several identical transfers moving together
// (a ring step): it crosses a resource with a weight, the number of its members on that resource,
// and its rate is the rate of each member.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::sim {

using ResourceId = std::uint32_t;
using SharedFlowId = std::uint32_t;

/// One flow's use of one resource: `weight` members of the flow cross it (a fraction for a member
/// spread over several routes).
struct Usage {
  ResourceId resource = 0;
  double weight = 1.0;
};

/// The max-min fair rates of a changing set of flows. Solving re-rates only the flows connected
/// (through shared resources) to a flow that started or ended since the last solve: rates of
/// other components cannot change, since max-min allocations of disjoint components are independent.
/// A resource that only one flow crosses acts as a cap on that flow (it saturates when that flow
/// alone reaches capacity / weight), so a solve works on the shared resources only: a 2048-member
/// collective crossing thousands of links it has to itself costs its few shared ones.
class MaxMinSharing {
 public:
  /// Adds a resource with `capacity` (> 0) and returns its id (dense, in call order).
  ResourceId add_resource(BytesPerSecond capacity);
  /// Adds a flow over `usages` (at least one; resources distinct) and returns its id; ids of
  /// removed flows are reused, smallest last-freed first. No member goes faster than `cap`
  /// (what the sender itself reaches: a protocol's or channel count's limit), whatever the links leave.
  SharedFlowId add_flow(std::span<const Usage> usages,
                        BytesPerSecond cap = BytesPerSecond(std::numeric_limits<double>::infinity()));
  /// Removes a flow; the resources it used become available to its neighbours at the next solve.
  void remove_flow(SharedFlowId flow);

  /// Recomputes the rates of the components touched since the last solve and appends to
  /// `changed` every live flow whose rate changed or that is new, in ascending id order.
  void solve(std::vector<SharedFlowId>& changed);

  /// Each member's rate. Valid after solve() for a live flow.
  [[nodiscard]] BytesPerSecond rate(SharedFlowId flow) const { return BytesPerSecond(flows_[flow].rate); }
  /// Capacity of a resource in use: the sum of weight x rate over its flows.
  [[nodiscard]] BytesPerSecond load(ResourceId resource) const;
  [[nodiscard]] BytesPerSecond capacity(ResourceId resource) const {
    return BytesPerSecond(resources_[resource].capacity);
  }
  [[nodiscard]] std::size_t resource_count() const { return resources_.size(); }
  [[nodiscard]] std::size_t live_flows() const { return live_flows_; }

 private:
  // Raw doubles in B/s from here on: this solver is the one place units are unwrapped (STYLE.md B5).
  struct Crossing {
    std::uint32_t flow = 0;
    double weight = 1.0;
    bool listed = false;  // the flow's shared resources hold an entry for it (live or stale)
  };
  struct Resource {
    double capacity = 0.0;
    std::vector<Crossing> flows;  // live flows crossing it, in insertion order
    std::uint64_t mark = 0;       // epoch of the last component search that reached it
    bool dirty = false;
    // Progressive-filling scratch.
    double remaining = 0.0;
    double unfrozen_weight = 0.0;
    std::uint32_t version = 0;  // bumped whenever remaining or unfrozen_weight changes
    bool touched = false;
  };
  // A resource's fair share when pushed; stale once the resource's version has moved on.
  struct ShareEntry {
    double share = 0.0;
    std::uint32_t resource = 0;
    std::uint32_t version = 0;
  };
  // The share heap's order: the lowest share on top, ties to the lowest id.
  static bool later(const ShareEntry& a, const ShareEntry& b);
  struct Flow {
    std::vector<Usage> usages;
    // Its usages on resources another live flow crosses too, and stale entries of resources it has
    // to itself again (is_shared tells them apart; `stale` counts them).
    std::vector<Usage> shared;
    std::size_t stale = 0;
    // The least capacity / weight of the resources it crossed alone at some point since it
    // started. One it shares now bounds it at least as tightly (its rate there is at most
    // capacity / weight), so the term never changes the allocation and never needs raising.
    double private_share = 0.0;
    double cap = 0.0;  // +inf when only the links limit it
    double rate = 0.0;
    std::uint64_t mark = 0;
    bool live = false;
    bool fresh = false;   // added since the last solve
    bool frozen = false;  // progressive-filling scratch
    double limit = 0.0;   // ... min(cap, private_share)
  };
  void make_private(std::uint32_t flow, ResourceId resource, double weight);
  [[nodiscard]] bool is_shared(ResourceId resource) const;
  void compact_shared(std::uint32_t flow);
  void fill_component(const std::vector<std::uint32_t>& resources, const std::vector<std::uint32_t>& flows);
  // Progressive filling's steps: a resource's share onto the heap (false when no unfrozen flow
  // crosses it), a flow frozen at `rate`, each resource a round's freezes changed reshared.
  bool add_share(std::uint32_t resource);
  void freeze(std::uint32_t flow, double rate);
  void reshare();

  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<std::uint32_t> dirty_;
  std::size_t live_flows_ = 0;
  std::uint64_t epoch_ = 0;
  // Scratch reused across solves so that solving allocates nothing once warm.
  std::vector<std::uint32_t> stack_;
  std::vector<std::uint32_t> comp_resources_;
  std::vector<std::uint32_t> comp_flows_;
  std::vector<std::uint32_t> changed_scratch_;
  std::vector<std::uint32_t> by_cap_;
  std::vector<ShareEntry> shares_;  // a min-heap by (share, resource)
  std::vector<std::uint32_t> touched_;
};

}  // namespace stepcast::sim
