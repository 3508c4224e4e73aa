// Compute calibration from stepcast-kernel-bench JSON. The file tests/data/kernel-bench/
// synthetic_h100.json is hand-made in the schema of validate/README.md (no GPU has run it), with
// round times so every figure below is derived by hand:
//   bf16: attn_out.fwd 2*4096^3 = 137,438,953,472 FLOP in 0.2 ms = 687.19 TFLOP/s,
//         mlp_down.fwd 2*4096*4096*8192 = 274,877,906,944 FLOP in 0.5 ms = 549.76 TFLOP/s;
//         together 412,316,860,416 FLOP in 0.7 ms = 589.024 TFLOP/s,
//         of the H100 SXM dense bf16 peak 989.4 TFLOP/s (topologies/dgx-h100.json) = 0.595334;
//         per GEMM 687.19/989.4 = 0.694557 and 549.76/989.4 = 0.555646.
//   tf32: 137,438,953,472 FLOP in 0.4 ms = 343.597 TFLOP/s of 494.7 = 0.694557.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/input_file.hpp"
#include "stepcast/topology/topology.hpp"
#include "support/input_error_text.hpp"
#include "support/run_stepcast.hpp"

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

std::string root(const std::string& rel) { return std::string(STEPCAST_SOURCE_DIR) + "/" + rel; }
const std::string kFixture = root("tests/data/kernel-bench/synthetic_h100.json");

KernelBench fixture() { return parse_kernel_bench_json(read_text_file(kFixture), kFixture); }

const ComputeFractionFit& fit_for(const std::vector<ComputeFractionFit>& fits, const std::string& precision) {
  for (const auto& f : fits) {
    if (f.precision == precision) return f;
  }
  FAIL("no fit for " << precision);
  return fits.front();
}


}  // namespace

