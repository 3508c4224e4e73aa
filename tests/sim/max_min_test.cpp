// Max-min fair sharing: exact rates on hand-drawn graphs, weights for grouped flows, re-rating
// only the component a change touches, and random starts and ends against textbook progressive filling.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/sim/max_min.hpp"

namespace max_min_test {

using namespace stepcast;
using namespace stepcast::sim;

TEST_SUITE("sim.max_min") {
  TEST_CASE("three flows, three different bottlenecks: rates by progressive filling") {
    // Links (GB/s): L1 = 6, L2 = 4.5, L3 = 2.  Flows: A over {L1}, B over {L1, L2}, C over {L2, L3}.
    // Round 1 fair shares: L1 6/2 = 3, L2 4.5/2 = 2.25, L3 2/1 = 2 -> L3 saturates, C = 2.
    // Round 2: L1 6/2 = 3, L2 (4.5-2)/1 = 2.5 -> L2 saturates, B = 2.5.
    // Round 3: L1 (6-2.5)/1 = 3.5 -> A = 3.5.  Check: L1 3.5+2.5 = 6, L2 2.5+2 = 4.5, L3 2.
    MaxMinSharing s;
    const ResourceId l1 = s.add_resource(gbyte_per_s(6));
    const ResourceId l2 = s.add_resource(gbyte_per_s(4.5));
    const ResourceId l3 = s.add_resource(gbyte_per_s(2));
    const std::vector<Usage> ua{{l1, 1}};
    const std::vector<Usage> ub{{l1, 1}, {l2, 1}};
    const std::vector<Usage> uc{{l2, 1}, {l3, 1}};
    const SharedFlowId a = s.add_flow(ua);
    const SharedFlowId b = s.add_flow(ub);
    const SharedFlowId c = s.add_flow(uc);
    std::vector<SharedFlowId> changed;
    s.solve(changed);
    CHECK(changed == std::vector<SharedFlowId>{a, b, c});
    CHECK(s.rate(a).value() == doctest::Approx(3.5e9));
    CHECK(s.rate(b).value() == doctest::Approx(2.5e9));
    CHECK(s.rate(c).value() == doctest::Approx(2.0e9));
    CHECK(s.load(l1).value() == doctest::Approx(6e9));
    CHECK(s.load(l2).value() == doctest::Approx(4.5e9));
    CHECK(s.load(l3).value() == doctest::Approx(2e9));

    SUBCASE("when C ends, A and B are re-rated and an unrelated flow is not") {
      const ResourceId l4 = s.add_resource(gbyte_per_s(1));
      const std::vector<Usage> ud{{l4, 1}};
      const SharedFlowId d = s.add_flow(ud);
      changed.clear();
      s.solve(changed);
      CHECK(changed == std::vector<SharedFlowId>{d});
      s.remove_flow(c);
      changed.clear();
      s.solve(changed);
      // Now L1 6/2 = 3 and L2 4.5/1 = 4.5: L1 saturates first and A = B = 3; D keeps 1.
      CHECK(changed == std::vector<SharedFlowId>{a, b});
      CHECK(s.rate(a).value() == doctest::Approx(3e9));
      CHECK(s.rate(b).value() == doctest::Approx(3e9));
      CHECK(s.rate(d).value() == doctest::Approx(1e9));
    }
  }

  TEST_CASE("a flow of two members weighs twice: same rates as two separate flows") {
    // One link of 9 GB/s: a grouped flow with 2 members plus a single flow: 9/3 = 3 each member.
    MaxMinSharing s;
    const ResourceId l = s.add_resource(gbyte_per_s(9));
    const std::vector<Usage> group{{l, 2}};
    const std::vector<Usage> single{{l, 1}};
    const SharedFlowId g = s.add_flow(group);
    const SharedFlowId f = s.add_flow(single);
    std::vector<SharedFlowId> changed;
    s.solve(changed);
    CHECK(s.rate(g).value() == doctest::Approx(3e9));
    CHECK(s.rate(f).value() == doctest::Approx(3e9));
    CHECK(s.load(l).value() == doctest::Approx(9e9));
  }

  TEST_CASE("removed flow ids are reused and a lone flow gets its whole bottleneck") {
    MaxMinSharing s;
    const ResourceId fast = s.add_resource(gbyte_per_s(100));
    const ResourceId slow = s.add_resource(gbyte_per_s(25));
    const std::vector<Usage> both{{fast, 1}, {slow, 1}};
    const SharedFlowId a = s.add_flow(both);
    std::vector<SharedFlowId> changed;
    s.solve(changed);
    CHECK(s.rate(a).value() == doctest::Approx(25e9));
    s.remove_flow(a);
    const SharedFlowId b = s.add_flow(both);
    CHECK(b == a);
    CHECK(s.live_flows() == 1);
  }
}

namespace {

// Textbook progressive filling (Bertsekas and Gallager 6.5.2) over every resource at once, each
// flow's cap a resource of its own: the reference the incremental solver must match.
std::vector<double> reference_rates(const std::vector<double>& capacity, const std::vector<std::vector<Usage>>& flows,
                                    const std::vector<double>& caps) {
  const std::size_t n = flows.size();
  std::vector<double> rate(n, 0.0);
  std::vector<bool> frozen(n, false);
  std::vector<double> remaining = capacity;
  std::size_t left = n;
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < capacity.size(); ++r) {
      double weight = 0.0;
      for (std::size_t f = 0; f < n; ++f) {
        for (const Usage& u : flows[f]) {
          if (!frozen[f] && u.resource == r) weight += u.weight;
        }
      }
      if (weight > 0.0) level = std::min(level, remaining[r] / weight);
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (!frozen[f]) level = std::min(level, caps[f]);
    }
    // Freeze every flow that a resource at this level or its own cap stops.
    std::vector<bool> stop(n, false);
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      stop[f] = caps[f] <= level * (1 + 1e-12);
      for (const Usage& u : flows[f]) {
        double weight = 0.0;
        for (std::size_t g = 0; g < n; ++g) {
          for (const Usage& v : flows[g]) {
            if (!frozen[g] && v.resource == u.resource) weight += v.weight;
          }
        }
        if (remaining[u.resource] / weight <= level * (1 + 1e-12)) stop[f] = true;
      }
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (!stop[f]) continue;
      frozen[f] = true;
      rate[f] = level;
      --left;
      for (const Usage& u : flows[f]) remaining[u.resource] -= u.weight * level;
    }
  }
  return rate;
}

}  // namespace

