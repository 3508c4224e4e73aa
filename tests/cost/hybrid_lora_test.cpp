// LoRA on a dense hybrid (Nemotron-H, Nemotron Nano v2), as Megatron-Bridge's recipes run it:
// the default targets (linear_qkv, linear_proj, linear_fc1, linear_fc2) adapt the attention and
// MLP layers; the Nemotron-H recipes add the Mamba-2 mixers' in_proj and out_proj
// (nemotron_nano_v2.py, mamba_target_modules). An adapter of rank r beside a k x n linear trains
// r (k + n) parameters.
//
// The stack "M*-M" of Nemotron 3 Nano's shapes without its experts (workloads/nemotron-3-nano.json:
// h = 2688; 32 query and 2 key/value heads of 128; a squared-ReLU MLP of 1856; Mamba-2 64 heads
// of 64, 8 groups of state 128), tp = 1, (k, n) of each linear:
//   attention: qkv (2688, (32 + 2 x 2) x 128 = 4608), proj (4096, 2688): k + n = 7296 + 6784
//   MLP:       fc1 (2688, 1856), fc2 (1856, 2688):                      k + n = 4544 + 4544
//   Mamba-2:   in_proj (2688, 2 x 4096 + 2 x 8 x 128 + 64 = 10304), out_proj (4096, 2688):
//                                                                        k + n = 12992 + 6784
// At r = 32: attention 450,560, MLP 290,816, each Mamba-2 layer 632,832.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/peft.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace hybrid_lora_test {

using namespace stepcast;

namespace {

workload::Workload dense_hybrid() {
  workload::Workload w =
      workload::load_workload(std::filesystem::path(STEPCAST_SOURCE_DIR) / "workloads/nemotron-3-nano.json");
  w.shape->moe.reset();
  w.shape->hybrid->pattern = "M*-M";
  w.shape->layers = 4;
  return w;
}

plan::Plan resolved(const workload::Workload& w, const std::string& text) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 1);
  plan::validate(p, w, 1);
  return p;
}

}  // namespace

TEST_SUITE("cost.hybrid_lora") {
  TEST_CASE("the default targets adapt the attention and MLP layers: 450,560 + 290,816 parameters") {
    const workload::Workload w = dense_hybrid();
    const auto share = cost::parameters_per_model_rank(w, resolved(w, "peft=lora,seq=2048,gbs=8"));
    CHECK(share.trained == 450'560.0 + 290'816.0);
  }

  TEST_CASE("in_proj and out_proj add 632,832 parameters in each of the two Mamba-2 layers") {
    const workload::Workload w = dense_hybrid();
    const auto share = cost::parameters_per_model_rank(
        w, resolved(w, "peft=lora,lora-targets=qkv+proj+fc1+fc2+in_proj+out_proj,seq=2048,gbs=8"));
    CHECK(share.trained == 450'560.0 + 290'816.0 + 2.0 * 632'832.0);
  }

  TEST_CASE("a frozen hybrid drops one pass of its weights' FLOPs and keeps the scores' and the scans'") {
    // The weights' forward FLOPs a token: 2 x (attention 2688 x 4608 + 4096 x 2688 = 23,396,352;
    // MLP 2 x 2688 x 1856 = 9,977,856; two Mamba-2 layers 2 x (2688 x 10304 + 4096 x 2688) =
    // 77,414,400; logits 2688 x 131,072 = 352,321,536) = 2 x 463,110,144. LoRA computes no weight
    // gradient: the model FLOPs fall by one such pass over the step's 8 x 2048 tokens.
    const workload::Workload w = dense_hybrid();
    const double full = cost::step_flops(*w.shape, resolved(w, "seq=2048,gbs=8")).model.value();
    const double lora = cost::step_flops(*w.shape, resolved(w, "peft=lora,seq=2048,gbs=8")).model.value();
    CHECK(full - lora == doctest::Approx(8.0 * 2048.0 * 2.0 * 463'110'144.0));
  }
}

}  // namespace hybrid_lora_test
