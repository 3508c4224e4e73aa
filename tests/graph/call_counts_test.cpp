// Every communication term counts the collective calls NCCL is asked for in a step, in whole
// calls grouped by size: FSDP units with the parameters outside the layers riding in the first,
// gradient buckets with a smaller last one. The counts and sizes are derived by hand from the
// models' shapes; the time is each group's count x the one collective model's price of its size
// and the step's collective overhead.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/predict.hpp"
#include "support/predict_plan.hpp"

namespace call_counts_test {

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

// Llama 2 7B: 6,738,415,616 parameters, bf16 gradients and weights: 13,476,831,232 B.
constexpr double kLlama2Bytes = 6'738'415'616.0 * 2.0;

graph::StepPrediction predict(const char* workload, const std::string& plan_text, const char* topology, int nodes,
                              bool explain = false) {
  const auto w = workload::load_workload(kRoot + "/workloads/" + workload);
  const auto topo = topology::load_topology(kRoot + "/topologies/" + topology, nodes);
  const plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = explain;
  return graph::predict_step(w, p, topo, options);
}

void check_groups(const graph::CommTerm& t, std::int64_t whole, double whole_size, std::int64_t last,
                  double last_size) {
  CAPTURE(t.name);
  CHECK(t.calls.count() == whole + last);
  REQUIRE(t.calls.groups.size() == 2);
  CHECK(t.calls.groups[0].count == whole);
  CHECK(t.calls.groups[0].size.value() == doctest::Approx(whole_size).epsilon(1e-12));
  CHECK(t.calls.groups[1].count == last);
  CHECK(t.calls.groups[1].size.value() == doctest::Approx(last_size).epsilon(1e-12));
}

}  // namespace