TEST_SUITE("calibrate.kernel_bench") {
  TEST_CASE("the reader keeps every GEMM and the precisions the bench skipped") {
    const KernelBench b = fixture();
    CHECK(b.gpu_name == "NVIDIA H100 80GB HBM3");
    CHECK(b.compute_capability == "9.0");
    CHECK(b.tokens == 4096);
    REQUIRE(b.gemms.size() == 3);
    CHECK(b.gemms[1].name == "mlp_down.fwd");
    CHECK(b.gemms[1].k == 8192);
    CHECK(b.gemms[1].flops.value() == 274877906944.0);
    CHECK(b.gemms[1].time.value() == doctest::Approx(5.0e-4));
    CHECK(b.skipped.size() == 2);
    CHECK(b.skipped.at("fp8") == "skipped: needs sm_89+");
    CHECK(is_kernel_bench_json(read_text_file(kFixture)));
    CHECK_FALSE(is_kernel_bench_json(R"({"tool": "stepcast-nccl-bench"})"));
    CHECK_FALSE(is_kernel_bench_json("# nccl-tests log"));
  }

  TEST_CASE("fractions of the H100 peak: summed FLOPs over summed time, per precision") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const auto fits = fit_compute_fractions(fixture(), topo.gpu());
    REQUIRE(fits.size() == 2);
    const auto& bf16 = fit_for(fits, "bf16");
    CHECK(bf16.gemms == 2);
    CHECK(bf16.achieved.value() == doctest::Approx(589.024086e12).epsilon(1e-8));
    CHECK(bf16.fraction == doctest::Approx(0.595334).epsilon(1e-5));
    CHECK(bf16.min_gemm_fraction == doctest::Approx(0.555646).epsilon(1e-5));
    CHECK(bf16.max_gemm_fraction == doctest::Approx(0.694557).epsilon(1e-5));
    CHECK(bf16.source.find("NVIDIA H100 80GB HBM3") != std::string::npos);
    CHECK(fit_for(fits, "tf32").fraction == doctest::Approx(0.694557).epsilon(1e-5));
  }

  TEST_CASE("a bench from another GPU, a rate above the peak and inconsistent FLOPs are refused") {
    const auto a100 = topology::load_topology(root("topologies/p4d-24xlarge.json"), 1);
    CHECK(test::input_error_text([&] { (void)fit_compute_fractions(fixture(), a100.gpu()); }) ==
          kFixture + ":/gpu/name: measured on \"NVIDIA H100 80GB HBM3\" but the topology's GPU is \"A100-SXM4-40GB\"; "
                     "use a topology with that GPU");

    topology::GpuSpec slow = topology::load_topology(root("topologies/dgx-h100.json"), 1).gpu();
    slow.peak_bf16 = tflop_per_s(500.0);
    CHECK(test::input_error_text([&] { (void)fit_compute_fractions(fixture(), slow); }) ==
          kFixture + ": bf16 GEMMs ran at 589.0 TFLOP/s, above the topology's H100-SXM5-80GB peak of 500.0 TFLOP/s: "
                     "check the topology's gpu.peak");

    std::string text = read_text_file(kFixture);
    text.replace(text.find("137438953472"), 12, "137438953000");
    CHECK(test::input_error_text([&] { (void)parse_kernel_bench_json(text, "k.json"); }) ==
          "k.json:/gemms/0/flops: 1.37439e+11 is not 2 m n k = 1.37439e+11 for m=4096 n=4096 k=4096");
  }

  TEST_CASE("GEMMs against the model: the default fraction misses, the fitted one splits 0.7 ms by FLOPs") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    // Uncalibrated: 0.419 of the peak (src/cost/compute.cpp). attn_out bf16 137.44 GFLOP at
    // 414.56 TFLOP/s = 331.53 us against 200 us measured: +65.77%; tf32 at 0.419 x 494.7 gives the
    // same error, since its measured rate is the same fraction of its own peak.
    const GemmComparison before = compare_gemms(fixture(), topo.gpu(), {});
    REQUIRE(before.points.size() == 3);
    CHECK(before.points[0].predicted.value() == doctest::Approx(331.53e-6).epsilon(1e-4));
    CHECK(before.points[0].error_pct == doctest::Approx(65.77).epsilon(1e-3));
    CHECK(before.points[2].error_pct == doctest::Approx(65.77).epsilon(1e-3));
    // Calibrated on the file itself: the bf16 pair takes 0.7 ms in proportion to FLOPs (1 : 2),
    // 233.33 us and 466.67 us, so +16.67% and -6.67%; tf32 is exact.
    cost::Calibration cal;
    for (const auto& f : fit_compute_fractions(fixture(), topo.gpu())) cal.compute_fraction[f.precision] = {f.fraction, f.source};
    const GemmComparison after = compare_gemms(fixture(), topo.gpu(), cal);
    CHECK(after.points[0].predicted.value() == doctest::Approx(233.333e-6).epsilon(1e-5));
    CHECK(after.points[0].error_pct == doctest::Approx(16.667).epsilon(1e-4));
    CHECK(after.points[1].error_pct == doctest::Approx(-6.667).epsilon(1e-3));
    CHECK(after.points[2].error_pct == doctest::Approx(0.0).epsilon(1e-6));
    CHECK(after.median_abs_error_pct == doctest::Approx(6.667).epsilon(1e-3));
  }

  TEST_CASE("calibrate writes the fraction and predict uses it: compute time scales by 0.419 / 0.595334") {
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_kernel_cal_test.json").string();
    const std::string out = stepcast::test::run_stepcast("calibrate --measured " + kFixture + " --topology topologies/dgx-h100.json -o " + cal);
    CHECK(out.find("bf16") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text_file(cal));
    CHECK(j.at("compute_fraction").at("bf16").at("fraction").get<double>() == doctest::Approx(0.595334).epsilon(1e-5));

    // 0.419 is the default H100 bf16 fraction (src/cost/compute.cpp, llm-foundry's median HFU).
    const std::string predict = "predict --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json "
                                "--nodes 1 --plan fsdp=8,flash=on --json";
    const auto before = nlohmann::json::parse(stepcast::test::run_stepcast(predict));
    const auto after = nlohmann::json::parse(stepcast::test::run_stepcast(predict + " --calibration " + cal));
    CHECK(before.at("achieved_fraction").get<double>() == doctest::Approx(0.419));
    CHECK(after.at("achieved_fraction").get<double>() == doctest::Approx(0.595334).epsilon(1e-5));
    const double ratio = after.at("breakdown").at("compute_s").get<double>() /
                         before.at("breakdown").at("compute_s").get<double>();
    CHECK(ratio == doctest::Approx(0.419 / 0.595334).epsilon(1e-5));
    std::filesystem::remove(cal);
  }
}
