// The pipeline stage of an MoE plan that must fit: its routed-expert state follows the MoE blocks
// it holds, not the even split. SimuMax's DeepSeek-V3 run cut to 4 layers (1 dense, then 3 MoE:
// its launcher's --moe-layer-freq) at tp=1, pp=2, dp=4, ep=4 on 8 B200s put 1 MoE block on
// stage 0 and 2 on stage 1; its measured peak, 114.00 GiB over all ranks
// (MooreThreads/SimuMax docs/b200/b200_release_v1.2_summary.md), is stage 1's.
#include <doctest/doctest.h>

#include <filesystem>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace moe_stage_memory_test {

using namespace stepcast;

TEST_SUITE("cost.moe_stage_memory") {
  TEST_CASE("DeepSeek-V3 l4 at pp=2, ep=4: stage 1 holds 2 of the 3 MoE blocks and the peak") {
    const std::filesystem::path source = STEPCAST_SOURCE_DIR;
    const auto w = workload::load_workload(source / "tests/data/workloads/simumax-deepseek-v3-l4.json");
    const plan::Plan p = plan::resolve(
        plan::parse_plan("tp=1,pp=2,dp=4,ep=4,mbs=1,gbs=32,seq=4096,zero=1,grad-reduce=fp32,recompute=none,flash=on,"
                         "capacity-factor=1.0,loss=fused"),
        w, 8);
    plan::validate(p, w, 8);
    const cost::MoeStageMemory peak = cost::moe_peak_stage(w, p);
    CHECK(peak.stage == 1);
    CHECK(peak.moe_blocks == 2.0);
    // Stage 1's experts: 2 blocks x 256 experts x 3 x 7168 x 2048 / ep 4 = 5,637,144,576 parameters,
    // each 2 B of weight, 4 B of fp32 gradient and 12 B of Adam state, unsharded (edp = 4 / 4 = 1):
    // 18 B x 5,637,144,576 = 101,468,602,368 B beside the dense part's even share.
    const cost::MoeModelState even = cost::moe_state_split(w, p);
    CHECK(peak.model_state.total().value() - even.dense.total().value() == doctest::Approx(101468602368.0));
    // What the allocator holds of the whole breakdown lands within 3% of the measured peak.
    const double gib = cost::allocated_bytes(cost::estimate_memory(w, p)).value() / (1024.0 * 1024.0 * 1024.0);
    CHECK(gib == doctest::Approx(114.00).epsilon(0.03));
  }
}

}  // namespace moe_stage_memory_test
