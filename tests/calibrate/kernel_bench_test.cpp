// Compute calibration from stepcast-kernel-bench JSON. The file tests/data/kernel-bench/
// synthetic_h100.json is hand-made in the schema of validate/README.md (no GPU has run it), with
// round times so every figure below is derived by hand:
//   bf16: attn_out.fwd 2*4096^3 = 137,438,953,472 FLOP in 0.2 ms, mlp_down.fwd 2*4096*4096*8192
//         = 274,877,906,944 FLOP in 0.5 ms; tf32: attn_out.fwd in 0.4 ms.
//   Both shapes are 4096 x 4096 outputs: 1024 tiles of 128 x 128 on the H100's 132 SMs take 8
//   waves of 132 slots, so the tile/wave quantization is 1024/1056 = 0.969697 (NVIDIA's "Matrix
//   Multiplication Background User's Guide"); at the full bf16 peak of 989.4 TFLOP/s
//   (topologies/dgx-h100.json) they would take 137438953472 / (989.4e12 x 0.969697) = 143.25 us
//   and 286.50 us; tf32 at 494.7 TFLOP/s 286.50 us.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/input_file.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "support/input_error_text.hpp"
#include "support/run_stepcast.hpp"

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

std::string root(const std::string& rel) { return std::string(STEPCAST_SOURCE_DIR) + "/" + rel; }
const std::string kFixture = root("tests/data/kernel-bench/synthetic_h100.json");

KernelBench fixture() { return parse_kernel_bench_json(read_text_file(kFixture), kFixture); }

const GemmEfficiencyFit& fit_for(const std::vector<GemmEfficiencyFit>& fits, const std::string& precision) {
  for (const auto& f : fits) {
    if (f.precision == precision) return f;
  }
  FAIL("no fit for " << precision);
  return fits.front();
}

constexpr double kQuantization = 1024.0 / 1056.0;
constexpr double kAttnIdealUs = 137438953472.0 / (989.4e12 * kQuantization) * 1e6;  // 143.25 us
constexpr double kMlpIdealUs = 2.0 * kAttnIdealUs;                                // 286.50 us
/// The maximum achievable bf16 matmul rate of an H100 SXM, 792.1 of 989 TFLOP/s (ml-engineering's
/// MAMF table), the compute model's default GEMM efficiency there.
constexpr double kHopperMamf = 792.1 / 989.0;

