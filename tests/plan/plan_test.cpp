// Plans: the compact form, derived degrees, FSDP spellings, and every rule reported with its
// numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/plan/plan.hpp"
#include "support/input_error_text.hpp"

namespace plan_test {

using namespace stepcast;

namespace {

workload::Workload llama2_7b_shape() {
  workload::Workload w;
  w.name = "llama2-7b";
  workload::TransformerShape s;
  s.layers = 32;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 32;
  s.ffn_hidden = 11008;
  s.gated_mlp = true;
  s.vocab = 32000;
  s.seq_len = 4096;
  w.shape = s;
  w.parameters = workload::parameter_count(s);
  return w;
}

std::string parse_error(const std::string& text) {
  return test::input_error_text([&] { (void)plan::parse_plan(text); });
}

}  // namespace

TEST_SUITE("plan.plan") {
  TEST_CASE("the compact form sets every key it names") {
    const auto p = plan::parse_plan("dp=8,tp=2,pp=4,vp=2,zero=1,mbs=1,recompute=selective,schedule=interleaved,sp=on");
    CHECK(p.dp == 8);
    CHECK(p.tp == 2);
    CHECK(p.pp == 4);
    CHECK(p.vp == 2);
    CHECK(p.sharding == plan::Sharding::kZero1);
    CHECK(p.recompute == plan::Recompute::kSelective);
    CHECK(p.schedule == plan::Schedule::kInterleaved);
    CHECK(p.sequence_parallel);
  }

  TEST_CASE("fsdp=N is FULL_SHARD over N ranks, hybrid:AxB shards over A and replicates B times") {
    const auto full = plan::parse_plan("fsdp=8");
    CHECK(full.sharding == plan::Sharding::kFsdpFull);
    CHECK(full.dp == 8);
    const auto hybrid = plan::parse_plan("fsdp=hybrid:8x4");
    CHECK(hybrid.sharding == plan::Sharding::kFsdpHybrid);
    CHECK(hybrid.shard_group == 8);
    CHECK(hybrid.dp == 32);
    CHECK(hybrid.state_shards() == 8);
    CHECK(plan::parse_plan("fsdp=grad-op").zero_stage() == 2);
    CHECK(plan::parse_plan("fsdp=none").zero_stage() == 0);
  }

  TEST_CASE("dp left out is the GPU count over tp*pp, the global batch defaults to dp*mbs*pp") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("tp=2,pp=4"), w, 64);
    CHECK(p.dp == 8);
    CHECK(p.global_batch == 8 * 1 * 4);
    CHECK(p.seq_len == 4096);
    CHECK(p.micro_batches() == 4);
    CHECK(plan::problems(p, w, 64).empty());
  }

  TEST_CASE("every broken rule is listed with its numbers") {
    const auto w = llama2_7b_shape();
    plan::Plan p = plan::parse_plan("dp=3,tp=3,pp=3,vp=2,sp=off,gbs=100");
    p = plan::resolve(p, w, 64);
    const auto found = plan::problems(p, w, 64);
    // Each verdict in words, and its code in the same order: the rules are checked in plan.cpp's order.
    std::vector<std::string> texts;
    std::vector<plan::Rule> codes;
    for (const auto& f : found) {
      texts.push_back(plan::describe(f));
      codes.push_back(f.rule);
    }
    CHECK(texts == std::vector<std::string>{"dp*tp*pp = 3*3*3 = 27 must equal the number of GPUs (64)",
                                            "attention heads (32) must be divisible by tp (3)",
                                            "key/value heads (32) must be divisible by tp (3)",
                                            "ffn hidden size (11008) must be divisible by tp (3)",
                                            "layers (32) must be divisible by pp*vp = 3*2 = 6",
                                            "global batch (100) must be divisible by dp*mbs = 3*1 = 3",
                                            "vp=2 needs schedule=interleaved (got schedule=1f1b)"});
    CHECK(codes == std::vector<plan::Rule>{plan::Rule::kDegreesMatchGpus, plan::Rule::kTpDividesHeads,
                                           plan::Rule::kTpDividesKvHeads, plan::Rule::kTpDividesFfn,
                                           plan::Rule::kPpVpDivideLayers, plan::Rule::kDpMbsDivideBatch,
                                           plan::Rule::kVpNeedsInterleaved});
    // The values are the plan's own numbers: 32 heads of Llama-2 7B, tp = 3.
    CHECK(found[1].number("heads") == 32);
    CHECK(found[1].number("tp") == 3);
    CHECK(found[6].text("schedule") == "1f1b");
    CHECK_THROWS_AS(plan::validate(p, w, 64), InputError);
    // validate() keeps the verdicts: a caller reads the codes, not the message.
    bool caught = false;
    try {
      plan::validate(p, w, 64);
    } catch (const plan::InvalidPlan& e) {
      caught = true;
      CHECK(e.verdicts().size() == 7);
      CHECK(e.verdicts().front().rule == plan::Rule::kDegreesMatchGpus);
      CHECK(
          std::string(e.message())
              .starts_with(
                  "invalid plan:\n  - dp*tp*pp = 3*3*3 = 27 must equal the number of GPUs (64)\n  - attention heads"));
    }
    CHECK(caught);
  }

  TEST_CASE("syntax errors name the key and the accepted values") {
    CHECK(parse_error("tp=two") == "--plan: tp= expects a whole number >= 1, got \"two\"");
    CHECK(parse_error("schedule=zigzag") ==
          "--plan: schedule= expects gpipe, 1f1b, interleaved or zb-h1, got \"zigzag\"");
    CHECK(parse_error("fsdp=hybrid") ==
          "--plan: fsdp=hybrid needs the shard group size, as hybrid:8 or hybrid:8x4, got \"hybrid\"");
    CHECK(parse_error("zero=1,fsdp=full") == "--plan: give zero= or fsdp=, not both (FSDP is PyTorch's form of ZeRO)");
  }

  TEST_CASE("to_string writes a resolved plan back in the compact form, which parses to the same plan") {
    const auto w = llama2_7b_shape();
    const auto p =
        plan::resolve(plan::parse_plan("tp=2,pp=2,fsdp=hybrid:2x2,recompute=full,flash=on,precision=fp16"), w, 16);
    const std::string text = plan::to_string(p);
    CHECK(text ==
          "dp=4,tp=2,pp=2,vp=1,fsdp=hybrid:2x2,mbs=1,gbs=8,seq=4096,recompute=full,schedule=1f1b,sp=off,flash=on,"
          "precision=fp16,optimizer=adam");
    const auto again = plan::resolve(plan::parse_plan(text), w, 16);
    CHECK(plan::to_string(again) == text);
  }

  TEST_CASE("overlap keys: printed when given, refused where Megatron-LM refuses them or they choose nothing") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("zero=1,overlap-grad-reduce=on,overlap-param-gather=on"), w, 16);
    CHECK(p.overlap_grad_reduce == true);
    CHECK(p.overlap_param_gather == true);
    CHECK(plan::problems(p, w, 16).empty());
    CHECK(plan::to_string(p).ends_with(",overlap-grad-reduce=on,overlap-param-gather=on"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan("zero=1"), w, 16)).find("overlap") == std::string::npos);
    CHECK(plan::problems(plan::resolve(plan::parse_plan("overlap-grad-reduce=off"), w, 16), w, 16).empty());
    // Megatron-LM's arguments.py: distributed optimizer, and the gradient reduction overlapped.
    const auto refused = [&](const char* text) {
      return plan::problems(plan::resolve(plan::parse_plan(text), w, 16), w, 16).size();
    };
    CHECK(refused("overlap-param-gather=on") == 1);
    CHECK(refused("fsdp=16,overlap-param-gather=on") == 1);
    CHECK(refused("zero=1,overlap-grad-reduce=off,overlap-param-gather=on") == 1);
    CHECK(refused("zero=3,overlap-grad-reduce=on") == 1);
    CHECK(refused("zero=2,overlap-grad-reduce=off") == 1);
    CHECK(refused("zero=2,overlap-grad-reduce=on,overlap-param-gather=on") == 0);
    CHECK_THROWS_AS(plan::parse_plan("overlap-param-gather=maybe"), InputError);
  }

  TEST_CASE("fsdp-prefetch: printed when given, and refused where no unit is gathered again for its backward") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("fsdp=16,fsdp-prefetch=backward-post"), w, 16);
    CHECK(p.fsdp_prefetch == plan::FsdpPrefetch::kBackwardPost);
    CHECK(plan::problems(p, w, 16).empty());
    const std::string text = plan::to_string(p);
    CHECK(text.ends_with(",fsdp-prefetch=backward-post"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan(text), w, 16)) == text);
    CHECK(plan::problems(plan::resolve(plan::parse_plan("fsdp=hybrid:8x2,fsdp-prefetch=backward-pre"), w, 16), w, 16)
              .empty());
    // SHARD_GRAD_OP keeps each unit gathered from its forward to its backward; ZeRO-1 gathers none.
    for (const char* kept : {"fsdp=grad-op,fsdp-prefetch=backward-post", "zero=1,fsdp-prefetch=backward-post"}) {
      CAPTURE(kept);
      const auto found = plan::problems(plan::resolve(plan::parse_plan(kept), w, 16), w, 16);
      REQUIRE(found.size() == 1);
      CHECK(found.front().rule == plan::Rule::kFsdpPrefetchNeedsRegather);
    }
    CHECK(parse_error("fsdp-prefetch=forward") ==
          "--plan: fsdp-prefetch= expects backward-pre or backward-post, got \"forward\"");
  }

  TEST_CASE("loss keys: printed when given and read back, a kernel or a metric count outside the list refused") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("fsdp=8,loss=fused,train-metrics=2"), w, 8);
    CHECK(p.loss == plan::LossKernel::kFused);
    CHECK(p.train_metrics == 2);
    const std::string text = plan::to_string(p);
    CHECK(text.ends_with(",loss=fused,train-metrics=2"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan(text), w, 8)) == text);
    // Unwritten, they are Megatron-LM's loss and no metrics, and print nothing.
    const auto plain = plan::resolve(plan::parse_plan("fsdp=8,train-metrics=0"), w, 8);
    CHECK(plain.loss == plan::LossKernel::kMegatron);
    CHECK(plan::to_string(plain).find("loss") == std::string::npos);
    CHECK(plan::to_string(plain).find("metrics") == std::string::npos);
    CHECK(parse_error("loss=liger") == "--plan: loss= expects megatron, fused or eager, got \"liger\"");
    CHECK(parse_error("train-metrics=-1") ==
          "--plan: train-metrics= expects a whole number of metrics a micro-batch from 0 to 16, got \"-1\"");
    CHECK(parse_error("train-metrics=17") ==
          "--plan: train-metrics= expects a whole number of metrics a micro-batch from 0 to 16, got \"17\"");
    CHECK(parse_error("train-metrics=2x") ==
          "--plan: train-metrics= expects a whole number of metrics a micro-batch from 0 to 16, got \"2x\"");
  }

  TEST_CASE("lora-targets: the named linears in a fixed order, printed when given, an unknown name refused") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("dp=8,peft=lora,lora-targets=fc2+qkv"), w, 8);
    CHECK(p.lora_targets == (plan::kLoraQkv | plan::kLoraFc2));
    const std::string text = plan::to_string(p);
    CHECK(text.ends_with(",peft=lora,lora-targets=qkv+fc2"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan(text), w, 8)) == text);
    // Unwritten, all four (Megatron-Bridge's LoRA default), and nothing printed.
    const auto all = plan::resolve(plan::parse_plan("dp=8,peft=lora"), w, 8);
    CHECK(all.lora_targets == plan::kLoraAllTargets);
    CHECK(plan::to_string(all).ends_with(",peft=lora"));
    CHECK(parse_error("peft=lora,lora-targets=qkv+gate") ==
          "--plan: lora-targets= expects qkv, proj, fc1, fc2, in_proj and out_proj joined by +, got \"qkv+gate\"");
    CHECK(parse_error("peft=lora,lora-targets=qkv+") ==
          "--plan: lora-targets= expects qkv, proj, fc1, fc2, in_proj and out_proj joined by +, got \"qkv+\"");
  }

  TEST_CASE("doc-len: printed when given and read back, a length that is not a positive whole number refused") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("fsdp=8,seq=4096,flash=on,doc-len=256"), w, 8);
    CHECK(p.doc_len == 256);
    const std::string text = plan::to_string(p);
    CHECK(text.ends_with(",doc-len=256"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan(text), w, 8)) == text);
    // Unwritten, the sequence is one document and nothing is printed.
    const auto plain = plan::resolve(plan::parse_plan("fsdp=8"), w, 8);
    CHECK(plain.doc_len == 0);
    CHECK(plan::to_string(plain).find("doc-len") == std::string::npos);
    CHECK(parse_error("doc-len=0") == "--plan: doc-len= expects a whole number >= 1, got \"0\"");
    CHECK(parse_error("doc-len=2.5") == "--plan: doc-len= expects a whole number >= 1, got \"2.5\"");
  }

  TEST_CASE("communication keys: grad-reduce sets the reduction type, tp-overlap needs sequence parallel") {
    const auto w = llama2_7b_shape();
    const auto p = plan::resolve(plan::parse_plan("tp=2,sp=on,tp-overlap=on,grad-reduce=fp32"), w, 8);
    CHECK(p.grad_reduce == plan::Precision::kFp32);
    CHECK(p.tp_overlap);
    CHECK(plan::problems(p, w, 8).empty());
    const std::string text = plan::to_string(p);
    CHECK(text.ends_with(",grad-reduce=fp32,tp-overlap=on"));
    CHECK(plan::to_string(plan::resolve(plan::parse_plan(text), w, 8)) == text);
    const auto bad = plan::resolve(plan::parse_plan("tp=2,tp-overlap=on"), w, 8);
    const auto found = plan::problems(bad, w, 8);
    REQUIRE(found.size() == 1);
    CHECK(found.front().rule == plan::Rule::kTpOverlapNeedsSp);
    CHECK(plan::describe(found.front()) ==
          "tp-overlap=on needs sequence parallel (sp=on) and tp > 1 (got tp=2, sp=off)");
    CHECK(parse_error("grad-reduce=fp8") == "--plan: grad-reduce= expects fp32, bf16 or fp16, got \"fp8\"");
  }
}

}  // namespace plan_test
