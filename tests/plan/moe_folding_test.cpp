// Megatron-Core's MoE parallel folding with context parallel: the expert groups fold the stage's
// tp x cp x dp GPUs, so cp and ep may share GPUs (its MoE guide: "the traditional way with (CP=8,
// EP=8) needs at least 64 GPUs, for now it only requires 8 GPUs").
#include <doctest/doctest.h>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace moe_folding_test {

using namespace stepcast;

TEST_SUITE("plan.moe_folding") {
  TEST_CASE("cp=8 and ep=8 fold into the same 8 GPUs, each expert then with one replica (edp = 8 / 8)") {
    const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/mixtral-8x7b.json");
    const plan::Plan p = plan::resolve(plan::parse_plan("cp=8,ep=8,flash=on"), w, 8);
    CHECK(p.dp == 1);
    CHECK(plan::problems(p, w, 8).empty());
    CHECK(p.expert_dp() == 1);
    // cp=8, dp=2, ep=8 on 16 GPUs: edp = tp x cp x dp / (etp x ep) = 16 / 8 = 2.
    const plan::Plan q = plan::resolve(plan::parse_plan("cp=8,dp=2,ep=8,flash=on"), w, 16);
    CHECK(plan::problems(q, w, 16).empty());
    CHECK(q.expert_dp() == 2);
  }
}

}  // namespace moe_folding_test
