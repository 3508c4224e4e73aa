// The short form of a searched plan is what a user pastes into `predict --plan`: read back by the
// compact-form parser, every candidate of a search space must be the plan the search priced.
// DeepSeek-V3 on 4 DGX H100 nodes exercises the fields a dense space leaves out: expert layouts,
// the flex dispatcher, uneven pipeline splits and the latent-attention recompute modules.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/planner/candidates.hpp"
#include "stepcast/report/plan_reports.hpp"
#include "stepcast/workload/workload.hpp"

namespace plan_summary_test {

using namespace stepcast;

TEST_SUITE("report.plan_summary") {
  TEST_CASE("every candidate of a DeepSeek-V3 space reads back from its short form as the same plan") {
    const workload::Workload w =
        workload::load_workload(std::filesystem::path(STEPCAST_SOURCE_DIR) / "workloads/deepseek-v3.json");
    planner::SearchSpace space;
    space.gpus = 32;
    space.gpus_per_node = 8;
    space.global_batch = 64;
    space.seq_len = 4096;
    space.max_micro_batch = 2;
    space.base.flash_attention = true;
    int with_modules = 0;
    int with_flex = 0;
    for (const plan::Plan& p : planner::enumerate_candidates(space, w)) {
      plan::Plan read = plan::parse_plan(report::plan_summary(p));
      read.global_batch = space.global_batch;
      read.seq_len = space.seq_len;
      read.flash_attention = true;
      read = plan::resolve(read, w, space.gpus);
      REQUIRE_MESSAGE(plan::to_string(read) == plan::to_string(p), report::plan_summary(p));
      with_modules += p.recompute_modules_given ? 1 : 0;
      with_flex += p.moe_dispatcher == plan::MoeDispatcher::kFlex ? 1 : 0;
    }
    CHECK(with_modules > 0);
    CHECK(with_flex > 0);
  }
}

}  // namespace plan_summary_test
