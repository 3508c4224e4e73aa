// Max-min fair sharing: exact rates on hand-drawn graphs, weights for grouped flows, and
// re-rating only the component a change touches.
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/sim/max_min.hpp"

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
