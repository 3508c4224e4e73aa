// optimizer=muon against hand derivations on Llama 3 8B and Mixtral 8x7B, as Megatron-Core runs
// Muon (megatron/core/optimizer/muon.py, OptimizerConfig defaults): 5 Newton-Schulz steps per
// matrix, each A = X X^T (2 s^2 l FLOPs for an s x l matrix, s the shorter side), A^2 (2 s^3) and
// (bA + cA^2) X (2 s^2 l): 5 x (4 s^2 l + 2 s^3) FLOPs; the fused QKV weight as queries, keys and
// values apart (muon_split_qkv), gate+up as one matrix (muon_split_fc1 off), each routed expert
// apart; under zero=1 whole matrices spread over the data-parallel (experts: expert-data-parallel)
// ranks. State: fp32 master + momentum (8 B) a matrix parameter, Adam's 12 B on the embeddings,
// output layer and final norm.
//
// Llama 3 8B (workloads/llama3-8b.json): h = 4096, 32 query and 8 kv heads of 128, SwiGLU ffn
// 14336, 32 layers, vocabulary 128256 untied. Its matrices per layer, Newton-Schulz FLOPs:
//   q 4096 x 4096:          5 x 6 x 4096^3                          =  2,061,584,302,080
//   k, v 4096 x 1024:       2 x 5 x (4 x 1024^2 x 4096 + 2 x 1024^3) =    193,273,528,320
//   proj 4096 x 4096:                                                 =  2,061,584,302,080
//   gate+up 4096 x 28672:   5 x (4 x 4096^2 x 28672 + 2 x 4096^3)   = 10,307,921,510,400
//   down 14336 x 4096:      5 x (4 x 4096^2 x 14336 + 2 x 4096^3)   =  5,497,558,138,880
//   per layer                                                         = 20,121,921,781,760
// Parameters: 32 x 218,112,000 in the layers (6,979,584,000) + 2 x 128256 x 4096 + 4096
// (1,050,677,248) = 8,030,261,248.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/muon.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace muon_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

constexpr double kLlama3Parameters = 8'030'261'248.0;
constexpr double kLlama3LayerNewtonSchulz = 20'121'921'781'760.0;

workload::Workload load(const std::string& name) { return workload::load_workload(kRoot + "/workloads/" + name); }

plan::Plan resolved(const std::string& text, const workload::Workload& w, int gpus) {
  plan::Plan p = plan::resolve(plan::parse_plan(text), w, gpus);
  plan::validate(p, w, gpus);
  return p;
}

double newton_schulz_flops(const workload::Workload& w, const plan::Plan& p) {
  double sum = 0.0;
  for (const cost::Operator& op : cost::newton_schulz_operators(w, p)) sum += op.flops.value();
  return sum;
}

}  // namespace

TEST_SUITE("cost.muon") {
  TEST_CASE("Llama 3 8B on 8 GPUs, zero=1: 8 B a matrix parameter, Adam's 12 on the embeddings, sharded by 8") {
    const auto w = load("llama3-8b.json");
    REQUIRE(w.parameters == doctest::Approx(kLlama3Parameters).epsilon(1e-12));
    const auto muon = cost::model_state(w, resolved("dp=8,zero=1,optimizer=muon", w, 8));
    const auto adam = cost::model_state(w, resolved("dp=8,zero=1", w, 8));
    // (8 x 8,030,261,248 + 4 x 1,050,677,248) / 8 = 8,555,599,872 B; Adam 12 x 8,030,261,248 / 8.
    CHECK(muon.optimizer_state.value() == doctest::Approx(8'555'599'872.0).epsilon(1e-12));
    CHECK(adam.optimizer_state.value() == doctest::Approx(12'045'391'872.0).epsilon(1e-12));
    CHECK(muon.parameters.value() == doctest::Approx(adam.parameters.value()));
    CHECK(muon.gradients.value() == doctest::Approx(adam.gradients.value()));
  }

  TEST_CASE("Llama 3 8B: Newton-Schulz FLOPs per GPU, spread over the data-parallel ranks under zero=1") {
    const auto w = load("llama3-8b.json");
    // zero=1 on 8 ranks: 32 layers x 20,121,921,781,760 / 8 = 80,487,687,127,040 FLOPs a GPU.
    CHECK(newton_schulz_flops(w, resolved("dp=8,zero=1,optimizer=muon", w, 8)) ==
          doctest::Approx(32.0 * kLlama3LayerNewtonSchulz / 8.0).epsilon(1e-12));
    // Without the distributed optimizer every rank orthogonalizes every matrix.
    CHECK(newton_schulz_flops(w, resolved("dp=8,zero=0,optimizer=muon", w, 8)) ==
          doctest::Approx(32.0 * kLlama3LayerNewtonSchulz).epsilon(1e-12));
    // Adam runs none.
    CHECK(cost::newton_schulz_operators(w, resolved("dp=8,zero=1", w, 8)).empty());
  }

  TEST_CASE("Llama 3 8B at tp=2: each shard orthogonalized alone (blockwise)") {
    const auto w = load("llama3-8b.json");
    // Column-parallel q, k, v and gate+up split their outputs, row-parallel proj and down their
    // inputs: q 4096 x 2048, k and v 4096 x 512, proj 2048 x 4096, gate+up 4096 x 14336, down
    // 7168 x 4096; 4 data-parallel ranks under zero=1.
    const auto ns = [](double a, double b) {
      const double s = a < b ? a : b;
      const double l = a < b ? b : a;
      return 5.0 * (4.0 * s * s * l + 2.0 * s * s * s);
    };
    const double layer = ns(4096, 2048) + 2.0 * ns(4096, 512) + ns(2048, 4096) + ns(4096, 14336) + ns(7168, 4096);
    CHECK(newton_schulz_flops(w, resolved("dp=4,tp=2,zero=1,optimizer=muon", w, 8)) ==
          doctest::Approx(32.0 * layer / 4.0).epsilon(1e-12));
  }

  TEST_CASE("Mixtral 8x7B on 8 GPUs, ep=8, zero=1: each GPU orthogonalizes its own expert, the rest over 8") {
    const auto w = load("mixtral-8x7b.json");
    // One routed expert a layer on each GPU, no other rank holding it (edp = 1): 32 x (gate+up
    // 10,307,921,510,400 + down 5,497,558,138,880) = 505,775,348,776,960. Attention (Llama 3 8B's
    // 4,316,442,132,480) and the 4096 x 8 router (5 x (4 x 64 x 4096 + 2 x 512) = 5,248,000) on
    // 8 data-parallel ranks: 32 x 4,316,447,380,480 / 8 = 17,265,789,521,920.
    CHECK(newton_schulz_flops(w, resolved("dp=8,ep=8,zero=1,optimizer=muon", w, 8)) ==
          doctest::Approx(505'775'348'776'960.0 + 17'265'789'521'920.0).epsilon(1e-12));
  }
}

}  // namespace muon_test
