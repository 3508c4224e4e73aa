// Megatron-Core's recompute_modules under recompute=selective (transformer_config.py): what each
// module stops keeping and which kernels it runs again, derived by hand for one layer and one
// micro-batch of 4,096 tokens on one GPU in bf16.
// - "mlp" (normal checkpointing of a dense block's MLP) keeps only the MLP's input;
// - "layernorm" (output-discarding) drops the norm outputs the next GEMMs keep;
// - "mla_up_proj" (output-discarding) drops the Q, K and V latent attention's up projections
//   and RoPE make, which the attention core keeps, and runs those again;
// - "moe_act" drops the experts' activation output, the down GEMM's input;
// - "shared_experts" keeps nothing of the shared experts beyond the router's input;
// - "moe" (normal checkpointing of the whole MoE layer, MoELayer's moe_layer_recompute) keeps only
//   the router's input and runs every kernel of the layer's forward again.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace recompute_modules_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

std::vector<cost::Operator> layer(const workload::Workload& w, const std::string& text, bool moe = false) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 1);
  plan::validate(p, w, 1);
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = moe;
  return cost::layer_operators(*w.shape, c);
}

/// moe-2gpu (h 1024, s 1024, 4 experts of 2048, top-2) with one shared expert of 1024.
workload::Workload moe_with_shared_expert() {
  auto w = workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json");
  w.shape->moe->shared_experts = 1;
  w.shape->moe->shared_ffn = 1024;
  return w;
}

double saved(const std::vector<cost::Operator>& ops) { return test::forward_saved_bytes(ops); }

std::multiset<std::string> recomputed(const std::vector<cost::Operator>& ops) {
  std::multiset<std::string> out;
  for (const cost::Operator& op : ops) {
    if (op.pass == cost::OpPass::kRecompute) out.insert(std::string(op.name));
  }
  return out;
}

double recomputed_gemm_flops(const std::vector<cost::Operator>& ops) {
  double out = 0.0;
  for (const cost::Operator& op : ops) {
    if (op.pass == cost::OpPass::kRecompute && op.kind == cost::OpKind::kGemm) out += op.flops.value();
  }
  return out;
}

}  // namespace

