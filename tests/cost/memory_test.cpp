// Memory per GPU against the ZeRO paper's Figure 1, the seed's 8-way FSDP example, and
// Korthikanti et al. 2022's activation formulas derived by hand for one GPT-3 175B layer.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/gpt3_shape.hpp"

namespace memory_test {

using namespace stepcast;

namespace {

workload::Workload bare(double parameters) {
  workload::Workload w;
  w.name = "bare";
  w.parameters = parameters;
  return w;
}

plan::Plan data_parallel(int dp, plan::Sharding sharding, plan::Precision precision) {
  plan::Plan p;
  p.dp = dp;
  p.sharding = sharding;
  p.precision = precision;
  p.optimizer = plan::Optimizer::kAdam;
  return plan::resolve(p, bare(1.0), 0);
}

plan::Plan gpt3_layer_plan(int tp, bool sp, plan::Recompute recompute, bool flash = false) {
  plan::Plan p;
  p.dp = 1;
  p.tp = tp;
  p.sequence_parallel = sp;
  p.recompute = recompute;
  p.flash_attention = flash;
  p.micro_batch_size = 1;
  p.seq_len = 2048;
  p.global_batch = 1;
  return p;
}

// sbh = 2048 x 12288 = 25,165,824; 5as/h = 5 x 96 x 2048 / 12288 = 80.
constexpr double kSbh = 2048.0 * 12288.0;

}  // namespace

TEST_SUITE("cost.memory") {
  TEST_CASE("the seed: 8-way FSDP, fp16 params and grads, Adam: 16 B/param x 7e9 / 8 = 14e9 B = 13.04 GiB per rank") {
    plan::Plan p = plan::parse_plan("fsdp=8");
    p.precision = plan::Precision::kFp16;
    p.optimizer = plan::Optimizer::kAdam;
    const auto w = bare(7e9);
    p = plan::resolve(p, w, 0);
    const auto state = cost::model_state(w, p);
    CHECK(state.total().value() == doctest::Approx(14e9));
    CHECK(format_bytes(state.total()) == "13.04 GiB");
    CHECK(state.parameters.value() == doctest::Approx(7e9 * 2 / 8));
    CHECK(state.optimizer_state.value() == doctest::Approx(7e9 * 12 / 8));
  }

  TEST_CASE("ZeRO Figure 1: 7.5B parameters on 64 GPUs, K = 12: 120, 31.4, 16.6 and 1.9 GB") {
    // Rajbhandari et al. 2020, Figure 1: (2 + 2 + K) x 7.5e9 = 120 GB; ZeRO-1 2Ψ + 2Ψ + KΨ/64 =
    // 30 + 1.40625 = 31.4 GB; ZeRO-2 2Ψ + (2 + K)Ψ/64 = 15 + 1.640625 = 16.6 GB; ZeRO-3
    // 120 / 64 = 1.875 = 1.9 GB (the figure rounds to 0.1 GB).
    const auto w = bare(7.5e9);
    const auto gb = [&](plan::Sharding s) {
      return cost::model_state(w, data_parallel(64, s, plan::Precision::kBf16)).total().value() / 1e9;
    };
    CHECK(gb(plan::Sharding::kDdp) == doctest::Approx(120.0));
    CHECK(gb(plan::Sharding::kZero1) == doctest::Approx(31.4).epsilon(0.05 / 31.4));
    CHECK(gb(plan::Sharding::kZero2) == doctest::Approx(16.6).epsilon(0.05 / 16.6));
    CHECK(gb(plan::Sharding::kZero3) == doctest::Approx(1.9).epsilon(0.05 / 1.9));
  }

  TEST_CASE(
      "FSDP strategies shard like ZeRO stages: FULL_SHARD = 3, SHARD_GRAD_OP = 2, NO_SHARD = DDP, HYBRID over its "
      "group") {
    const auto w = bare(8e9);
    const auto total = [&](plan::Sharding s) {
      return cost::model_state(w, data_parallel(8, s, plan::Precision::kBf16)).total().value();
    };
    CHECK(total(plan::Sharding::kFsdpFull) == doctest::Approx(16.0 * 8e9 / 8));
    CHECK(total(plan::Sharding::kFsdpGradOp) == doctest::Approx(2.0 * 8e9 + 14.0 * 8e9 / 8));
    CHECK(total(plan::Sharding::kFsdpNone) == doctest::Approx(16.0 * 8e9));
    plan::Plan hybrid = plan::parse_plan("fsdp=hybrid:4x2");
    hybrid = plan::resolve(hybrid, w, 0);
    CHECK(hybrid.dp == 8);
    CHECK(cost::model_state(w, hybrid).total().value() == doctest::Approx(16.0 * 8e9 / 4));
  }

  TEST_CASE("Megatron's fp32 main_grad: grad-reduce=fp32 under DDP or ZeRO-1/2 holds 4 B of gradient per parameter") {
    // Megatron-Core (distributed_data_parallel.py) keeps one gradient buffer in fp32 when
    // grad_reduce_in_fp32: 7e9 x 4 = 28e9 B under ZeRO-1 on 8 ranks (gradients unsharded), against
    // 7e9 x 2 = 14e9 B when it reduces in bf16; ZeRO-2 shards it: 28e9 / 8 = 3.5e9 B. FSDP keeps
    // its 16-bit gradients: 7e9 x 2 / 8.
    const auto w = bare(7e9);
    const auto grads = [&](const char* text) {
      plan::Plan p = plan::parse_plan(text);
      p.precision = plan::Precision::kBf16;
      return cost::model_state(w, plan::resolve(p, w, 8)).gradients.value();
    };
    CHECK(grads("dp=8,zero=1,grad-reduce=fp32") == doctest::Approx(28e9));
    CHECK(grads("dp=8,zero=1,grad-reduce=bf16") == doctest::Approx(14e9));
    CHECK(grads("dp=8,zero=1") == doctest::Approx(14e9));
    CHECK(grads("dp=8,zero=2,grad-reduce=fp32") == doctest::Approx(3.5e9));
    CHECK(grads("fsdp=8,grad-reduce=fp32") == doctest::Approx(7e9 * 2 / 8));
  }

  TEST_CASE(
      "ZeRO's buffers: Megatron's zero=1 reduces and gathers in place, DeepSpeed's zero=2 in 5e8-element buckets") {
    // Megatron-Core's distributed optimizer reduce-scatters its gradient buffer and gathers its
    // parameter buffer in place (param_and_grad_buffer.py): no buffer beside the state. DeepSpeed's
    // ZeRO-2 reduces into a bucket of reduce_bucket_size and gathers into one of
    // allgather_bucket_size, 5e8 elements each by default: 5e8 x (2 B gradient + 2 B parameter) in
    // bf16 = 2e9 B for 7e9 parameters on 8 ranks.
    const auto w = bare(7e9);
    const auto buffers = [&](const char* text) {
      plan::Plan p = plan::parse_plan(text);
      p.precision = plan::Precision::kBf16;
      return cost::estimate_memory(w, plan::resolve(p, w, 8), cost::MemoryOptions{}).temporary_buffers.value();
    };
    CHECK(buffers("dp=8,zero=1") == 0.0);
    CHECK(buffers("dp=8,zero=2") == doctest::Approx(5e8 * (2.0 + 2.0)));
  }

  TEST_CASE("fp32 Adam holds 4 + 4 + 8 bytes per parameter, mixed-precision SGD 2 + 2 + 4") {
    const auto fp32 = cost::state_bytes_per_parameter(plan::Precision::kFp32, plan::Optimizer::kAdam);
    CHECK(fp32.parameters + fp32.gradients + fp32.optimizer == 16.0);
    CHECK(fp32.optimizer == 8.0);
    const auto sgd = cost::state_bytes_per_parameter(plan::Precision::kBf16, plan::Optimizer::kSgd);
    CHECK(sgd.parameters + sgd.gradients + sgd.optimizer == 8.0);
  }

  TEST_CASE("activations of one GPT-3 layer follow Korthikanti et al. 2022, Table 2, in every mode") {
    const auto s = test::gpt3_shape();
    const auto layer = [&](const plan::Plan& p) { return cost::layer_activation_bytes(s, p).value(); };
    using R = plan::Recompute;
    // No parallelism: sbh(34 + 5as/h) = 114 sbh = 2,868,903,936 B.
    CHECK(layer(gpt3_layer_plan(1, false, R::kNone)) == doctest::Approx(114.0 * kSbh));
    // Tensor parallel t = 8: sbh(10 + 24/t + 5as/(ht)) = sbh(10 + 3 + 10) = 23 sbh.
    CHECK(layer(gpt3_layer_plan(8, false, R::kNone)) == doctest::Approx(23.0 * kSbh));
    // Tensor + sequence parallel: sbh/t (34 + 5as/h) = 114/8 sbh = 14.25 sbh.
    CHECK(layer(gpt3_layer_plan(8, true, R::kNone)) == doctest::Approx(14.25 * kSbh));
    // Tensor parallel + selective recompute: sbh(10 + 24/t) = 13 sbh.
    CHECK(layer(gpt3_layer_plan(8, false, R::kSelective)) == doctest::Approx(13.0 * kSbh));
    // Tensor + sequence parallel + selective recompute: 34 sbh / t = 4.25 sbh.
    CHECK(layer(gpt3_layer_plan(8, true, R::kSelective)) == doctest::Approx(4.25 * kSbh));
    // Full recompute keeps the layer input, 2 sbh; sharded by sequence parallel: 2 sbh / 8.
    CHECK(layer(gpt3_layer_plan(8, false, R::kFull)) == doctest::Approx(2.0 * kSbh));
    CHECK(layer(gpt3_layer_plan(8, true, R::kFull)) == doctest::Approx(0.25 * kSbh));
    // Flash attention stores no s x s scores: selective recompute's 34 sbh / t, plus the fp32
    // log-sum-exp of every query row of every head it keeps for its backward (Dao 2023,
    // Algorithm 1): 4 bytes x a s b / t = sbh x 4a/(ht) = sbh x 4 x 96 / (12288 x 8).
    CHECK(layer(gpt3_layer_plan(8, true, R::kNone, true)) == doctest::Approx((4.25 + 4.0 * 96 / (12288.0 * 8)) * kSbh));
  }

  TEST_CASE("grouped-query attention stores K and V at kv_heads/heads of their width (Llama-2 70B: 8 of 64)") {
    // Llama-2 70B (Touvron et al. 2023; workloads/llama2-70b.json): h = 8192, a = 64, 8 K/V heads,
    // gated MLP of f = 28672. Per layer without TP, with flash attention, in sbh bytes:
    // replicated 10; Q 2 + K 2/8 + V 2/8 + output-projection input 2 = 4.5 (8 with full heads);
    // MLP 3 x 2 x f/h = 21. Total 35.5 sbh instead of 39, each plus flash attention's fp32
    // row statistics, 4 bytes x a s b = sbh x 4 x 64 / 8192 = 0.03125 sbh.
    workload::TransformerShape s = test::gpt3_shape();
    s.hidden = 8192;
    s.heads = 64;
    s.kv_heads = 8;
    s.ffn_hidden = 28672;
    s.gated_mlp = true;
    plan::Plan p = gpt3_layer_plan(1, false, plan::Recompute::kNone, true);
    const double sbh = static_cast<double>(p.seq_len) * p.micro_batch_size * 8192.0;
    CHECK(cost::layer_activation_bytes(s, p).value() == doctest::Approx((35.5 + 0.03125) * sbh));
    s.kv_heads = 64;
    CHECK(cost::layer_activation_bytes(s, p).value() == doctest::Approx((39.0 + 0.03125) * sbh));
  }

  TEST_CASE(
      "the first stage of 1F1B holds p micro-batches of its layers, GPipe holds m, interleaving adds (p-1)/(pv)") {
    auto s = test::gpt3_shape();
    plan::Plan p = gpt3_layer_plan(8, true, plan::Recompute::kSelective);
    p.pp = 8;
    p.global_batch = 32;  // m = 32 micro-batches
    const double layer = 4.25 * kSbh;
    // 1F1B: 96/8 = 12 layers x 8 in flight = 96 layers' worth: Korthikanti's L x 34sbh/t.
    CHECK(cost::activation_bytes(s, p).value() == doctest::Approx(96.0 * layer));
    p.schedule = plan::Schedule::kGpipe;
    CHECK(cost::activation_bytes(s, p).value() == doctest::Approx(12.0 * 32.0 * layer));
    // Interleaved, v = 2: L(1 + (p-1)/(pv)) = 96 x (1 + 7/16) = 138 layers' worth.
    p.schedule = plan::Schedule::kInterleaved;
    p.vp = 2;
    CHECK(cost::activation_bytes(s, p).value() == doctest::Approx(138.0 * layer));
  }

  TEST_CASE("the loss's logits: a fused loss keeps 2sbV/t where Megatron's keeps 4sbV/t, eager holds 4sbV/t more") {
    // GPT-3 on tp=8, one stage, s = 2048, b = 1: sbV/t = 2048 x 51200 / 8 logits on this rank.
    // Megatron-LM keeps the fp32 softmax (4 B a logit), a fused kernel the 16-bit logits (2 B);
    // PyTorch's eager loss keeps fp32 log-probabilities like Megatron's, and while log_softmax
    // runs it holds autocast's fp32 copy (4 B) beside the 16-bit logits.
    workload::Workload w;
    w.name = "gpt3";
    w.shape = test::gpt3_shape();
    w.parameters = workload::parameter_count(*w.shape);
    const double logits = 2048.0 * 51200 / 8.0;
    const auto memory = [&](const char* loss) {
      return cost::estimate_memory(
          w, plan::resolve(plan::parse_plan(std::string("tp=8,sp=on,recompute=full,gbs=8,") + loss), w, 64));
    };
    const auto megatron = memory("loss=megatron");
    const auto fused = memory("loss=fused");
    const auto eager = memory("loss=eager");
    CHECK((megatron.activations - fused.activations).value() == doctest::Approx(2.0 * logits));
    CHECK((eager.activations - megatron.activations).value() == doctest::Approx(0.0));
    CHECK((eager.working_set - megatron.working_set).value() == doctest::Approx(4.0 * logits));
    CHECK((fused.working_set - megatron.working_set).value() == doctest::Approx(0.0));
  }

  TEST_CASE("the breakdown's terms add up to its total, and the fit says by how much") {
    workload::Workload w;
    w.name = "gpt3";
    w.shape = test::gpt3_shape();
    w.parameters = workload::parameter_count(*w.shape);
    plan::Plan p = plan::resolve(plan::parse_plan("tp=8,pp=8,sp=on,recompute=selective,gbs=64"), w, 64);
    const auto m = cost::estimate_memory(w, p);
    const Bytes sum = m.parameters + m.gradients + m.optimizer_state + m.activations + m.temporary_buffers +
                      m.working_set + m.framework_overhead;
    CHECK(m.total.value() == doctest::Approx(sum.value()));
    CHECK_FALSE(m.explanation.empty());
    const auto fit = cost::check_fit(m, gib(80.0));
    CHECK(fit.headroom.value() == doctest::Approx(gib(80.0).value() - m.total.value()));
    CHECK(fit.fits == (fit.headroom.value() >= 0.0));
  }
}

}  // namespace memory_test
