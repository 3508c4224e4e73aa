// Megatron-LM's interleaved schedule runs one more model chunk's forward before its steady state
// when the EP all-to-all overlap is on (schedules.py: "we schedule one extra micro-batch forward
// step before the 1f1b stages", num_warmup_microbatches + 1), so every stage holds one more chunk's
// activations. Counted by hand from Megatron's warm-up on Mixtral 8x7B (32 layers).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/pipeline.hpp"
#include "stepcast/workload/workload.hpp"

namespace moe_overlap_memory_test {

using namespace stepcast;

namespace {

const workload::Workload& mixtral() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/mixtral-8x7b.json");
  return w;
}

plan::Plan resolved(const std::string& text, int gpus) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), mixtral(), gpus);
  plan::validate(p, mixtral(), gpus);
  return p;
}

const std::string kInterleaved = "pp=2,vp=2,schedule=interleaved,dp=2,ep=2,flash=on,seq=4096,gbs=16";

}  // namespace

TEST_SUITE("cost.moe_overlap_memory") {
  TEST_CASE("one more chunk in flight: 1/v of a micro-batch on every stage, only under the interleaved schedule") {
    CHECK(cost::overlap_extra_microbatches(resolved(kInterleaved + ",moe-overlap=on", 4)) == 0.5);
    CHECK(cost::overlap_extra_microbatches(resolved(kInterleaved, 4)) == 0.0);
    // Without pipelining the forward of one micro-batch runs beside the backward of the one before,
    // layer against layer in reverse order: what one frees the other holds.
    CHECK(cost::overlap_extra_microbatches(resolved("dp=2,ep=2,flash=on,gbs=16,moe-overlap=on", 2)) == 0.0);
  }

  TEST_CASE("stage 0 of p=2, v=2 holds 6 chunks instead of 5: activations x 3.0 / 2.5") {
    // Megatron's warm-up on rank 0: (p - 1) x 2 + (v - 1) x p = 4 chunks, one more in flight at
    // the peak: 5 chunks of 8 layers = 2.5 micro-batches of the stage's 16 layers; the overlap's
    // extra forward makes it 6 = 3.0.
    const Bytes off = cost::activation_bytes(*mixtral().shape, resolved(kInterleaved, 4));
    const Bytes on = cost::activation_bytes(*mixtral().shape, resolved(kInterleaved + ",moe-overlap=on", 4));
    CHECK(on.value() / off.value() == doctest::Approx(3.0 / 2.5));
  }
}

}  // namespace moe_overlap_memory_test