TEST_SUITE("cost.recompute_modules") {
  TEST_CASE("the compact form: Megatron-Core's names joined by '+', printed in its order") {
    const plan::Plan p = plan::parse_plan("recompute=selective,recompute-modules=mlp+mla_up_proj");
    CHECK(p.recompute_modules == (plan::kRecomputeMlaUpProj | plan::kRecomputeMlp));
    CHECK(plan::to_string(p).find(",recompute-modules=mla_up_proj+mlp") != std::string::npos);
    CHECK(plan::parse_plan("recompute=selective").recompute_modules == plan::kRecomputeCoreAttn);
    CHECK(plan::to_string(plan::parse_plan("recompute=selective,recompute-modules=moe+core_attn"))
              .find(",recompute-modules=core_attn+moe") != std::string::npos);
    CHECK_THROWS_WITH_AS(plan::parse_plan("recompute=selective,recompute-modules=attention"),
                         doctest::Contains("got \"attention\""), InputError);
    CHECK_THROWS_WITH_AS(plan::parse_plan("recompute=selective,recompute-modules=mlp+mlp"),
                         doctest::Contains("names mlp twice"), InputError);
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const plan::Plan full = plan::resolve(plan::parse_plan("recompute=full,recompute-modules=mlp,gbs=8"), w, 1);
    CHECK_THROWS_WITH_AS(plan::validate(full, w, 1), doctest::Contains("this plan has recompute=full"),
                         plan::InvalidPlan);
  }

  // Llama 2 7B: h 4096, SwiGLU f 11008, 32 heads; b s = 4096 tokens, tp 1, bf16 (2 B).
  TEST_CASE("mlp: the dense MLP keeps its input alone and runs its forward again") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const auto plain = layer(w, "recompute=none,flash=on,seq=4096,gbs=1");
    const auto mlp = layer(w, "recompute=selective,recompute-modules=mlp,flash=on,seq=4096,gbs=1");
    // Kept without recompute: gate+up input 4096 x 4096 x 2 = 33,554,432; SwiGLU's gate and up
    // 2 x 4096 x 11008 x 2 = 180,355,072; down input 4096 x 11008 x 2 = 90,177,536. Checkpointed,
    // the first alone: 270,532,608 B less.
    CHECK(saved(plain) - saved(mlp) == 270532608.0);
    CHECK(recomputed(mlp) == std::multiset<std::string>{"mlp gate+up projection", "swiglu", "mlp down projection"});
    // Its GEMMs again: 2 s h (2 f) + 2 s f h = 6 s h f.
    CHECK(recomputed_gemm_flops(mlp) == 6.0 * 4096.0 * 4096.0 * 11008.0);
    // The attention core is not recomputed: the list names mlp alone.
    CHECK(test::forward_op(mlp, "flash attention").saved.value() ==
          test::forward_op(plain, "flash attention").saved.value());
  }

  TEST_CASE("hardware FLOPs count the recomputed MLP: 6 h f a token and layer more than the model's") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const plan::Plan p =
        plan::resolve(plan::parse_plan("recompute=selective,recompute-modules=mlp,flash=on,seq=4096,gbs=8"), w, 1);
    const cost::StepFlops f = cost::step_flops(*w.shape, p);
    // 32 layers x 8 x 4096 tokens x (2 h (2 f) + 2 f h) = 6 h f each.
    CHECK(f.hardware.value() - f.model.value() == doctest::Approx(32.0 * 8.0 * 4096.0 * 6.0 * 4096.0 * 11008.0));
  }

  TEST_CASE("layernorm: the two norms' outputs are not kept, the norms run again") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const auto plain = layer(w, "recompute=none,flash=on,seq=4096,gbs=1");
    const auto norms = layer(w, "recompute=selective,recompute-modules=layernorm,flash=on,seq=4096,gbs=1");
    // The QKV and gate+up GEMMs kept 4096 x 4096 x 2 = 33,554,432 B each.
    CHECK(saved(plain) - saved(norms) == 2.0 * 33554432.0);
    CHECK(recomputed(norms) == std::multiset<std::string>{"input norm", "post-attention norm"});
  }

  TEST_CASE("layernorm leaves a Mamba-2 layer's norm alone: Megatron-Core's recompute covers TransformerLayer's") {
    const auto w = workload::load_workload(kSource / "workloads/nemotron-3-nano.json");
    const plan::Plan p =
        plan::resolve(plan::parse_plan("recompute=selective,recompute-modules=layernorm,seq=4096,gbs=1"), w, 1);
    cost::OperatorContext c = cost::operator_context(p);
    c.kind.block = workload::Block::kMamba;
    CHECK(recomputed(cost::layer_operators(*w.shape, c)).empty());
  }

  // DeepSeek-V3's attention (128 heads; q/k head 128 + 64 RoPE, v head 128; ranks 1536 and 512).
  TEST_CASE("mla_up_proj: the core keeps its statistics alone, the up projections and RoPE run again") {
    const auto w = workload::load_workload(kSource / "tests/data/workloads/simumax-deepseek-v3-l4.json");
    const auto core = layer(w, "recompute=selective,flash=on,seq=4096,gbs=1");
    const auto up = layer(w, "recompute=selective,recompute-modules=mla_up_proj,flash=on,seq=4096,gbs=1");
    // Kept by the core: Q 4096 x 128 x 192 x 2 = 201,326,592; K and V 4096 x 128 x (192 + 128) x 2
    // = 335,544,320; the log-sum-exp 128 x 4096 x 4 = 2,097,152.
    CHECK(test::forward_op(core, "flash attention").saved.value() == 201326592.0 + 335544320.0 + 2097152.0);
    CHECK(test::forward_op(up, "flash attention").saved.value() == 2097152.0);
    CHECK(recomputed(up) == std::multiset<std::string>{"q up projection", "kv up projection", "rotary embedding"});
    // q up: 2 x 4096 x 1536 x (128 x 192); kv up: 2 x 4096 x 512 x (128 x 256).
    CHECK(recomputed_gemm_flops(up) == 2.0 * 4096.0 * 1536.0 * 128.0 * 192.0 + 2.0 * 4096.0 * 512.0 * 128.0 * 256.0);
    CHECK(recomputed(core) == std::multiset<std::string>{"flash attention"});
  }

  // moe-2gpu: h 1024, s 1024, 4 experts of 2048, top-2; on one GPU (ep 1) its 4 experts take 2048 rows.
  TEST_CASE("moe_act and shared_experts: the experts' activation output and the shared experts are not kept") {
    const auto w = moe_with_shared_expert();
    const auto plain = layer(w, "recompute=none,flash=on,gbs=1", true);
    const auto act = layer(w, "recompute=selective,recompute-modules=moe_act,flash=on,gbs=1", true);
    // The down GEMM kept 2048 x 2048 x 2 = 8,388,608 B of the activation's output.
    CHECK(test::forward_op(plain, "expert down (grouped)").saved.value() == 8388608.0);
    CHECK(test::forward_op(act, "expert down (grouped)").saved.value() == 0.0);
    CHECK(recomputed(act) == std::multiset<std::string>{"expert swiglu"});
    const auto shared = layer(w, "recompute=selective,recompute-modules=shared_experts,flash=on,gbs=1", true);
    // The shared SwiGLU kept 2 x 1024 x 1024 x 2 = 4,194,304 and the shared down input 1024 x 1024 x 2
    // = 2,097,152; the gate+up's input is the router's.
    CHECK(saved(plain) - saved(shared) == 4194304.0 + 2097152.0);
    CHECK(recomputed(shared) ==
          std::multiset<std::string>{"shared expert gate+up", "shared expert swiglu", "shared expert down"});
  }

  TEST_CASE("moe: the whole MoE layer keeps the router's input alone and runs its forward again") {
    const auto w = moe_with_shared_expert();
    const auto plain = layer(w, "recompute=selective,recompute-modules=core_attn,flash=on,gbs=1", true);
    const auto moe = layer(w, "recompute=selective,recompute-modules=core_attn+moe,flash=on,gbs=1", true);
    // Kept by the layer: its input, 1024 tokens x 1024 x 2 = 2,097,152 B, the router's.
    CHECK(test::forward_op(moe, "router").saved.value() == 2097152.0);
    CHECK(test::forward_op(moe, "expert down (grouped)").saved.value() == 0.0);
    CHECK(test::forward_op(moe, "shared expert swiglu").saved.value() == 0.0);
    CHECK(recomputed(moe) == std::multiset<std::string>{"flash attention", "router", "router top-k",
                                                        "token permute (dispatch)", "expert gate+up (grouped)",
                                                        "expert swiglu", "expert down (grouped)",
                                                        "token unpermute (combine)", "shared expert gate+up",
                                                        "shared expert swiglu", "shared expert down"});
    // What the MoE layer kept beyond its input: the routing probabilities 1024 x 4 x 2; the experts'
    // 2048 rows of inputs (1024 wide), SwiGLU inputs (2 x 2048) and down inputs (2048), 2 B each; the
    // shared experts' SwiGLU inputs (2 x 1024) and down input (1024) over 1024 tokens.
    const double kept =
        1024.0 * 4.0 * 2.0 + 2048.0 * (1024.0 + 2.0 * 2048.0 + 2048.0) * 2.0 + 1024.0 * (2.0 * 1024.0 + 1024.0) * 2.0;
    CHECK(saved(plain) - saved(moe) == kept);
  }
}

}  // namespace recompute_modules_test
