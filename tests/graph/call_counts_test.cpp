// FSDP / ZeRO-3 units priced as the step graph issues them: each pass's layers in calls of one
// unit, the parameters outside the layers riding in the first. The sizes are derived by hand
// from the model's shape; the time is each call's price on the one collective model.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/predict.hpp"

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

// Llama 3 70B (workloads/llama3-70b.json: h = 8192, 80 layers, 64 heads and 8 kv heads of 128,
// SwiGLU ffn 28672, RMSNorm, no biases, untied 128256-token embeddings), per layer:
//   q + o = 2 x 8192^2 = 134,217,728; k + v = 2 x 8192 x 1024 = 16,777,216
//   MLP 3 x 8192 x 28672 = 704,643,072; two RMSNorms 2 x 8192 = 16,384 -> 855,654,400
// Outside the layers (the root): embedding and head 2 x 128256 x 8192 = 2,101,346,304 and the
// final norm 8192 -> 2,101,354,496. Both in bf16 (fp8 training keeps bf16 weights and
// gradients, its fp8 copies apart): 2 B each.
constexpr double kUnitBytes = 855'654'400.0 * 2.0;  // 1,711,308,800 B = 1.59 GiB
constexpr double kRootBytes = 2'101'354'496.0 * 2.0;
constexpr double kFirstUnitBytes = kUnitBytes + kRootBytes;  // 5,914,017,792 B = 5.51 GiB

graph::StepPrediction predict(const char* workload, const std::string& plan_text, const char* topology, int nodes) {
  const auto w = workload::load_workload(kRoot + "/workloads/" + workload);
  const auto topo = topology::load_topology(kRoot + "/topologies/" + topology, nodes);
  const plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  return graph::predict_step(w, p, topo, options);
}

const graph::CommTerm& term(const graph::StepPrediction& p, const std::string& name) {
  for (const graph::CommTerm& t : p.communication) {
    if (t.name.rfind(name, 0) == 0) return t;
  }
  FAIL("no term " << name);
  return p.communication.front();
}

}  // namespace

TEST_SUITE("graph.call_counts") {
  TEST_CASE("Llama 3 70B under ZeRO-3 on 64 H100s: 80 gathers per pass, the first carrying the embeddings") {
    // dp = 64, mbs 2, gbs 128: one micro-batch. Each pass gathers the 80 layers' units, the first
    // with the root: 79 calls of 1.59 GiB and 1 of 5.51 GiB (not 82 of 1.59 GiB and a partial
    // 83rd), priced on the 64 ranks, one per GPU of 8 nodes. The backward gathers them again
    // (ZeRO-3) and reduce-scatters the same sizes (bf16 gradients).
    const auto topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 8);
    const cost::CollectiveGroup group = cost::collective_group(topo, topo.tiers(64, 1, {}));
    const auto price = [&](cost::CollectiveOp op, double bytes) {
      return cost::price_collective(group, op, Bytes(bytes), {}).time.value();
    };
    const auto units = [&](cost::CollectiveOp op, double micro_batches) {
      return micro_batches * (79.0 * price(op, kUnitBytes) + price(op, kFirstUnitBytes));
    };
    const char* plan = "dp=64,zero=3,mbs=2,recompute=full,gbs=128,seq=8192,precision=fp8";
    const auto p = predict("llama3-70b.json", plan, "dgx-h100.json", 8);
    const double gathers = units(cost::CollectiveOp::kAllGather, 1.0);
    CHECK(term(p, "FSDP all-gather (forward)").time.value() == doctest::Approx(gathers));
    CHECK(term(p, "FSDP all-gather (backward)").time.value() == doctest::Approx(gathers));
    CHECK(term(p, "FSDP gradient reduce-scatter").time.value() ==
          doctest::Approx(units(cost::CollectiveOp::kReduceScatter, 1.0)));
    // Two micro-batches gather it all twice.
    const auto two = predict("llama3-70b.json", "dp=64,zero=3,mbs=2,recompute=full,gbs=256,seq=8192,precision=fp8",
                             "dgx-h100.json", 8);
    CHECK(term(two, "FSDP all-gather (forward)").time.value() ==
          doctest::Approx(units(cost::CollectiveOp::kAllGather, 2.0)));
  }
}
