// Memory of a stack of several kinds of layer (DeepSeek-V3's dense and MoE layers, a hybrid's
// Mamba-2, attention and MLP layers): each place that holds a layer's activations holds its own
// kind's, never the first layer's for all.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/resolved_plan.hpp"

namespace mixed_layer_memory_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

using test::resolved;

}  // namespace

TEST_SUITE("cost.mixed_layer_memory") {
  // tests/cost/data/moe-2gpu.json: 2 layers, h = 1024, s = 1024, 4 routed experts of 2048, top-2,
  // SwiGLU. Its MoE block keeps 31,465,472 B at dp=2, ep=2, bf16
  // (tests/cost/moe_saved_activations_test.cpp); a dense SwiGLU block of ffn 4096 its input
  // 1024 x 1024 x 2 = 2,097,152, gate and up 2 x 1024 x 4096 x 2 = 16,777,216 and the down
  // projection's input 1024 x 4096 x 2 = 8,388,608: 27,262,976 B. Full recompute keeps each
  // layer's input alike, so the MoE layer rebuilds 31,465,472 - 27,262,976 = 4,202,496 B more.
  TEST_CASE("recompute rebuilds the largest kind: a dense first layer does not shrink an MoE stack's working set") {
    workload::Workload w = workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json");
    const plan::Plan p = resolved(w, "dp=2,ep=2,flash=on,recompute=full", 2);
    const double all_moe = cost::recompute_working_set(*w.shape, p).value();
    w.shape->moe->first_dense_layers = 1;
    CHECK(cost::recompute_working_set(*w.shape, p).value() == doctest::Approx(all_moe));
    // The dense layer alone (the stack's first kind) rebuilds 4,202,496 B less.
    CHECK(cost::layer_activation_bytes(*w.shape, resolved(w, "dp=2,ep=2,flash=on", 2)).value() -
              cost::layer_activation_bytes(*w.shape, p).value() ==
          doctest::Approx(all_moe - 4'202'496.0));
  }

  // A dense hybrid (Nemotron-H's letters: M Mamba-2, - MLP) of Nemotron 3 Nano's shapes, 4 layers
  // "M-M-" on two stages. pp-first-layers=2 puts the same layers on each stage as the even split,
  // "M-" and "M-": the uneven split's memory must be the even split's, where pricing every layer
  // as the first (a Mamba-2 layer) would hold two Mamba-2 layers on stage 0.
  TEST_CASE("an uneven split holds each stage's own kinds of layer: a hybrid's split written two ways agrees") {
    workload::Workload w = workload::load_workload(kSource / "workloads/nemotron-3-nano.json");
    w.shape->moe.reset();
    w.shape->hybrid->pattern = "M-M-";
    w.shape->layers = 4;
    const auto memory = [&](const std::string& split) {
      return cost::estimate_memory(w, resolved(w, "dp=1,pp=2,mbs=1,gbs=8,flash=on" + split, 2));
    };
    const cost::MemoryBreakdown even = memory("");
    const cost::MemoryBreakdown uneven = memory(",pp-first-layers=2");
    CHECK(uneven.activations.value() == doctest::Approx(even.activations.value()));
    CHECK(uneven.total.value() == doctest::Approx(even.total.value()));
  }
}

}  // namespace mixed_layer_memory_test
