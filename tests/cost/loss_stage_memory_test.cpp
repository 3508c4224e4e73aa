// The last pipeline stage holds the loss: its logits and their working set can outweigh the
// micro-batches the first stage holds, and the GPU that must fit is the stage with the most bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/resolved_plan.hpp"

namespace loss_stage_memory_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

using test::resolved;

}  // namespace

TEST_SUITE("cost.loss_stage_memory") {
  // Llama 3 8B's shape cut to 4 layers (h = 4096, vocabulary 128256) on two stages of Megatron-Core
  // (zero=1), full recompute, s = 8192, b = 1, 8 micro-batches. Each layer keeps its input, 2sbh = 2 x 8192 x 4096 =
  // 67,108,864 B a micro-batch.
  //   stage 0: 2 layers x 2 micro-batches held (1F1B) = 268,435,456 B.
  //   stage 1: 2 layers x 1 micro-batch = 134,217,728 B, + the fp32 softmax Megatron-LM's
  //            cross-entropy keeps, 4 x 8192 x 128256 = 4,202,692,608 B: 4,336,910,336 B;
  //            beside it as the backward starts the 16-bit logits 2 x 8192 x 128256 =
  //            2,101,346,304 B and the output layer's weight-gradient placeholder
  //            128256 x 4096 x 2 = 1,050,673,152 B: 3,152,019,456 B.
  // Both stages hold the same state (an even split), so stage 1 must fit.
  TEST_CASE("with full recompute the last stage's logits outweigh the first stage's micro-batches") {
    workload::Workload w = workload::load_workload(kSource / "workloads/llama3-8b.json");
    w.shape->layers = 4;
    const plan::Plan p = resolved(w, "pp=2,zero=1,mbs=1,gbs=8,seq=8192,flash=on,recompute=full", 2);
    const cost::StageMemory peak = cost::pipeline_peak_stage(*w.shape, p, Bytes(0.0));
    CHECK(peak.stage == 1);
    CHECK(peak.activations.value() == doctest::Approx(4'336'910'336.0));
    CHECK(peak.loss_working_set.value() == doctest::Approx(3'152'019'456.0));
    const cost::MemoryBreakdown m = cost::estimate_memory(w, p);
    CHECK(m.activations.value() == doctest::Approx(4'336'910'336.0));
    CHECK(m.working_set.value() == doctest::Approx(cost::recompute_working_set(*w.shape, p).value() + 3'152'019'456.0));
    // The first stage alone, as the memory model sized every even split before: 268,435,456 B.
    CHECK(cost::activation_bytes(*w.shape, p).value() == doctest::Approx(268'435'456.0));
  }
}

}  // namespace loss_stage_memory_test
