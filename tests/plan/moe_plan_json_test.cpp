// MoE keys in a JSON plan: fractions (a capacity factor of 1.25, Switch Transformer's
// evaluation setting, Fedus et al. 2022 Table 1) read as the compact form reads them.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/plan/plan.hpp"

namespace moe_plan_json_test {

using namespace stepcast;

TEST_SUITE("plan.moe_json") {
  TEST_CASE("a JSON plan takes a fractional capacity factor and load factor, and whole degrees as numbers") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const plan::Plan p = plan::load_plan(root + "/tests/plan/data/moe_fractions_plan.json");
    REQUIRE(p.capacity_factor.has_value());
    CHECK(*p.capacity_factor == 1.25);
    CHECK(p.moe_imbalance == 1.5);
    CHECK(p.ep == 8);
    CHECK(p.dp == 8);
    CHECK(p.micro_batch_size == 2);
    // The same plan in the compact form.
    const plan::Plan q = plan::parse_plan("dp=8,ep=8,capacity-factor=1.25,moe-imbalance=1.5,mbs=2");
    CHECK(*q.capacity_factor == *p.capacity_factor);
    CHECK(q.moe_imbalance == p.moe_imbalance);
  }
}

}  // namespace moe_plan_json_test
