// Megatron-Core's all-to-all token dispatcher regroups what the dispatch all-to-all delivers: the
// rows arrive in blocks by source rank, each block ordered by expert, and the grouped GEMM wants
// them by local expert, so the dispatcher sorts the blocks when a rank holds more than one expert
// and restores the source order before the combine (token_dispatcher.py,
// MoEAlltoAllTokenDispatcher: "Permutation 2: AlltoAll output to expert input if
// num_local_experts > 1", sort_chunks_by_idxs with sort_input_by_local_experts, and
// restore_output_by_local_experts before the combine). The flex dispatcher (DeepEP, HybridEP)
// delivers the rows already grouped by expert. Sizes derived by hand on a 4-expert shape.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "stepcast/cost/operators.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace alltoall_regroup_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

// 2 layers, h = 1024, s = 1024, 4 routed experts, top-2, expert ffn 2048, gated.
workload::Workload tiny() { return workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json"); }

std::vector<cost::Operator> moe_layer(const workload::Workload& w, const std::string& text, int gpus) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, gpus);
  plan::validate(p, w, gpus);
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = true;
  return cost::layer_operators(*w.shape, c);
}

int count_named(const std::vector<cost::Operator>& ops, std::string_view name) {
  int n = 0;
  for (const cost::Operator& op : ops) n += op.name == name ? 1 : 0;
  return n;
}

constexpr std::string_view kSort = "regroup rows by expert (dispatch)";
constexpr std::string_view kRestore = "restore rows by source (combine)";

}  // namespace

TEST_SUITE("cost.alltoall_regroup") {
  TEST_CASE("ep=2 of 4 experts: the received rows are sorted by expert and restored, each a read and a write") {
    // dp=2, ep=2: a rank routes b s = 1024 tokens x top-2 = 2048 copies; the ep group's 4096
    // copies spread over 4 experts, 1024 each; a rank holds 2 experts and receives 2048 rows of
    // h = 1024: 2,097,152 elements, read and written once in 16-bit = 8,388,608 bytes.
    const auto w = tiny();
    const std::vector<cost::Operator> ops = moe_layer(w, "dp=2,ep=2,flash=on,moe-dispatcher=alltoall", 2);
    const cost::Operator sort = test::forward_op(ops, kSort);
    const cost::Operator restore = test::forward_op(ops, kRestore);
    CHECK(sort.elements == 2097152.0);
    CHECK(sort.bytes.value() == 8388608.0);
    CHECK(restore.bytes.value() == 8388608.0);
    CHECK(sort.kind == cost::OpKind::kMemory);
    // The backward runs each once more, the other way (the autograd of sort_chunks_by_idxs).
    CHECK(count_named(ops, "regroup rows by expert (dispatch) backward") == 1);
    CHECK(count_named(ops, "restore rows by source (combine) backward") == 1);
    // They keep nothing for the backward: the sorted rows are the expert GEMM's input, kept there.
    CHECK(sort.saved.value() == 0.0);
  }

  TEST_CASE("the sort sits between the dispatch's permute and the experts, the restore before the unpermute") {
    const auto w = tiny();
    const std::vector<cost::Operator> ops = moe_layer(w, "dp=2,ep=2,flash=on,moe-dispatcher=alltoall", 2);
    std::vector<std::string_view> forward;
    for (const cost::Operator& op : ops) {
      if (op.pass == cost::OpPass::kForward) forward.push_back(op.name);
    }
    const auto at = [&](std::string_view name) { return std::find(forward.begin(), forward.end(), name); };
    CHECK(at("token permute (dispatch)") < at(kSort));
    CHECK(at(kSort) < at("expert gate+up (grouped)"));
    CHECK(at("expert down (grouped)") < at(kRestore));
    CHECK(at(kRestore) < at("token unpermute (combine)"));
  }

  TEST_CASE("no regrouping with one expert a rank, nor under the flex dispatcher") {
    const auto w = tiny();
    // ep=4 of 4 experts: one expert a rank, whose rows arrive already together.
    CHECK(count_named(moe_layer(w, "dp=4,ep=4,flash=on,moe-dispatcher=alltoall", 4), kSort) == 0);
    // ep=1: the rank's own rows, which the permute put in expert order already.
    CHECK(count_named(moe_layer(w, "dp=2,ep=1,flash=on,moe-dispatcher=alltoall", 2), kSort) == 0);
    // The flex dispatcher hands the grouped GEMM its rows by expert.
    CHECK(count_named(moe_layer(w, "dp=2,ep=2,flash=on,moe-dispatcher=flex", 2), kSort) == 0);
    CHECK(count_named(moe_layer(w, "dp=2,ep=2,flash=on,moe-dispatcher=flex", 2), kRestore) == 0);
  }
}

}  // namespace alltoall_regroup_test
