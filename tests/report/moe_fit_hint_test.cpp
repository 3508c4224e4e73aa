// What an MoE plan that does not fit is told to try: the levers of its larger part, FSDP among them
// while the plan does not yet shard parameters.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/report/moe_fit_hint.hpp"
#include "stepcast/workload/workload.hpp"

using namespace stepcast;

TEST_SUITE("report.moe_fit_hint") {
  TEST_CASE("DeepSeek-V3 at dp=128, ep=8: the routed experts hold 1.21 TiB per GPU, so a larger ep, zero=1, fsdp, pp") {
    // Routed experts: (58 MoE blocks + 1 MTP module) x 256 x 3 x 7168 x 2048 = 665,183,059,968
    // parameters; per GPU at ep=8: 83,147,882,496, at 2 + 2 + 12 B (bf16 weights and gradients,
    // Adam's fp32 state unsharded at zero=0) = 1,330,366,119,936 B = 1.21 TiB. The rest of the
    // 682,636,465,152 parameters: 17,453,405,184 x 16 B = 279,254,482,944 B = 260.08 GiB.
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/deepseek-v3.json");
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=128,ep=8,flash=on,gbs=1024"), w, 128);
    const std::string hint = report::moe_fit_hint(p, w);
    CHECK(hint.find("routed experts 1.21 TiB, dense layers 260.08 GiB") != std::string::npos);
    // ep must divide the 256 experts and fold into the 128 GPUs: 16, 32, 64, 128.
    CHECK(hint.find("try ep=16 or up to 128 (now 8)") != std::string::npos);
    CHECK(hint.find("try zero=1") != std::string::npos);  // edp = 128 / 8 = 16 ranks to shard over
    // FSDP shards the experts' parameters and gradients over the same 16 ranks.
    CHECK(hint.find("try fsdp=full (or zero=3): the experts' parameters and gradients sharded over their 16 expert "
                    "data-parallel ranks") != std::string::npos);
  }

  TEST_CASE("Mixtral 8x22B at its largest ep: expert tensor parallel instead") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/mixtral-8x22b.json");
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=32,ep=8,zero=1,gbs=128"), w, 32);
    const std::string hint = report::moe_fit_hint(p, w);
    CHECK(hint.find("try ep=") == std::string::npos);  // 8 experts: no ep above 8
    CHECK(hint.find("try a larger etp= (now 1)") != std::string::npos);
    CHECK(hint.find("try zero=1") == std::string::npos);  // already sharded
    // edp = tp x dp / (etp x ep) = 32 / 8 = 4 ranks the experts could shard their parameters over.
    CHECK(hint.find("try fsdp=full (or zero=3): the experts' parameters and gradients sharded over their 4 expert "
                    "data-parallel ranks") != std::string::npos);
  }
}