TEST_SUITE("graph.call_counts") {
  TEST_CASE("Llama 3 70B under ZeRO-3 on 64 H100s: 80 gathers per pass, the first carrying the embeddings") {
    // dp = 64, mbs 2, gbs 128: one micro-batch. Each pass gathers the 80 layers' units, the first
    // with the root: 79 x 1.59 GiB and 1 x 5.51 GiB, not 82.46 calls of 1.59 GiB. The backward
    // gathers them again (ZeRO-3) and reduce-scatters the same sizes (bf16 gradients).
    const char* plan = "dp=64,zero=3,mbs=2,recompute=full,gbs=128,seq=8192,precision=fp8";
    const auto p = predict("llama3-70b.json", plan, "dgx-h100.json", 8);
    for (const char* name : {"FSDP all-gather (forward)", "FSDP all-gather (backward)", "FSDP gradient reduce-scatter"})
      check_groups(test::comm_term(p, name), 79, kUnitBytes, 1, kFirstUnitBytes);
    // Priced call by call on the one collective model: the 64 ranks, one per GPU of 8 nodes.
    const auto topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 8);
    const cost::CollectiveGroup group = cost::collective_group(topo, topo.tiers(64, 1, {}));
    const double overhead = p.compute_detail.params.collective_overhead.value();
    const auto price = [&](cost::CollectiveOp op, double bytes) {
      return cost::price_collective(group, op, Bytes(bytes), {}).time.value() + overhead;
    };
    const auto units = [&](cost::CollectiveOp op, double micro_batches) {
      return micro_batches * (79.0 * price(op, kUnitBytes) + price(op, kFirstUnitBytes));
    };
    const double gathers = units(cost::CollectiveOp::kAllGather, 1.0);
    CHECK(test::comm_term(p, "FSDP all-gather (forward)").time.value() == doctest::Approx(gathers));
    CHECK(test::comm_term(p, "FSDP all-gather (backward)").time.value() == doctest::Approx(gathers));
    CHECK(test::comm_term(p, "FSDP gradient reduce-scatter").time.value() ==
          doctest::Approx(units(cost::CollectiveOp::kReduceScatter, 1.0)));
    // Two micro-batches gather it all twice.
    const auto two = predict("llama3-70b.json", "dp=64,zero=3,mbs=2,recompute=full,gbs=256,seq=8192,precision=fp8",
                             "dgx-h100.json", 8);
    check_groups(test::comm_term(two, "FSDP all-gather (forward)"), 158, kUnitBytes, 2, kFirstUnitBytes);
    CHECK(test::comm_term(two, "FSDP all-gather (forward)").time.value() ==
          doctest::Approx(units(cost::CollectiveOp::kAllGather, 2.0)));
  }

  TEST_CASE("--explain prints the calls by size") {
    const auto p = predict("llama3-70b.json", "dp=64,zero=3,mbs=2,recompute=full,gbs=128,seq=8192,precision=fp8",
                           "dgx-h100.json", 8, true);
    std::string formula;
    for (const auto& row : p.explanation) {
      if (row.label == "FSDP all-gather (forward) (exposed)") formula = row.formula;
    }
    CHECK(formula.rfind("80 calls (79 x 1.59 GiB, 1 x 5.51 GiB) over 64 ranks (stride 1, all-gather ", 0) == 0);
  }

  TEST_CASE("Llama 2 7B DDP on 1024 H100s: 514 buckets of 25 MiB and a last one of 2.51 MiB") {
    // 13,476,831,232 B / 26,214,400 B = 514.1: 514 x 26,214,400 = 13,474,201,600 B, and the last
    // bucket the 2,629,632 B left.
    const auto p = predict("llama2-7b.json", "dp=1024,gbs=1024,flash=on", "dgx-h100.json", 128);
    check_groups(test::comm_term(p, "DDP gradient all-reduce"), 514, 26'214'400.0, 1, 2'629'632.0);
  }

  TEST_CASE("Megatron-LM's DDP all-reduces its fp32 main gradients in its own buckets") {
    // zero=0 with grad-reduce=fp32 on one DGX H100: 6,738,415,616 x 4 B = 26,953,662,464 B in
    // buckets of max(40M, 1M x dp = 8M) = 40M parameters, 1.6e8 B: 168 whole (26,880,000,000 B)
    // and 73,662,464 B last.
    const auto overlapped = predict(
        "llama2-7b.json", "dp=8,grad-reduce=fp32,overlap-grad-reduce=on,mbs=1,gbs=32,flash=on", "dgx-h100.json", 1);
    check_groups(test::comm_term(overlapped, "DDP gradient all-reduce"), 168, 1.6e8, 1, 73'662'464.0);
    // Without overlap-grad-reduce (Megatron-LM's default) the buffer is one bucket.
    const auto after = predict("llama2-7b.json", "dp=8,grad-reduce=fp32,overlap-grad-reduce=off,mbs=1,gbs=32,flash=on",
                               "dgx-h100.json", 1);
    const graph::CommTerm& whole =
        test::comm_term(after, "DDP gradient all-reduce (after the backward: overlap-grad-reduce=off)");
    CHECK(whole.calls.count() == 1);
    REQUIRE(whole.calls.groups.size() == 1);
    CHECK(whole.calls.groups[0].size.value() == doctest::Approx(26'953'662'464.0).epsilon(1e-12));
  }

  TEST_CASE("ZeRO-2 reduces every micro-batch's buckets, and the updated parameters are one gather or buckets") {
    // One DGX H100, dp = 8, gbs 32 of mbs 1: 4 micro-batches. DeepSpeed's reduce bucket is 5e8
    // elements, 1e9 B of bf16: 13 whole buckets of the 13,476,831,232 B and 476,831,232 B last,
    // every micro-batch: 52 + 4 calls.
    const auto zero2 = predict("llama2-7b.json", "dp=8,zero=2,mbs=1,gbs=32,flash=on", "dgx-h100.json", 1);
    check_groups(test::comm_term(zero2, "ZeRO gradient reduce-scatter"), 52, 1e9, 4, kLlama2Bytes - 13e9);
    // After the optimizer, one all-gather of all the weights.
    const graph::CommTerm& gather = test::comm_term(zero2, "ZeRO parameter all-gather");
    CHECK(gather.calls.count() == 1);
    REQUIRE(gather.calls.groups.size() == 1);
    CHECK(gather.calls.groups[0].size.value() == doctest::Approx(kLlama2Bytes).epsilon(1e-12));
    // zero=1 (Megatron-Core's distributed optimizer) beside the next forward (overlap-param-gather=on),
    // in its buckets of max(40M, 1M x dp = 8M) = 40M parameters, 8e7 B of bf16: 168 whole buckets
    // (13,440,000,000 B) and 36,831,232 B last.
    const auto beside =
        predict("llama2-7b.json", "dp=8,zero=1,mbs=1,gbs=32,flash=on,overlap-param-gather=on", "dgx-h100.json", 1);
    check_groups(test::comm_term(beside, "ZeRO parameter all-gather"), 168, 8e7, 1, kLlama2Bytes - 168 * 8e7);
  }
}

}  // namespace call_counts_test
