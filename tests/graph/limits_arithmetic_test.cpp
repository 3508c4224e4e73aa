// Inputs at the readers' limits (workload_limits.cpp, plan_limits.cpp, topology_json.cpp) priced
// end to end: the step's figures stay finite and no count is multiplied past an int. The
// sanitizer build runs this under UBSan, which stops on any signed overflow; outside it the
// figures are checked against the FLOP count by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "stepcast/cost/compute.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace limits_arithmetic_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

}  // namespace

TEST_SUITE("graph.limits_arithmetic") {
  TEST_CASE("Llama-2 7B at 2^36 tokens per step (2^9 sequences of 2^27 tokens) on 8 H100s prices to finite figures") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const auto topo = topology::load_topology(kSource / "topologies/dgx-h100.json", 1);
    plan::Plan p = plan::parse_plan("dp=8,recompute=full");
    p.global_batch = 1 << 9;
    p.seq_len = 1 << 27;
    p = plan::resolve(p, w, 8);
    REQUIRE(plan::problems(p, w, 8).empty());
    const graph::StepPrediction s = graph::predict_step(w, p, topo);
    CHECK(std::isfinite(s.step_time.value()));
    CHECK(s.step_time.value() > 0.0);
    CHECK(std::isfinite(s.memory.total.value()));
    // The model FLOPs at least 6 x parameters x tokens (Kaplan et al. 2020): 6 x 6.74e9 x 2^36 = 2.78e21.
    CHECK(s.compute_detail.flops.model.value() >= 6.0 * 6.738e9 * 68719476736.0);
  }

  TEST_CASE("Llama-2 7B at 2^16 micro-batches (2^19 sequences of 2^17 tokens on dp=8) prices to finite figures") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const auto topo = topology::load_topology(kSource / "topologies/dgx-h100.json", 1);
    plan::Plan p = plan::parse_plan("dp=8");
    p.global_batch = 1 << 19;
    p.seq_len = 1 << 17;
    p = plan::resolve(p, w, 8);
    REQUIRE(plan::problems(p, w, 8).empty());
    REQUIRE(p.micro_batches() == 1 << 16);
    const graph::StepPrediction s = graph::predict_step(w, p, topo);
    CHECK(std::isfinite(s.step_time.value()));
    CHECK(s.compute_detail.flops.model.value() >= 6.0 * 6.738e9 * 68719476736.0);
  }

  TEST_CASE("a shape with every count at its limit counts finite parameters and FLOPs") {
    workload::TransformerShape s;
    s.layers = 1 << 14;
    s.hidden = 1 << 20;
    s.heads = 1 << 14;
    s.kv_heads = 1 << 14;
    s.ffn_hidden = 1 << 22;
    s.gated_mlp = true;
    s.vocab = 1 << 24;
    s.seq_len = 1 << 27;
    s.explicit_head_dim = 1 << 16;
    s.moe = workload::MoeShape{};
    s.moe->experts = 1 << 20;
    s.moe->top_k = 1 << 20;
    s.moe->expert_ffn = 1 << 22;
    s.moe->shared_experts = 1 << 10;
    s.moe->shared_ffn = 1 << 22;
    const double params = workload::parameter_count(s);
    CHECK(std::isfinite(params));
    // The routed experts alone: l x E x 3 x h x f = 2^14 x 2^20 x 3 x 2^20 x 2^22 = 3 x 2^76.
    CHECK(params >= 3.0 * std::ldexp(1.0, 76));
    plan::Plan p;
    p.dp = 1;
    p.global_batch = 1 << 9;
    p.seq_len = 1 << 27;
    CHECK(std::isfinite(cost::step_flops(s, p).model.value()));
  }
}

}  // namespace limits_arithmetic_test
