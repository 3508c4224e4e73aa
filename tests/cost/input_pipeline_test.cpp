// Input pipeline: demand at the step time against storage and decode supply; the bound and which
// side limits the job.
#include <doctest/doctest.h>

#include "stepcast/cost/input_pipeline.hpp"

namespace input_pipeline_test {

using namespace stepcast;
using namespace stepcast::cost;

TEST_SUITE("cost.input_pipeline") {
  TEST_CASE("tokenized samples: seq x bytes per token id") {
    // 4096 tokens x 4 B (int32 ids) = 16384 B.
    CHECK(tokenized_sample_bytes(4096, 4.0).value() == doctest::Approx(16384.0));
  }

  TEST_CASE("demand: global batch / step time, times bytes per sample") {
    InputPipelineInputs in;
    in.global_batch_samples = 1024;
    in.step_time = seconds(2.0);
    in.bytes_per_sample = Bytes(16384.0);
    in.nodes = 8;
    const InputPipelineBound b = input_pipeline_bound(in);
    // 1024 / 2 s = 512 samples/s; x 16384 B = 8 388 608 B/s.
    CHECK(b.demand_samples_per_s == doctest::Approx(512.0));
    CHECK(b.demand_bandwidth.value() == doctest::Approx(8388608.0));
    CHECK_FALSE(b.input_bound);
    CHECK(b.limiter == "gpus");
    CHECK(b.bound_step_time.value() == doctest::Approx(2.0));
  }

  TEST_CASE("storage slower than the GPUs bounds the step and names storage") {
    InputPipelineInputs in;
    in.global_batch_samples = 1024;
    in.step_time = seconds(2.0);
    in.bytes_per_sample = Bytes(16384.0);
    in.nodes = 8;
    in.read_bandwidth = BytesPerSecond(4e6);
    in.decode_samples_per_s_per_node = 100.0;
    const InputPipelineBound b = input_pipeline_bound(in);
    // Storage: 4e6 / 16384 = 244.140625 samples/s; decode 100 x 8 = 800 samples/s (not limiting).
    // Bound step: 1024 / 244.140625 = 4.194304 s; GPUs busy 2 / 4.194304 = 0.476837.
    REQUIRE(b.storage_samples_per_s.has_value());
    CHECK(*b.storage_samples_per_s == doctest::Approx(244.140625));
    CHECK(*b.decode_samples_per_s == doctest::Approx(800.0));
    CHECK(b.input_bound);
    CHECK(b.limiter == "storage");
    CHECK(b.bound_step_time.value() == doctest::Approx(4.194304));
    CHECK(b.gpu_busy_fraction == doctest::Approx(0.476837).epsilon(1e-5));
  }

  TEST_CASE("decoding slower than the GPUs names decode") {
    InputPipelineInputs in;
    in.global_batch_samples = 512;
    in.step_time = seconds(1.0);
    in.bytes_per_sample = Bytes(8192.0);
    in.nodes = 2;
    in.decode_samples_per_s_per_node = 128.0;
    // Decode: 128 x 2 = 256 samples/s < 512 demanded: step 512 / 256 = 2 s.
    const InputPipelineBound b = input_pipeline_bound(in);
    CHECK(b.input_bound);
    CHECK(b.limiter == "decode");
    CHECK(b.bound_step_time.value() == doctest::Approx(2.0));
  }
}

}  // namespace input_pipeline_test
