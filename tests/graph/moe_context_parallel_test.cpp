// MoE with context parallel, bytes derived by hand: each rank dispatches only the b s / cp tokens
// it holds (over tp again under sequence parallel), so the all-to-all message halves at cp=2; the
// expert-TP all-gather gathers those; cp ranks fold into the expert data-parallel group.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/predict_plan.hpp"

namespace moe_context_parallel_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

// 2 layers, h = 1024, s = 1024, 4 routed experts, top-2, expert ffn 2048.
workload::Workload tiny() { return workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json"); }

graph::StepPrediction predict(const std::string& plan_text, int gpus) {
  const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", gpus);
  const auto w = tiny();
  const auto p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  return graph::predict_step(w, p, topo);
}

}  // namespace

TEST_SUITE("graph.moe_context_parallel") {
  TEST_CASE("cp=2, ep=2: each rank's dispatch all-to-all sends (b s / cp) x top-k x h x 2 B = 2 MiB, half of cp=1") {
    // cp=1 (dp=2): S = 1 x 1024 tokens x 2 x 1024 x 2 B = 4,194,304 B per rank and call.
    // cp=2 (dp=1): the rank holds 1024 / 2 = 512 tokens: S = 512 x 2 x 1024 x 2 = 2,097,152 B.
    const auto whole = predict("dp=2,ep=2,flash=on,gbs=2", 2);
    const auto halves = predict("cp=2,ep=2,flash=on,gbs=2", 2);
    CHECK(test::comm_term(whole, "MoE dispatch all-to-all (forward").size.value() == 4194304.0);
    CHECK(test::comm_term(halves, "MoE dispatch all-to-all (forward").size.value() == 2097152.0);
    CHECK(test::comm_term(halves, "MoE combine all-to-all (backward").size.value() == 2097152.0);
    CHECK(test::comm_term(halves, "MoE dispatch all-to-all (forward").ranks == 2);
  }

  TEST_CASE("cp=2, tp=2, sp=on, ep=2: the all-to-all sends b s / (cp tp) tokens, etp gathers 2 ranks' copies") {
    // 4 GPUs, etp = tp = 2: a GPU routes 1024 / 2 / 2 = 256 tokens; S(all-to-all) =
    // 256 x 2 x 1024 x 2 B = 1,048,576 B. The expert-TP all-gather over etp = 2 collects both
    // ranks' received copies, S = 256 x 2 (etp) x 2 (top-k) x 1024 x 2 B = 2,097,152 B.
    const auto p = predict("tp=2,sp=on,cp=2,ep=2,flash=on,gbs=1", 4);
    CHECK(test::comm_term(p, "MoE dispatch all-to-all (forward").size.value() == 1048576.0);
    CHECK(test::comm_term(p, "MoE expert-TP all-gather (forward").size.value() == 2097152.0);
    CHECK(test::comm_term(p, "MoE expert-TP all-gather (forward").ranks == 2);
  }

  TEST_CASE("cp=2, dp=2, ep=2: the expert gradients reduce over edp = tp x cp x dp / (etp x ep) = 2 ranks") {
    // Megatron-Core's parallel_state.py: expert data parallel = tp x cp x dp x pp / (etp x ep x pp).
    const auto p = predict("cp=2,dp=2,ep=2,flash=on,gbs=4", 4);
    const graph::CommTerm& grads = test::comm_term(p, "expert gradient all-reduce");
    CHECK(grads.ranks == 2);
  }
}

}  // namespace moe_context_parallel_test
