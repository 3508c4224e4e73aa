// The first line of an MoE plan's fit hint: its model state split between the routed experts and
// the dense layers, derived by hand (the changes it is told to try are fit_hint's, tested through
// the executable in newcomer_cli_test.cpp).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/report/moe_fit_hint.hpp"
#include "stepcast/workload/workload.hpp"

namespace moe_fit_hint_test {

using namespace stepcast;

TEST_SUITE("report.moe_fit_hint") {
  TEST_CASE("DeepSeek-V3 at dp=128, ep=8: the routed experts hold 1.21 TiB per GPU, the dense layers 260.08 GiB") {
    // Routed experts: (58 MoE blocks + 1 MTP module) x 256 x 3 x 7168 x 2048 = 665,183,059,968
    // parameters; per GPU at ep=8: 83,147,882,496, at 2 + 2 + 12 B (bf16 weights and gradients,
    // Adam's fp32 state unsharded at zero=0) = 1,330,366,119,936 B = 1.21 TiB. The rest of the
    // 682,636,465,152 parameters: 17,453,405,184 x 16 B = 279,254,482,944 B = 260.08 GiB.
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/deepseek-v3.json");
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=128,ep=8,flash=on,gbs=1024"), w, 128);
    const std::string hint = report::moe_fit_hint(p, w);
    CHECK(hint == "  model state per GPU: routed experts 1.21 TiB, dense layers 260.08 GiB\n");
  }
}

}  // namespace moe_fit_hint_test
