// Progressive filling over the connected components touched since the last solve. All rates grow
// together; the resource whose fair share (remaining capacity / unfrozen weight) is smallest
// saturates first and freezes its flows at that share (Bertsekas and Gallager 6.5.2). Resources a
// flow crosses alone enter as that flow's limit, kept up to date as flows start and end.
#include "stepcast/sim/max_min.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stepcast/core/errors.hpp"

namespace stepcast::sim {

namespace {
// Relative slack for the capacity check: progressive filling subtracts shares one flow at a time.
constexpr double kCapacitySlack = 1e-9;
}  // namespace

ResourceId MaxMinSharing::add_resource(BytesPerSecond capacity) {
  STEPCAST_ASSERT(capacity.value() > 0.0, "a shared resource needs a positive capacity");
  resources_.emplace_back();
  resources_.back().capacity = capacity.value();
  return static_cast<ResourceId>(resources_.size() - 1);
}

SharedFlowId MaxMinSharing::add_flow(std::span<const Usage> usages, BytesPerSecond cap) {
  STEPCAST_ASSERT(!usages.empty(), "a flow must cross at least one resource");
  STEPCAST_ASSERT(cap.value() > 0.0, "a flow's own rate limit is positive");
  std::uint32_t id = 0;
  if (free_flows_.empty()) {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  } else {
    id = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& f = flows_[id];
  f.usages.assign(usages.begin(), usages.end());
  f.shared.clear();
  f.stale = 0;
  f.private_share = std::numeric_limits<double>::infinity();
  f.cap = cap.value();
  f.rate = 0.0;
  f.live = true;
  f.fresh = true;
  for (const Usage& u : f.usages) {
    STEPCAST_ASSERT(u.resource < resources_.size(), "a flow uses an unknown resource");
    STEPCAST_ASSERT(u.weight > 0.0, "a flow crosses a resource with a positive weight");
    Resource& r = resources_[u.resource];
    if (r.flows.empty()) {
      make_private(id, u.resource, u.weight);
      r.flows.push_back({id, u.weight, false});
    } else {
      if (r.flows.size() == 1) {
        // Shared now: it joins the other flow's shared resources, or its entry there is live
        // again (its private share may keep the resource's capacity / weight, which the shared
        // resource itself enforces anyway).
        Crossing& other = r.flows.front();
        Flow& g = flows_[other.flow];
        if (other.listed) {
          --g.stale;
        } else {
          g.shared.push_back({u.resource, other.weight});
          other.listed = true;
        }
      }
      f.shared.push_back(u);
      r.flows.push_back({id, u.weight, true});
    }
    if (!r.dirty) {
      r.dirty = true;
      dirty_.push_back(u.resource);
    }
  }
  ++live_flows_;
  return id;
}

void MaxMinSharing::remove_flow(SharedFlowId flow) {
  STEPCAST_ASSERT(flow < flows_.size() && flows_[flow].live, "removing a flow that is not live");
  Flow& f = flows_[flow];
  for (const Usage& u : f.usages) {
    Resource& r = resources_[u.resource];
    // Erase keeping order, so that later solves see flows in insertion order (determinism).
    r.flows.erase(std::find_if(r.flows.begin(), r.flows.end(), [&](const Crossing& c) { return c.flow == flow; }));
    if (r.flows.size() == 1) {
      // The one flow left has the resource to itself again: its entry in that flow's shared
      // resources goes stale (skipped, and dropped when stale ones are the majority).
      const Crossing& left = r.flows.front();
      ++flows_[left.flow].stale;
      make_private(left.flow, u.resource, left.weight);
    }
    if (!r.dirty) {
      r.dirty = true;
      dirty_.push_back(u.resource);
    }
  }
  f.live = false;
  f.usages.clear();
  f.shared.clear();
  free_flows_.push_back(flow);
  --live_flows_;
}

void MaxMinSharing::make_private(std::uint32_t flow, ResourceId resource, double weight) {
  Flow& f = flows_[flow];
  f.private_share = std::min(f.private_share, resources_[resource].capacity / weight);
}

bool MaxMinSharing::is_shared(ResourceId resource) const { return resources_[resource].flows.size() > 1; }

void MaxMinSharing::compact_shared(std::uint32_t flow) {
  Flow& f = flows_[flow];
  std::size_t kept = 0;
  for (const Usage& u : f.shared) {
    if (is_shared(u.resource)) {
      f.shared[kept++] = u;
    } else {
      resources_[u.resource].flows.front().listed = false;  // the flow is the one left on it
    }
  }
  f.shared.resize(kept);
  f.stale = 0;
}

void MaxMinSharing::solve(std::vector<SharedFlowId>& changed) {
  changed_scratch_.clear();
  const std::uint64_t seen = epoch_ + 1;
  for (const std::uint32_t start : dirty_) {
    resources_[start].dirty = false;
    for (const Crossing& first : resources_[start].flows) {
      if (flows_[first.flow].mark == seen) continue;  // already in a component found this solve
      // Depth-first search over flows joined by the resources they share.
      comp_resources_.clear();
      comp_flows_.clear();
      stack_.clear();
      stack_.push_back(first.flow);
      flows_[first.flow].mark = seen;
      while (!stack_.empty()) {
        const std::uint32_t f = stack_.back();
        stack_.pop_back();
        comp_flows_.push_back(f);
        if (2 * flows_[f].stale > flows_[f].shared.size()) compact_shared(f);
        for (const Usage& u : flows_[f].shared) {
          Resource& r = resources_[u.resource];
          if (r.mark == seen || !is_shared(u.resource)) continue;
          r.mark = seen;
          comp_resources_.push_back(u.resource);
          for (const Crossing& c : r.flows) {
            if (flows_[c.flow].mark == seen) continue;
            flows_[c.flow].mark = seen;
            stack_.push_back(c.flow);
          }
        }
      }
      // No sort: the search visits the same component in the same order on every run, and the
      // filling breaks every tie by id (fill_component).
      fill_component(comp_resources_, comp_flows_);
    }
  }
  dirty_.clear();
  ++epoch_;
  std::sort(changed_scratch_.begin(), changed_scratch_.end());
  changed.insert(changed.end(), changed_scratch_.begin(), changed_scratch_.end());
}

bool MaxMinSharing::later(const ShareEntry& a, const ShareEntry& b) {
  return a.share > b.share || (a.share == b.share && a.resource > b.resource);
}

bool MaxMinSharing::add_share(std::uint32_t r) {
  const Resource& res = resources_[r];
  if (res.unfrozen_weight <= 0.0) return false;
  shares_.push_back({std::max(res.remaining, 0.0) / res.unfrozen_weight, r, res.version});
  return true;
}

void MaxMinSharing::freeze(std::uint32_t f, double rate) {
  Flow& flow = flows_[f];
  flow.frozen = true;
  if (flow.fresh || flow.rate != rate) changed_scratch_.push_back(f);
  flow.fresh = false;
  flow.rate = rate;
  for (const Usage& u : flow.shared) {
    if (!is_shared(u.resource)) continue;
    Resource& res = resources_[u.resource];
    res.remaining -= u.weight * rate;
    res.unfrozen_weight -= u.weight;
    if (!res.touched) {
      res.touched = true;
      touched_.push_back(u.resource);
    }
  }
}

// After a round's freezes: each changed resource's share once, its older entries now stale.
void MaxMinSharing::reshare() {
  for (const std::uint32_t r : touched_) {
    resources_[r].touched = false;
    ++resources_[r].version;
    if (add_share(r)) std::push_heap(shares_.begin(), shares_.end(), later);
  }
  touched_.clear();
}

void MaxMinSharing::fill_component(const std::vector<std::uint32_t>& resources,
                                   const std::vector<std::uint32_t>& flows) {
  for (const std::uint32_t r : resources) {
    resources_[r].remaining = resources_[r].capacity;
    resources_[r].unfrozen_weight = 0.0;
  }
  for (const std::uint32_t f : flows) {
    Flow& flow = flows_[f];
    flow.frozen = false;
    // The resources it has alone saturate exactly when its own cap would: one limit.
    flow.limit = std::min(flow.cap, flow.private_share);
    for (const Usage& u : flow.shared) {
      if (is_shared(u.resource)) resources_[u.resource].unfrozen_weight += u.weight;
    }
  }
  // The shared resource that saturates next is the top of a heap of shares, ties to the lowest
  // id, and the lowest limit the top of a heap of the unfrozen flows' limits, ties in id order:
  // the picks of scanning every resource and flow each round, in O(log n) instead of O(n) a round.
  shares_.clear();
  for (const std::uint32_t r : resources) add_share(r);
  std::make_heap(shares_.begin(), shares_.end(), later);
  // The unfrozen flows' limits, a min-heap by (limit, id).
  const auto higher_limit = [&](std::uint32_t a, std::uint32_t b) {
    return flows_[a].limit > flows_[b].limit || (flows_[a].limit == flows_[b].limit && a > b);
  };
  by_cap_.assign(flows.begin(), flows.end());
  std::make_heap(by_cap_.begin(), by_cap_.end(), higher_limit);
  const auto drop_frozen_limits = [&] {
    while (!by_cap_.empty() && flows_[by_cap_.front()].frozen) {
      std::pop_heap(by_cap_.begin(), by_cap_.end(), higher_limit);
      by_cap_.pop_back();
    }
  };
  std::size_t unfrozen = flows.size();
  while (unfrozen > 0) {
    while (!shares_.empty()) {
      const ShareEntry& top = shares_.front();
      const Resource& res = resources_[top.resource];
      if (top.version == res.version && res.unfrozen_weight > 0.0) break;
      std::pop_heap(shares_.begin(), shares_.end(), later);
      shares_.pop_back();
    }
    // No shared resource left: the flows still unfrozen stop at their own limits.
    const double best_share = shares_.empty() ? std::numeric_limits<double>::infinity() : shares_.front().share;
    // Flows whose own limit is below the level at which the next resource saturates stop at it
    // first, every flow with the lowest limit at once (a collective's members share one cap).
    drop_frozen_limits();
    const double lowest = by_cap_.empty() ? best_share : std::min(best_share, flows_[by_cap_.front()].limit);
    STEPCAST_ASSERT(std::isfinite(lowest), "an unfrozen flow has neither a shared resource nor a limit");
    if (lowest < best_share) {
      while (!by_cap_.empty() && flows_[by_cap_.front()].limit == lowest) {
        const std::uint32_t f = by_cap_.front();
        std::pop_heap(by_cap_.begin(), by_cap_.end(), higher_limit);
        by_cap_.pop_back();
        if (flows_[f].frozen) continue;
        freeze(f, lowest);
        --unfrozen;
      }
    } else {
      for (const Crossing& c : resources_[shares_.front().resource].flows) {
        if (flows_[c.flow].frozen) continue;
        freeze(c.flow, best_share);
        --unfrozen;
      }
    }
    reshare();
  }
  for (const std::uint32_t r : resources) {
    STEPCAST_ASSERT(resources_[r].remaining >= -kCapacitySlack * resources_[r].capacity,
                    "max-min sharing must not load a resource beyond its capacity");
  }
}

BytesPerSecond MaxMinSharing::load(ResourceId resource) const {
  double sum = 0.0;
  for (const Crossing& c : resources_[resource].flows) sum += c.weight * flows_[c.flow].rate;
  return BytesPerSecond(sum);
}

}  // namespace stepcast::sim
