// Layers a low-precision plan keeps in bf16 (bf16-first-layers=, bf16-last-layers=): Megatron-Core's
// first_last_layers_bf16, whose rule (megatron/core/fp8_utils.py, is_first_last_bf16_layer) keeps
// global layer i out of the fp8/fp4 autocast when i < num_layers_at_start_in_bf16 or
// i >= num_layers - num_layers_at_end_in_bf16. Expected counts are that rule applied by hand.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace bf16_layers_test {

using namespace stepcast;

namespace {
workload::Workload llama2_7b() {
  return workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/llama2-7b.json");
}

/// Layers of the kinds kept in bf16 and of the others.
std::pair<int, int> kept_and_quantized(const std::vector<std::pair<cost::LayerKind, int>>& kinds) {
  int kept = 0;
  int quantized = 0;
  for (const auto& [kind, count] : kinds) (kind.bf16 ? kept : quantized) += count;
  return {kept, quantized};
}
}  // namespace

TEST_SUITE("cost.bf16_layers") {
  TEST_CASE("the first and last layers by global index, on every pipeline stage that holds them") {
    const workload::Workload w = llama2_7b();  // 32 layers
    const cost::Bf16Layers bf16{1, 2};         // layers 0, 30 and 31
    CHECK(kept_and_quantized(cost::layer_kinds(*w.shape, 0, 32, bf16)) == std::pair(3, 29));
    // pp=4: stage 0 holds layers 0-7 (layer 0 kept), stages 1 and 2 none, stage 3 layers 24-31
    // (30 and 31 kept).
    CHECK(kept_and_quantized(cost::layer_kinds(*w.shape, 0, 8, bf16)) == std::pair(1, 7));
    CHECK(kept_and_quantized(cost::layer_kinds(*w.shape, 8, 8, bf16)) == std::pair(0, 8));
    CHECK(kept_and_quantized(cost::layer_kinds(*w.shape, 24, 8, bf16)) == std::pair(2, 6));
    // None asked for: one kind, as before.
    CHECK(cost::layer_kinds(*w.shape, 0, 32).size() == 1);
  }

  TEST_CASE("a plan's bf16 layers count only under a quantized precision") {
    const workload::Workload w = llama2_7b();
    const plan::Plan fp4 = plan::resolve(plan::parse_plan("dp=1,precision=nvfp4,bf16-last-layers=4"), w, 1);
    CHECK(cost::bf16_layers(fp4).first == 0);
    CHECK(cost::bf16_layers(fp4).last == 4);
  }

  TEST_CASE("a kept layer under fp8 runs the kernels of a bf16 layer: no quantize kernels, no fp8 GEMM") {
    const workload::Workload w = llama2_7b();
    const plan::Plan fp8 = plan::resolve(plan::parse_plan("dp=1,precision=fp8,fp8-recipe=current"), w, 1);
    const plan::Plan bf16 = plan::resolve(plan::parse_plan("dp=1,precision=bf16"), w, 1);
    cost::OperatorContext kept = cost::operator_context(fp8);
    kept.kind.bf16 = true;
    const std::vector<cost::Operator> kept_ops = cost::layer_operators(*w.shape, kept);
    const std::vector<cost::Operator> bf16_ops = cost::layer_operators(*w.shape, cost::operator_context(bf16));
    const std::vector<cost::Operator> fp8_ops = cost::layer_operators(*w.shape, cost::operator_context(fp8));
    REQUIRE(kept_ops.size() == bf16_ops.size());
    for (std::size_t i = 0; i < kept_ops.size(); ++i) {
      CHECK(kept_ops[i].name == bf16_ops[i].name);
      CHECK_FALSE(kept_ops[i].low_precision);
      CHECK(kept_ops[i].bytes.value() == doctest::Approx(bf16_ops[i].bytes.value()));
    }
    // The quantized layer has the extra cast kernels (two before each of the four GEMM groups'
    // inputs under current scaling at least) that the kept layer lacks.
    CHECK(fp8_ops.size() > kept_ops.size());
  }

  TEST_CASE("kept layers hold no quantized copies and keep a bf16 layer's activations") {
    const workload::Workload w = llama2_7b();
    const auto resolved = [&](const std::string& text) { return plan::resolve(plan::parse_plan(text), w, 1); };
    // Llama-2 7B's linear weights per layer: 202,375,168 (low_precision_test.cpp derives them);
    // NVFP4 keeps two copies at 0.5625 B an element. One GPU, 32 layers, 3 kept: 29 layers' copies.
    const plan::Plan kept = resolved("dp=1,precision=nvfp4,bf16-first-layers=1,bf16-last-layers=2");
    CHECK(cost::quantized_copy_bytes(*w.shape, kept, 1, false).value() ==
          doctest::Approx(29.0 * 202375168.0 * 2.0 * 0.5625));
    // pp=4: stage 0 holds layers 0-7, layer 0 kept: 7 layers' copies.
    const plan::Plan staged =
        plan::resolve(plan::parse_plan("dp=1,pp=4,precision=nvfp4,bf16-first-layers=1,bf16-last-layers=2"), w, 4);
    CHECK(cost::quantized_copy_bytes(*w.shape, staged, 1, false).value() ==
          doctest::Approx(7.0 * 202375168.0 * 2.0 * 0.5625));
    // Activations, one GPU holding one micro-batch: 29 layers as an NVFP4 layer keeps them and 3
    // as a bf16 layer does.
    const plan::Plan fp4 = resolved("dp=1,precision=nvfp4");
    const plan::Plan bf16 = resolved("dp=1,precision=bf16");
    const double fp4_layer = cost::layer_activation_bytes(*w.shape, fp4).value();
    const double bf16_layer = cost::layer_activation_bytes(*w.shape, bf16).value();
    CHECK(bf16_layer != doctest::Approx(fp4_layer));
    CHECK(cost::activation_bytes(*w.shape, kept).value() - cost::activation_bytes(*w.shape, fp4).value() ==
          doctest::Approx(3.0 * (bf16_layer - fp4_layer)));
  }

  TEST_CASE("mtp-bf16=on: Nemotron 3 Super's two MTP depths run their GEMMs at the bf16 rate") {
    // keep_mtp_spec_in_bf16 (Megatron-Bridge's Nemotron 3 Super recipe) builds the MTP module's
    // attention and MoE outside the MXFP8 autocast. On a GB300 the bf16 peak is half the MXFP8
    // one (2.5 against 5 PFLOP/s), so the last stage's forward grows; the layers' stay as they are.
    const workload::Workload w =
        workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/nemotron-3-super.json");
    const topology::GpuSpec gpu =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gb300-nvl72.json", 18).gpu();
    const auto compute = [&](const std::string& extra) {
      const plan::Plan p = plan::resolve(plan::parse_plan("tp=1,pp=1,ep=64,mbs=1,precision=mxfp8" + extra), w, 64);
      cost::ComputeOptions options;
      options.explain = false;
      return cost::estimate_compute(w, p, gpu, options);
    };
    const cost::ComputeEstimate quantized = compute("");
    const cost::ComputeEstimate kept = compute(",mtp-bf16=on");
    CHECK(kept.stages.front().forward.value() > quantized.stages.front().forward.value());
    // Both MTP depths (two blocks of attention then experts) and nothing else change: the GEMM
    // FLOPs counted are the same.
    CHECK(kept.flops.hardware.value() == doctest::Approx(quantized.flops.hardware.value()));
  }

  TEST_CASE("--explain names the layers kept in bf16: Super's last 14 of 88 and its two MTP depths") {
    const workload::Workload w =
        workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/nemotron-3-super.json");
    const topology::GpuSpec gpu =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gb300-nvl72.json", 18).gpu();
    const plan::Plan p =
        plan::resolve(plan::parse_plan("tp=1,pp=1,ep=64,mbs=1,precision=nvfp4,bf16-last-layers=14,mtp-bf16=on"), w, 64);
    const cost::ComputeEstimate c = cost::estimate_compute(w, p, gpu, cost::ComputeOptions{});
    bool named = false;
    for (const auto& row : c.explanation) {
      if (row.label != "layers in bf16") continue;
      named = true;
      CHECK(row.value == "16 layers");  // 14 decoder layers + 2 MTP depths
      CHECK(row.formula.find("the first 0 and the last 14 of 88 layers and the MTP modules") != std::string::npos);
    }
    CHECK(named);
  }
}

}  // namespace bf16_layers_test
