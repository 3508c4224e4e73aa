// Megatron-Core's weight-gradient placeholders, by hand: Transformer Engine keeps one bf16 tensor
// per distinct linear weight shape (get_dummy_wgrad), and Megatron-Core's output layer allocates a
// V/t x h one at the start of each backward.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/wgrad_placeholders.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/resolved_plan.hpp"

namespace wgrad_placeholders_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

using test::resolved;

/// Llama 3 405B cut to 4 layers, as SimuMax's B200 memory runs train it.
workload::Workload llama3_405b_4_layers() {
  workload::Workload w = workload::load_workload(kSource / "workloads/llama3-405b.json");
  w.shape->layers = 4;
  return w;
}

}  // namespace

TEST_SUITE("cost.wgrad_placeholders") {
  // h = 16384, 128 heads of 128 and 8 KV heads, SwiGLU ffn 53248, vocabulary 128256; tp = 2:
  //   qkv      (128 + 2 x 8) x 128 / 2 = 9216 x 16384 =   150,994,944
  //   proj     16384 x 16384 / 2                     =   134,217,728
  //   fc1      2 x 53248 / 2 = 53248 x 16384          =   872,415,232
  //   fc2      16384 x 53248 / 2                      =   436,207,616
  //   sum 1,593,835,520 elements x 2 B = 3,187,671,040 B, once for all four layers;
  //   output layer 128256 / 2 x 16384 = 1,050,673,152 elements x 2 B = 2,101,346,304 B.
  TEST_CASE("a dense Llama keeps one placeholder per linear shape, and the output layer's with the loss") {
    const workload::Workload w = llama3_405b_4_layers();
    const plan::Plan p = resolved(w, "tp=2,dp=4,zero=1,sp=on,mbs=1,gbs=4,seq=4096,flash=on", 8);
    CHECK(cost::layer_wgrad_placeholders(*w.shape, p).value() == doctest::Approx(3'187'671'040.0));
    CHECK(cost::output_wgrad_placeholder(*w.shape, p).value() == doctest::Approx(2'101'346'304.0));
    // Megatron-Core's distributed optimizer holds no other buffer: the TE placeholders are the
    // temporary buffers, and the output layer's sits beside the loss's 16-bit logits
    // (4096 x 128256 / 2 x 2 B = 525,336,576 B) in the working set.
    const cost::MemoryBreakdown m = cost::estimate_memory(w, p);
    CHECK(m.temporary_buffers.value() == doctest::Approx(3'187'671'040.0));
    CHECK(m.working_set.value() == doctest::Approx(525'336'576.0 + 2'101'346'304.0));

    // Two stages: the first holds the same four shapes (the last stage's output layer is its own).
    const plan::Plan staged = resolved(w, "tp=2,pp=2,zero=1,sp=on,mbs=1,gbs=4,seq=4096,flash=on", 8);
    CHECK(cost::layer_wgrad_placeholders(*w.shape, staged).value() == doctest::Approx(3'187'671'040.0));
  }

  TEST_CASE("Megatron-LM without the distributed optimizer keeps them too, and reduces in place") {
    // zero=0 with grad-reduce=fp32 is Megatron-Core's DDP: the same four shapes' placeholders,
    // 3,187,671,040 B, and its buckets are views into the fp32 main-gradient buffer, so nothing
    // else is temporary. PyTorch's DDP (no grad-reduce=) copies every gradient into its buckets.
    const workload::Workload w = llama3_405b_4_layers();
    const plan::Plan megatron = resolved(w, "tp=2,dp=4,sp=on,grad-reduce=fp32,mbs=1,gbs=4,seq=4096,flash=on", 8);
    CHECK(megatron.megatron_ddp());
    CHECK(cost::layer_wgrad_placeholders(*w.shape, megatron).value() == doctest::Approx(3'187'671'040.0));
    CHECK(cost::estimate_memory(w, megatron).temporary_buffers.value() == doctest::Approx(3'187'671'040.0));
    const plan::Plan torch_ddp = resolved(w, "tp=2,dp=4,sp=on,mbs=1,gbs=4,seq=4096,flash=on", 8);
    CHECK_FALSE(torch_ddp.megatron_ddp());
    const cost::MemoryBreakdown copied = cost::estimate_memory(w, torch_ddp);
    CHECK(copied.temporary_buffers.value() == doctest::Approx(copied.gradients.value()));
  }

  TEST_CASE("frameworks that hold their own gradients keep none") {
    const workload::Workload w = llama3_405b_4_layers();
    for (const char* text : {"fsdp=full,mbs=1,gbs=8,seq=4096", "dp=8,zero=2,mbs=1,gbs=8,seq=4096",
                             "dp=8,mbs=1,gbs=8,seq=4096", "tp=2,dp=4,mbs=1,gbs=8,seq=4096"}) {
      CAPTURE(text);
      const plan::Plan p = resolved(w, text, 8);
      CHECK(cost::layer_wgrad_placeholders(*w.shape, p).value() == 0.0);
      CHECK(cost::output_wgrad_placeholder(*w.shape, p).value() == 0.0);
    }
  }

  // tests/cost/data/moe-2gpu.json: h = 1024, 8 heads (no GQA), 4 routed experts of 2048 (SwiGLU),
  // vocabulary 32000, dp = ep = 2 (two experts a GPU):
  //   qkv 3072 x 1024 = 3,145,728; proj 1024 x 1024 = 1,048,576;
  //   expert gate+up 4096 x 1024 = 4,194,304 and down 1024 x 2048 = 2,097,152, one each for both
  //   local experts; the router's gradient is a real one (not counted):
  //   10,485,760 elements x 2 B = 20,971,520 B.
  // A dense first layer adds its SwiGLU MLP's two shapes, 8192 x 1024 + 1024 x 4096 =
  // 12,582,912 elements, 25,165,824 B; its attention shares the MoE layer's.
  TEST_CASE("routed experts of one shape share one placeholder, and each kind of layer adds only its new shapes") {
    workload::Workload w = workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json");
    const plan::Plan p = resolved(w, "dp=2,ep=2,zero=1,flash=on", 2);
    CHECK(cost::layer_wgrad_placeholders(*w.shape, p).value() == doctest::Approx(20'971'520.0));
    CHECK(cost::output_wgrad_placeholder(*w.shape, p).value() == doctest::Approx(32000.0 * 1024 * 2));
    w.shape->moe->first_dense_layers = 1;
    CHECK(cost::layer_wgrad_placeholders(*w.shape, p).value() == doctest::Approx(20'971'520.0 + 25'165'824.0));
    // On two stages, one layer each: the first keeps the dense layer's attention and MLP shapes,
    // 4,194,304 + 12,582,912 = 16,777,216 elements, 33,554,432 B; the second the MoE layer's alone.
    const plan::Plan staged = resolved(w, "pp=2,zero=1,flash=on,gbs=2", 2);
    CHECK(cost::layer_wgrad_placeholders(*w.shape, staged, 0).value() == doctest::Approx(33'554'432.0));
    CHECK(cost::layer_wgrad_placeholders(*w.shape, staged, 1).value() == doctest::Approx(20'971'520.0));
  }
}

}  // namespace wgrad_placeholders_test
