// Activation offload (offload-layers=N) as Transformer Engine's AsyncDoubleBufferGroupOffloadHandler
// runs Megatron-Core's cpu_offloading (transformer_engine/pytorch/cpu_offload.py): its
// layer_window_map ends window i at layer (L // N) (i + 1) - 1, plus i + 1 for the first L % N
// windows and L % N after them; the copy of layer i runs beside window i's compute (window 0's
// from layer 1 on), and the compute stream waits for it where the window ends.
#include <doctest/doctest.h>

#include <filesystem>
#include <numeric>
#include <vector>

#include "stepcast/cost/activation_offload.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace activation_offload_test {

using namespace stepcast;

TEST_SUITE("cost.activation_offload") {
  TEST_CASE("windows: Llama 3 70B's 40 of 80 layers in windows of 2, Llama 3.1 405B's 92 of 126 in 34 of 2 then 1") {
    CHECK(cost::offload_windows(80, 40) == std::vector<int>(40, 2));
    // TE's map for L = 126, N = 92: L // N = 1, L % N = 34. Window 0 ends at 1 x 1 - 1 + 1 = 1 (2
    // layers); window 33 at 34 - 1 + 34 = 67, so windows 0-33 hold 68 layers, 2 each; window 34 ends
    // at 35 - 1 + 34 = 68 (1 layer), and window 91 at 92 - 1 + 34 = 125, the last layer.
    const std::vector<int> w = cost::offload_windows(126, 92);
    REQUIRE(w.size() == 92);
    CHECK(w[0] == 2);
    CHECK(w[33] == 2);
    CHECK(w[34] == 1);
    CHECK(w[91] == 1);
    CHECK(std::accumulate(w.begin(), w.end(), 0) == 126);
  }

  TEST_CASE("waits: each window's copy less the compute beside it, forward and backward") {
    // 4 layers, 2 offloaded: windows of 2. A layer's 1 GB at 100 GB/s copies in 10 ms. Forward
    // 4 ms a layer: window 0 hides 4 ms of its copy (one layer beside it), window 1 8 ms: waits
    // 6 + 2 = 8 ms. Backward 8 ms a layer: 10 - 8 = 2 ms, then 10 - 16 < 0: 2 ms.
    const cost::OffloadWaits w =
        cost::offload_waits(4, 2, Bytes(1e9), BytesPerSecond(100e9), Seconds(4e-3), Seconds(8e-3));
    CHECK(w.copy.value() == doctest::Approx(10e-3));
    CHECK(w.forward.value() == doctest::Approx(8e-3));
    CHECK(w.backward.value() == doctest::Approx(2e-3));
  }

  TEST_CASE("memory: Llama 3 70B keeps 80 - 40 + 1 = 41 layers' activations beside the fp32 logits") {
    const std::filesystem::path source = STEPCAST_SOURCE_DIR;
    const auto w = workload::load_workload(source / "workloads/llama3-70b.json");
    const auto activations = [&](const std::string& extra) {
      const plan::Plan p = plan::resolve(
          plan::parse_plan("dp=64,fsdp=full,mbs=2,gbs=256,seq=8192,recompute=none,flash=on,precision=fp8" + extra), w,
          64);
      plan::validate(p, w, 64);
      return cost::estimate_memory(w, p).activations.value();
    };
    // The logits a GPU keeps for the loss in fp32 at pp = 1: 4 s b V / t = 4 x 8192 x 2 x 128256.
    const double logits = 4.0 * 8192 * 2 * 128256;
    const double all = activations("") - logits;
    const double kept = activations(",offload-layers=40") - logits;
    CHECK(kept / all == doctest::Approx(41.0 / 80.0));
  }

  // Each copy moves the mean layer's activations. tests/cost/data/moe-2gpu.json (2 layers, h = 1024,
  // s = 1024, 4 routed experts of 2048, top-2, SwiGLU) with its first layer dense (ffn 4096): the
  // layers differ only in their MLP block. The MoE block keeps 31,465,472 B at dp=2, ep=2, bf16
  // (tests/cost/moe_saved_activations_test.cpp); the dense one its input 1024 x 1024 x 2 =
  // 2,097,152, SwiGLU's gate and up 2 x 1024 x 4096 x 2 = 16,777,216 and the down projection's
  // input 1024 x 4096 x 2 = 8,388,608: 27,262,976 B. The mean is the dense layer's plus half the
  // difference: (31,465,472 - 27,262,976) / 2 = 2,101,248 B.
  TEST_CASE("a stack of two kinds offloads its mean layer: a dense and an MoE layer, 2,101,248 B over the dense one") {
    workload::Workload w =
        workload::load_workload(std::filesystem::path(STEPCAST_SOURCE_DIR) / "tests/cost/data/moe-2gpu.json");
    w.shape->moe->first_dense_layers = 1;
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=2,ep=2,flash=on,offload-layers=1"), w, 2);
    plan::validate(p, w, 2);
    const double dense = cost::layer_activation_bytes(*w.shape, p).value();
    CHECK(cost::mean_layer_activation_bytes(*w.shape, p).value() == doctest::Approx(dense + 2'101'248.0));
    w.shape->moe->first_dense_layers = 0;
    // One kind: every layer's.
    CHECK(cost::mean_layer_activation_bytes(*w.shape, p).value() ==
          doctest::Approx(cost::layer_activation_bytes(*w.shape, p).value()));
  }
}

}  // namespace activation_offload_test