TEST_SUITE("sim.max_min") {
  TEST_CASE("a resource a flow crosses alone limits it like a cap, and stops when another flow shares it") {
    // A crosses P1 = 8 and P2 = 12 GB/s alone and S = 10 with B, which also crosses Q = 3 alone.
    // Round 1: S's share 10/2 = 5; B's private limit 3 < 5 stops B at 3. Round 2: S has 7 left
    // for A alone, under A's private 8: A = 7.
    MaxMinSharing s;
    const ResourceId p1 = s.add_resource(gbyte_per_s(8));
    const ResourceId p2 = s.add_resource(gbyte_per_s(12));
    const ResourceId sh = s.add_resource(gbyte_per_s(10));
    const ResourceId q = s.add_resource(gbyte_per_s(3));
    const std::vector<Usage> ua{{p1, 1}, {p2, 1}, {sh, 1}};
    const std::vector<Usage> ub{{sh, 1}, {q, 1}};
    const SharedFlowId a = s.add_flow(ua);
    const SharedFlowId b = s.add_flow(ub);
    std::vector<SharedFlowId> changed;
    s.solve(changed);
    CHECK(s.rate(a).value() == doctest::Approx(7e9));
    CHECK(s.rate(b).value() == doctest::Approx(3e9));
    // C joins over P1: P1 is shared, 8/2 = 4, and A's private limit is now P2's 12. B's limit 3
    // is under both shares (S 5, P1 4): B = 3; then S has 7 for A, P1 4: A = C = 4.
    const std::vector<Usage> uc{{p1, 1}};
    const SharedFlowId c = s.add_flow(uc);
    changed.clear();
    s.solve(changed);
    CHECK(s.rate(a).value() == doctest::Approx(4e9));
    CHECK(s.rate(c).value() == doctest::Approx(4e9));
    CHECK(s.rate(b).value() == doctest::Approx(3e9));
    // B ends: S is A's alone again (limit min(12, 10) = 10); P1 8/2 = 4 still binds A and C.
    s.remove_flow(b);
    changed.clear();
    s.solve(changed);
    CHECK(s.rate(a).value() == doctest::Approx(4e9));
    // C ends: A alone on every resource, bound by P1: 8.
    s.remove_flow(c);
    changed.clear();
    s.solve(changed);
    CHECK(changed == std::vector<SharedFlowId>{a});
    CHECK(s.rate(a).value() == doctest::Approx(8e9));
    // D starts on S, shared with A, and on R = 50 alone: S's share 10/2 = 5 is under both
    // limits (A 8, D 50), so A = D = 5. When A ends, S is D's alone and bounds it: 10.
    const ResourceId r = s.add_resource(gbyte_per_s(50));
    const std::vector<Usage> ud{{sh, 1}, {r, 1}};
    const SharedFlowId d = s.add_flow(ud);
    changed.clear();
    s.solve(changed);
    CHECK(s.rate(a).value() == doctest::Approx(5e9));
    CHECK(s.rate(d).value() == doctest::Approx(5e9));
    s.remove_flow(a);
    changed.clear();
    s.solve(changed);
    CHECK(s.rate(d).value() == doctest::Approx(10e9));
  }

  TEST_CASE("starts and ends in any order give the textbook progressive filling's rates") {
    // 300 random steps over 16 resources: flows of 1 to 4 resources with weights 1-3 and some
    // caps start and end (as many ends as starts, so that resources often go back to one flow);
    // after each solve every live flow's rate is the reference's.
    std::mt19937_64 rng(7);
    const auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    MaxMinSharing s;
    std::vector<double> capacity;
    for (int r = 0; r < 16; ++r) capacity.push_back(1e9 * uniform(1, 6));
    for (const double c : capacity) s.add_resource(BytesPerSecond(c));
    struct Live {
      SharedFlowId id;
      std::vector<Usage> usages;
      double cap;
    };
    std::vector<Live> live;
    std::vector<SharedFlowId> changed;
    for (int step = 0; step < 300; ++step) {
      if (!live.empty() && uniform(0, 1) == 0) {
        const auto k = static_cast<std::size_t>(uniform(0, static_cast<int>(live.size()) - 1));
        s.remove_flow(live[k].id);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        std::vector<Usage> usages;
        std::vector<int> pool(16);
        std::iota(pool.begin(), pool.end(), 0);
        std::shuffle(pool.begin(), pool.end(), rng);
        const int count = uniform(1, 4);
        for (int i = 0; i < count; ++i) {
          usages.push_back({static_cast<ResourceId>(pool[static_cast<std::size_t>(i)]), double(uniform(1, 3))});
        }
        const double cap = uniform(0, 3) == 0 ? 1e9 * uniform(1, 4) : std::numeric_limits<double>::infinity();
        live.push_back({s.add_flow(usages, BytesPerSecond(cap)), usages, cap});
      }
      changed.clear();
      s.solve(changed);
      std::vector<std::vector<Usage>> flows;
      std::vector<double> caps;
      for (const Live& l : live) {
        flows.push_back(l.usages);
        caps.push_back(l.cap);
      }
      const std::vector<double> expected = reference_rates(capacity, flows, caps);
      for (std::size_t i = 0; i < live.size(); ++i) {
        CHECK(s.rate(live[i].id).value() == doctest::Approx(expected[i]).epsilon(1e-9));
      }
    }
  }
}

}  // namespace max_min_test
