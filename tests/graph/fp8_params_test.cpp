// fp8-params=on (Megatron-Core's --fp8-param-gather; Megatron-Bridge's fp8 and mxfp8 presets set
// fp8_param_gather=True): the quantized GEMMs' weights are kept in the low-precision format alone,
// so the 16-bit copy of every weight but the embedding and the output layer goes, and the
// distributed optimizer gathers those weights in that format. Hand derivation on Llama 3 70B
// (workloads/llama3-70b.json; tests/cost/peft_test.cpp derives its count):
//   P = 70,553,706,496 parameters; embedding and untied output layer E = 2 x 128,256 x 8192 =
//   2,101,346,304; the rest P - E = 68,452,360,192 (norms included, 1.3M of them).
//   At tp=1, pp=4, each GPU holds P / 4: its 16-bit parameters without fp8-params are P / 4 x 2 B
//   = 35,276,853,248 B; with them only the 16-bit embeddings' share stays: E / 4 x 2 B =
//   1,050,673,152 B. The mxfp8 weights themselves (1 B and a 1-byte scale per 32 elements, both
//   copies) were counted before as the low-precision copies and stay.
//   ZeRO-1's parameter all-gather per step: P / 4 x 2 B = 35,276,853,248 B without; with,
//   E / 4 x 2 B + (P - E) / 4 x (1 + 1/32) B = 1,050,673,152 + 17,647,874,112 = 18,698,547,264 B.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace fp8_params_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

plan::Plan plan_of(const workload::Workload& w, const std::string& text) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 8);
  plan::validate(p, w, 8);
  return p;
}

double gathered_bytes(const graph::StepPrediction& step) {
  double bytes = 0.0;
  for (const graph::CommTerm& t : step.communication) {
    if (t.name.rfind("ZeRO parameter all-gather", 0) != 0) continue;
    for (const auto& g : t.calls.groups) bytes += static_cast<double>(g.count) * g.size.value();
  }
  return bytes;
}

}  // namespace

TEST_SUITE("graph.fp8_params") {
  TEST_CASE("Llama 3 70B at pp=4 under mxfp8: the 16-bit weights and the gather shrink as derived above") {
    const auto w = workload::load_workload(kRoot + "/workloads/llama3-70b.json");
    const auto topo = topology::load_topology(kRoot + "/topologies/dgx-b200.json", 1);
    const std::string base = "tp=1,pp=4,zero=1,mbs=1,gbs=64,seq=4096,precision=mxfp8";
    const plan::Plan off = plan_of(w, base);
    const plan::Plan on = plan_of(w, base + ",fp8-params=on");
    const auto memory_off = cost::estimate_memory(w, off, cost::MemoryOptions{});
    const auto memory_on = cost::estimate_memory(w, on, cost::MemoryOptions{});
    CHECK(memory_off.parameters.value() == doctest::Approx(35'276'853'248.0));
    CHECK(memory_on.parameters.value() == doctest::Approx(1'050'673'152.0));
    // Nothing else in the memory moves.
    CHECK(memory_on.quantized_copies.value() == doctest::Approx(memory_off.quantized_copies.value()));
    CHECK(memory_on.gradients.value() == doctest::Approx(memory_off.gradients.value()));
    CHECK(memory_on.optimizer_state.value() == doctest::Approx(memory_off.optimizer_state.value()));
    graph::StepOptions options;
    options.explain = false;
    CHECK(gathered_bytes(graph::predict_step(w, off, topo, options)) == doctest::Approx(35'276'853'248.0));
    CHECK(gathered_bytes(graph::predict_step(w, on, topo, options)) == doctest::Approx(18'698'547'264.0));
  }

  TEST_CASE("Llama 3 70B under FSDP with fp8 weights: the gathered blocks' 16-bit copy is only their norms") {
    // A block per GPU at tp=1: h (h + 2 kv) + h^2 + h 2f + f h = 8192 x 10240 + 8192^2 + 8192 x 57344 +
    // 28672 x 8192 = 855,638,016 GEMM weights and 2 x 8192 = 16,384 norm weights, 855,654,400 in all.
    // FSDP holds the current and one prefetched block and one block's 2-byte gradients. Without
    // fp8-params both blocks are gathered in 16-bit: 2 x 855,654,400 x 2 B + 855,654,400 x 2 B =
    // 5,133,926,400 B. With them the GEMM weights arrive quantized (the low-precision copies): the
    // 16-bit gather keeps the norms, 2 x 16,384 x 2 B + 1,711,308,800 B = 1,711,374,336 B.
    const auto w = workload::load_workload(kRoot + "/workloads/llama3-70b.json");
    const std::string base = "dp=8,fsdp=full,mbs=1,gbs=64,seq=4096,precision=fp8";
    const auto off = cost::estimate_memory(w, plan_of(w, base), cost::MemoryOptions{});
    const auto on = cost::estimate_memory(w, plan_of(w, base + ",fp8-params=on"), cost::MemoryOptions{});
    CHECK(off.temporary_buffers.value() == doctest::Approx(5'133'926'400.0));
    CHECK(on.temporary_buffers.value() == doctest::Approx(1'711'374'336.0));
    CHECK(on.quantized_copies.value() == doctest::Approx(off.quantized_copies.value()));
  }
}

}  // namespace fp8_params_test
