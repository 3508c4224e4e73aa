// MoE plans under FSDP / ZeRO-3: dense state sharded over dp, routed experts over the expert
// data-parallel group (TorchTitan's FSDP2 with expert parallel, DeepSpeed-MoE's ZeRO), each
// block's dense part and experts gathered and reduce-scattered over their own groups. Every
// expected figure is derived in the comments from Mixtral 8x7B's shape.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/resolved_plan.hpp"

namespace moe_fsdp_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

// Mixtral 8x7B (workloads/mixtral-8x7b.json: h = 4096, 32 layers, 32 heads, 8 kv heads of 128,
// 8 experts of ffn 14336, SwiGLU, RMSNorm, untied 32000-token embeddings), per block:
//   attention q + o = 2 x 4096^2 = 33,554,432; k + v = 2 x 4096 x 1024 = 8,388,608 -> 41,943,040
//   two RMSNorms 2 x 4096 = 8,192; router 4096 x 8 = 32,768
//   -> dense part of a block 41,984,000
//   one expert 3 x 4096 x 14336 = 176,160,768; eight 1,409,286,144
// Routed experts 32 x 1,409,286,144 = 45,097,156,608; embeddings 2 x 32000 x 4096 = 262,144,000
// + final norm 4,096; total 46,702,792,704 (the published 46.7B); dense rest 1,605,636,096.
constexpr double kDenseBlock = 41'984'000.0;
constexpr double kExpertsOfBlock = 1'409'286'144.0;
constexpr double kRouted = 45'097'156'608.0;
constexpr double kDense = 1'605'636'096.0;

using test::resolved;

}  // namespace

TEST_SUITE("graph.moe_fsdp") {
  TEST_CASE("Mixtral 8x7B, dp=8, ep=2, fsdp=full: dense state / 8, expert state / edp = 4, one block gathered") {
    const auto w = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    REQUIRE(w.parameters == doctest::Approx(kDense + kRouted).epsilon(1e-12));
    const plan::Plan p = resolved(w, "dp=8,ep=2,fsdp=full,seq=4096,flash=on", 8);
    // edp = tp x dp / (etp x ep) = 8 / 2 = 4: each GPU holds 4 of a block's 8 experts, and 4 GPUs
    // hold the same 4.
    CHECK(p.expert_dp() == 4);
    const cost::MemoryBreakdown m = cost::estimate_memory(w, p, {});
    // Dense: 1,605,636,096 / 8 = 200,704,512 params per GPU; experts: 45,097,156,608 / ep 2 / edp 4 =
    // 5,637,144,576. bf16 weights and gradients 2 B each, Adam 12 B (ZeRO section 3.1):
    //   parameters = gradients = (200,704,512 + 5,637,144,576) x 2 = 11,675,698,176 B
    //   optimizer state = 5,837,849,088 x 12 = 70,054,189,056 B
    CHECK(m.parameters.value() == doctest::Approx(11'675'698'176.0).epsilon(1e-12));
    CHECK(m.gradients.value() == doctest::Approx(11'675'698'176.0).epsilon(1e-12));
    CHECK(m.optimizer_state.value() == doctest::Approx(70'054'189'056.0).epsilon(1e-12));
    // The gathered unit is one block whole on this GPU: its dense part 41,984,000 and its 4
    // experts 704,643,072 = 746,627,072 params; the current and one prefetched block in bf16 plus
    // the block's bf16 gradients: 746,627,072 x (2 x 2 + 2) = 4,479,762,432 B, beside the MoE
    // dispatch buffers.
    const Bytes gathered = m.temporary_buffers - cost::moe_dispatch_buffers(*w.shape, p);
    CHECK(gathered.value() == doctest::Approx(4'479'762'432.0).epsilon(1e-12));
    const cost::MoeShardUnits u = cost::moe_shard_units(*w.shape, p);
    CHECK(u.dense_block == doctest::Approx(kDenseBlock));
    CHECK(u.expert_block == doctest::Approx(kExpertsOfBlock / 2.0));
  }

  TEST_CASE("ZeRO-3 keeps the experts in the block's unit when they shard over dp (ep=1)") {
    const auto w = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    const plan::Plan p = resolved(w, "dp=8,zero=3,seq=4096,flash=on", 8);
    const cost::MemoryBreakdown m = cost::estimate_memory(w, p, {});
    // All 46,702,792,704 params over 8 ranks: 5,837,849,088 x 2 B = 11,675,698,176 B, the same
    // as above: ep=2 x edp=4 shards the experts 8 ways too.
    CHECK(m.parameters.value() == doctest::Approx(11'675'698'176.0).epsilon(1e-12));
    // The unit: a block with all 8 experts, 41,984,000 + 1,409,286,144 = 1,451,270,144 params, x 6 B.
    CHECK((m.temporary_buffers - cost::moe_dispatch_buffers(*w.shape, p)).value() ==
          doctest::Approx(1'451'270'144.0 * 6.0).epsilon(1e-12));
  }

  TEST_CASE("one MoE block's gathers: the dense part over dp=8, its experts over edp=4 (GPUs 2 apart)") {
    const auto w = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 1);
    const plan::Plan p = resolved(w, "dp=8,ep=2,fsdp=full,seq=4096,flash=on,gbs=16", 8);
    REQUIRE(p.micro_batches() == 2);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepPrediction pr = graph::predict_step(w, p, topo, options);
    int found = 0;
    for (const graph::CommTerm& t : pr.communication) {
      if (t.role == "shard group" && t.op == cost::CollectiveOp::kAllGather) {
        // One block's dense part in bf16: 41,984,000 x 2 = 83,968,000 B over the 8 data-parallel
        // ranks; per micro-batch 32 units, the first carrying the 1,605,636,096 - 32 x 41,984,000
        // = 262,148,096 parameters outside the blocks (524,296,192 B), forward and backward
        // (FULL_SHARD gathers again): over the 2 micro-batches 62 x 83,968,000 B and
        // 2 x 608,264,192 B.
        CHECK(t.ranks == 8);
        CHECK(t.size.value() == doctest::Approx(83'968'000.0));
        REQUIRE(t.calls.groups.size() == 2);
        CHECK(t.calls.groups[0].count == 62);
        CHECK(t.calls.groups[0].size.value() == doctest::Approx(83'968'000.0));
        CHECK(t.calls.groups[1].count == 2);
        CHECK(t.calls.groups[1].size.value() == doctest::Approx(608'264'192.0));
        ++found;
      }
      if (t.role == "expert shard group") {
        // The 4 experts of one block on this GPU: 704,643,072 x 2 B = 1,409,286,144 B over edp = 4
        // ranks; dense positions fold as ep (inner) x edp, so the group's GPUs are etp x ep = 2
        // apart ({0, 2, 4, 6}). 32 blocks per micro-batch.
        CHECK(t.ranks == 4);
        CHECK(t.stride == 2);
        CHECK(t.size.value() == doctest::Approx(1'409'286'144.0));
        CHECK(t.calls.count() == 2 * 32);
        ++found;
      }
      // No ZeRO-1/2-style expert reduction beside FSDP's per-block one.
      CHECK(t.role != "expert data parallel");
    }
    // Dense gathers forward and backward, expert gathers forward, backward, and the reduce-scatter.
    CHECK(found == 2 + 3);
  }
}

}  // namespace moe_fsdp_test