double kernel_overhead_us() {
  const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
  return cost::default_kernel_params(topo.gpu(), plan::Plan{}).kernel_overhead.value() * 1e6;
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

  TEST_CASE("GEMM efficiency of the H100 peak: the summed quantized ideal time over the summed measured time less overheads") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const double o = kernel_overhead_us();
    const auto fits = fit_gemm_efficiencies(fixture(), topo.gpu(), microseconds(o));
    REQUIRE(fits.size() == 2);
    const auto& bf16 = fit_for(fits, "bf16");
    CHECK(bf16.gemms == 2);
    CHECK(bf16.ideal.value() * 1e6 == doctest::Approx(kAttnIdealUs + kMlpIdealUs).epsilon(1e-9));
    // (143.25 + 286.50) / (200 + 500 - 2 o) us: 0.61747 at o = 2 us.
    CHECK(bf16.efficiency == doctest::Approx((kAttnIdealUs + kMlpIdealUs) / (700.0 - 2.0 * o)).epsilon(1e-9));
    CHECK(bf16.max_gemm_efficiency == doctest::Approx(kAttnIdealUs / (200.0 - o)).epsilon(1e-9));
    CHECK(bf16.min_gemm_efficiency == doctest::Approx(kMlpIdealUs / (500.0 - o)).epsilon(1e-9));
    CHECK(bf16.source.find("NVIDIA H100 80GB HBM3") != std::string::npos);
    // tf32: 286.50 us at its own peak of 494.7 TFLOP/s, against 400 us measured.
    CHECK(fit_for(fits, "tf32").efficiency == doctest::Approx(kMlpIdealUs / (400.0 - o)).epsilon(1e-6));
  }

  TEST_CASE("a bench from another GPU, a rate above the peak and inconsistent FLOPs are refused") {
    const auto a100 = topology::load_topology(root("topologies/p4d-24xlarge.json"), 1);
    CHECK(test::input_error_text([&] { (void)fit_gemm_efficiencies(fixture(), a100.gpu(), Seconds(0.0)); }) ==
          kFixture + ":/gpu/name: measured on \"NVIDIA H100 80GB HBM3\" but the topology's GPU is \"A100-SXM4-40GB\"; "
                     "use a topology with that GPU");

    topology::GpuSpec slow = topology::load_topology(root("topologies/dgx-h100.json"), 1).gpu();
    slow.peak_bf16 = tflop_per_s(500.0);
    // At 500 TFLOP/s the pair would need 850.4 us at full efficiency, more than the 700 us measured.
    CHECK(test::input_error_text([&] { (void)fit_gemm_efficiencies(fixture(), slow, Seconds(0.0)); }) ==
          kFixture + ": bf16 GEMMs ran at 589.0 TFLOP/s, above what the topology's H100-SXM5-80GB peak of 500.0 TFLOP/s allows "
                     "for their shapes: check the topology's gpu.peak and gpu.sm_count");

    std::string text = read_text_file(kFixture);
    text.replace(text.find("137438953472"), 12, "137438953000");
    CHECK(test::input_error_text([&] { (void)parse_kernel_bench_json(text, "k.json"); }) ==
          "k.json:/gemms/0/flops: 1.37439e+11 is not 2 m n k = 1.37439e+11 for m=4096 n=4096 k=4096");
  }

  TEST_CASE("GEMMs against the model: the default efficiency misses by 10%, the fitted one splits the measured time by ideal time") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const double o = kernel_overhead_us();
    // Uncalibrated: 143.25 us / 0.800910 + o = 178.86 us + o against 200 us; the tf32 GEMM at the
    // same efficiency of its own peak 357.72 us + o against 400 us. Both are compute-bound: their
    // 100.7 MB (201.3 MB in tf32) at 0.88 x 3350 GB/s take 34 us (68 us).
    const GemmComparison before = compare_gemms(fixture(), topo.gpu(), {});
    REQUIRE(before.points.size() == 3);
    CHECK(before.points[0].predicted.value() * 1e6 == doctest::Approx(kAttnIdealUs / kHopperMamf + o).epsilon(1e-9));
    CHECK(before.points[0].efficiency == doctest::Approx(kHopperMamf * kQuantization).epsilon(1e-9));
    CHECK(before.points[2].predicted.value() * 1e6 == doctest::Approx(kMlpIdealUs / kHopperMamf + o).epsilon(1e-6));
    // Calibrated on the file itself: the bf16 pair's 700 - 2 o us of busy time is shared 1 : 2 as
    // their ideal times are, so the two together take exactly the 700 us measured; tf32 is exact.
    cost::Calibration cal;
    cal.compute = cost::ComputeCalibration{};
    for (const auto& f : fit_gemm_efficiencies(fixture(), topo.gpu(), microseconds(o))) cal.compute->gemm_efficiency[f.precision] = f.efficiency;
    const GemmComparison after = compare_gemms(fixture(), topo.gpu(), cal);
    CHECK(after.points[0].predicted.value() * 1e6 == doctest::Approx((700.0 - 2.0 * o) / 3.0 + o).epsilon(1e-9));
    CHECK((after.points[0].predicted + after.points[1].predicted).value() == doctest::Approx(700e-6).epsilon(1e-9));
    CHECK(after.points[2].error_pct == doctest::Approx(0.0).epsilon(1e-6));
  }

  TEST_CASE("calibrate writes the GEMM efficiency and predict's GEMMs run at it") {
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_kernel_cal_test.json").string();
    const std::string out = stepcast::test::run_stepcast("calibrate --measured " + kFixture + " --topology topologies/dgx-h100.json -o " + cal);
    CHECK(out.find("bf16") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text_file(cal));
    const double o = kernel_overhead_us();
    const double fitted = (kAttnIdealUs + kMlpIdealUs) / (700.0 - 2.0 * o);
    CHECK(j.at("compute").at("gemm_efficiency").at("bf16").get<double>() == doctest::Approx(fitted).epsilon(1e-8));

    // Llama-2 7B's QKV GEMM is 4096 x 12288 x 4096: 3072 tiles of 128 x 128 in 24 waves of 132,
    // quantization 3072/3168 = 1024/1056, so it runs at efficiency x 0.969697.
    const std::string predict = "predict --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json "
                                "--nodes 1 --plan fsdp=8,flash=on --json --explain";
    const auto qkv_efficiency = [](const nlohmann::json& p) {
      for (const auto& row : p.at("kernels")) {
        if (row.at("operator") == "qkv projection" && row.at("pass") == "forward") return row.at("efficiency").get<double>();
      }
      return 0.0;
    };
    const auto before = nlohmann::json::parse(stepcast::test::run_stepcast(predict));
    const auto after = nlohmann::json::parse(stepcast::test::run_stepcast(predict + " --calibration " + cal));
    CHECK(qkv_efficiency(before) == doctest::Approx(kHopperMamf * kQuantization).epsilon(1e-6));
    CHECK(qkv_efficiency(after) == doctest::Approx(fitted * kQuantization).epsilon(1e-6));
    CHECK(after.at("breakdown").at("compute_s").get<double>() > before.at("breakdown").at("compute_s").get<double>());
    std::filesystem::remove(cal);
  }
}
