// Compute calibration from stepcast-kernel-bench JSON. The file tests/data/kernel-bench/
// synthetic_h100.json is hand-made in the schema of validate/README.md (no GPU has run it), with
// round times so every figure below is derived by hand:
//   bf16: output projection 2*4096^3 = 137,438,953,472 FLOP in 0.2 ms, mlp down projection
//         2*4096*4096*8192 = 274,877,906,944 FLOP in 0.5 ms; tf32: output projection in 0.4 ms;
//         fp16: skipped.
//   Both shapes are 4096 x 4096 outputs: 1024 tiles of 128 x 128 on the H100's 132 SMs take 8
//   waves of 132 slots, so the tile/wave quantization is 1024/1056 = 0.969697 (NVIDIA's "Matrix
//   Multiplication Background User's Guide"); at the full bf16 peak of 989.4 TFLOP/s
//   (topologies/dgx-h100.json) they would take 137438953472 / (989.4e12 x 0.969697) = 143.25 us
//   and 286.50 us; tf32 at 494.7 TFLOP/s 286.50 us.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/input_file.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/model_parameters.hpp"
#include "stepcast/topology/topology.hpp"
#include "support/input_error_text.hpp"
#include "support/run_stepcast.hpp"

namespace kernel_bench_test {

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
constexpr double kMlpIdealUs = 2.0 * kAttnIdealUs;                                  // 286.50 us
/// The compute model's default bf16 GEMM efficiency on an H100 SXM: its maximum achievable matmul
/// rate, 792.1 of 989 TFLOP/s (ml-engineering's MAMF table), times the share of it a training step
/// sustains (the free parameter sustained_tensor_fraction, as the shipped defaults give it).
double hopper_default() {
  return 792.1 / 989.0 *
         topology::load_model_parameters(topology::shipped_defaults_file())
             .values.at("sustained_tensor_fraction")
             .value;
}

double kernel_overhead_us() {
  const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
  return cost::default_kernel_params(topo.gpu(), plan::Plan{}).kernel_overhead.value() * 1e6;
}

}  // namespace

TEST_SUITE("calibrate.kernel_bench") {
  TEST_CASE("the reader keeps every operator, timed or skipped") {
    const KernelBench b = fixture();
    CHECK(b.gpu_name == "NVIDIA H100 80GB HBM3");
    CHECK(b.compute_capability == "9.0");
    REQUIRE(b.lists.size() == 1);
    REQUIRE(b.operators.size() == 4);
    CHECK(b.operators[1].name == "mlp down projection");
    CHECK(b.operators[1].kind == cost::OpKind::kGemm);
    CHECK(b.operators[1].gemm.k == 8192.0);
    CHECK(b.operators[1].flops.value() == 274877906944.0);
    CHECK(b.operators[1].time->value() == doctest::Approx(5.0e-4));
    CHECK_FALSE(b.operators[3].time.has_value());
    CHECK(b.operators[3].skipped == "skipped: cuBLASLt has no algorithm for this shape");
    CHECK_FALSE(b.launch.has_value());
    CHECK(is_kernel_bench_json(read_text_file(kFixture)));
    CHECK_FALSE(is_kernel_bench_json(R"({"tool": "stepcast-nccl-bench"})"));
    CHECK_FALSE(is_kernel_bench_json("# nccl-tests log"));
  }

  TEST_CASE(
      "GEMM efficiency of the H100 peak: the summed quantized ideal time over the summed measured time less "
      "overheads") {
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
          kFixture +
              ":/gpu/name: measured on \"NVIDIA H100 80GB HBM3\" but the topology's GPU is \"A100-SXM4-40GB\"; "
              "use a topology with that GPU");

    topology::GpuSpec slow = topology::load_topology(root("topologies/dgx-h100.json"), 1).gpu();
    slow.peak_bf16 = tflop_per_s(500.0);
    // At 500 TFLOP/s the pair would need 850.4 us at full efficiency, more than the 700 us measured.
    CHECK(
        test::input_error_text([&] { (void)fit_gemm_efficiencies(fixture(), slow, Seconds(0.0)); }) ==
        kFixture +
            ": bf16 GEMMs ran at 589.0 TFLOP/s, above what the topology's H100-SXM5-80GB peak of 500.0 TFLOP/s allows "
            "for their shapes: check the topology's gpu.peak and gpu.sm_count");

    std::string text = read_text_file(kFixture);
    text.replace(text.find("137438953472"), 12, "137438953000");
    CHECK(test::input_error_text([&] { (void)parse_kernel_bench_json(text, "k.json"); }) ==
          "k.json:/operators/0/flops: 137438953000 is not 2 x batch x m x n x k = 137438953472 for 1 x (4096 x 4096 x "
          "4096)");
    std::string old_schema = read_text_file(kFixture);
    old_schema.replace(old_schema.find("\"schema_version\": 2"), 19, "\"schema_version\": 1");
    CHECK(test::input_error_text([&] { (void)parse_kernel_bench_json(old_schema, "k.json"); }) ==
          "k.json:/schema_version: this stepcast reads schema_version 2 (the operator bench); rerun the "
          "stepcast-kernel-bench built with it");
  }

  TEST_CASE(
      "GEMMs against the model: the default efficiency's error, then the fitted one splitting the measured time by "
      "ideal time") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const double o = kernel_overhead_us();
    // Uncalibrated, with s the shipped sustained share: 143.25 us / (0.800910 s) + o against 200 us;
    // the tf32 GEMM at the same efficiency of its own peak 286.50 us / (0.800910 s) + o against 400 us. Both are
    // compute-bound: their 100.7 MB (201.3 MB in tf32) at 0.8753 x 3350 GB/s take 34 us (68 us). The skipped fp16 GEMM
    // is not compared.
    const OperatorComparison before = compare_operators(fixture(), topo.gpu(), {});
    REQUIRE(before.points.size() == 3);
    CHECK(before.families[static_cast<std::size_t>(OperatorFamily::kGemm)].skipped == 1);
    CHECK(before.points[0].predicted.value() * 1e6 ==
          doctest::Approx(kAttnIdealUs / hopper_default() + o).epsilon(1e-9));
    CHECK(before.points[0].efficiency == doctest::Approx(hopper_default() * kQuantization).epsilon(1e-9));
    CHECK(before.points[2].predicted.value() * 1e6 ==
          doctest::Approx(kMlpIdealUs / hopper_default() + o).epsilon(1e-6));
    // Calibrated on the file itself: the bf16 pair's 700 - 2 o us of busy time is shared 1 : 2 as
    // their ideal times are, so the two together take exactly the 700 us measured; tf32 is exact.
    cost::Calibration cal;
    cal.compute = cost::ComputeCalibration{};
    for (const auto& f : fit_gemm_efficiencies(fixture(), topo.gpu(), microseconds(o)))
      cal.compute->gemm_efficiency[f.precision] = f.efficiency;
    const OperatorComparison after = compare_operators(fixture(), topo.gpu(), cal);
    CHECK(after.points[0].predicted.value() * 1e6 == doctest::Approx((700.0 - 2.0 * o) / 3.0 + o).epsilon(1e-9));
    CHECK((after.points[0].predicted + after.points[1].predicted).value() == doctest::Approx(700e-6).epsilon(1e-9));
    CHECK(after.points[2].error_pct == doctest::Approx(0.0).epsilon(1e-6));
  }

  TEST_CASE("an fp8 GEMM the bench timed is priced at the fp8 peak, as predict prices a layer's fp8 GEMMs") {
    // The fixture's bf16 output projection (2 x 4096^3 FLOP) timed as fp8 in 0.1 ms. Uncalibrated it
    // runs at the H100's fp8 peak, 1978.9 TFLOP/s, times its fp8 efficiency (ml-engineering's FP8
    // maximum-achievable-matmul fraction 0.70874 times the shipped sustained share) and the same
    // 1024/1056 quantization: 137438953472 / (1978.9e12 x 0.969697 x e) + o. At the bf16 peak
    // (the low-precision flag lost on reading) it would take 2.0001 times as long.
    auto doc = nlohmann::json::parse(read_text_file(kFixture));
    doc["operators"][0]["precision"] = "fp8";
    doc["operators"][0]["time_s"] = 1e-4;
    const KernelBench bench = parse_kernel_bench_json(doc.dump(), kFixture);
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const double sustained =
        topology::load_model_parameters(topology::shipped_defaults_file()).values.at("sustained_tensor_fraction").value;
    const double efficiency = 0.7087417887822132 * sustained;
    const OperatorComparison c = compare_operators(bench, topo.gpu(), {});
    REQUIRE(c.points.size() == 3);
    CHECK(c.points[0].measured->precision == "fp8");
    CHECK(c.points[0].predicted.value() * 1e6 ==
          doctest::Approx(137438953472.0 / (1978.9e12 * kQuantization * efficiency) * 1e6 + kernel_overhead_us())
              .epsilon(1e-9));
  }

  TEST_CASE("calibrate writes the GEMM efficiency and predict's GEMMs run at it") {
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_kernel_cal_test.json").string();
    const std::string out = stepcast::test::run_stepcast("calibrate --measured " + kFixture +
                                                         " --topology topologies/dgx-h100.json -o " + cal);
    CHECK(out.find("bf16") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text_file(cal));
    const double o = kernel_overhead_us();
    const double fitted = (kAttnIdealUs + kMlpIdealUs) / (700.0 - 2.0 * o);
    CHECK(j.at("compute").at("gemm_efficiency").at("bf16").get<double>() == doctest::Approx(fitted).epsilon(1e-8));

    // Llama-2 7B's QKV GEMM is 4096 x 12288 x 4096: 3072 tiles of 128 x 128 in 24 waves of 132,
    // quantization 3072/3168 = 1024/1056, so it runs at efficiency x 0.969697.
    const std::string predict =
        "predict --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json "
        "--nodes 1 --plan fsdp=8,flash=on --json --explain";
    const auto qkv_efficiency = [](const nlohmann::json& p) {
      for (const auto& row : p.at("kernels")) {
        if (row.at("operator") == "qkv projection" && row.at("pass") == "forward")
          return row.at("efficiency").get<double>();
      }
      return 0.0;
    };
    const auto before = nlohmann::json::parse(stepcast::test::run_stepcast(predict));
    const auto after = nlohmann::json::parse(stepcast::test::run_stepcast(predict + " --calibration " + cal));
    CHECK(qkv_efficiency(before) == doctest::Approx(hopper_default() * kQuantization).epsilon(1e-6));
    CHECK(qkv_efficiency(after) == doctest::Approx(fitted * kQuantization).epsilon(1e-6));
    // The fitted efficiency is below the default where the calibrated step computes longer.
    CHECK((after.at("breakdown").at("compute_s").get<double>() >
           before.at("breakdown").at("compute_s").get<double>()) == (fitted < hopper_default()));
    std::filesystem::remove(cal);
  }

  // tests/data/kernel-bench/synthetic_h100_operators.json: hand-made operators of a Llama-2 7B
  // list on an H100 (989.4 TFLOP/s bf16, 3350 GB/s, 67 TFLOP/s fp32, 132 SMs), with empty
  // kernels at 2 us each on the GPU and 3 us on the host. Figures derived by hand:
  //   qkv projection 4096 x 12288 x 4096, 562 us: 3072 tiles of 128 x 128 in 24 waves of 132,
  //     quantization 1024/1056, ideal 412316860416 / (989.4e12 x 0.969697) = 429.757 us;
  //   output projection 4096^3, 202 us: ideal 143.252 us (as above);
  //   attention scores 32 x (4096 x 4096 x 128), 420 us: 32768 tiles of 128 x 128 in 249 waves,
  //     quantization 32768 / (249 x 132) = 0.996958, ideal 139.335 us, but its 1140850688 bytes
  //     (the 32 x 4096^2 scores written in bf16) take 340.552 us at 3350 GB/s: memory-bound, so
  //     out of the GEMM fit;
  //   input norm 67108864 B in 32 us (ideal 20.0325 us), swiglu 270532608 B in 102 us (80.7560),
  //     cross-entropy 2359296000 B in 4 launches, 1000 us (704.2675); the synthetic compute-heavy
  //     operator's 6.7e9 FLOP at 67 TFLOP/s take 100 us, more than its 33.5 MB at 3350 GB/s
  //     (10 us): compute-bound, out of the memory fit;
  //   flash attention: skipped.
  const std::string kOperators = root("tests/data/kernel-bench/synthetic_h100_operators.json");

  KernelBench operators_fixture() { return parse_kernel_bench_json(read_text_file(kOperators), kOperators); }

  constexpr double kQkvIdealUs = 412316860416.0 / (989.4e12 * kQuantization) * 1e6;  // 429.757 us
  constexpr double kBw = 3350e9;
  constexpr double kNormUs = 67108864.0 / kBw * 1e6;     // 20.0325 us
  constexpr double kSwigluUs = 270532608.0 / kBw * 1e6;  // 80.7560 us
  constexpr double kLossUs = 2359296000.0 / kBw * 1e6;   // 704.2675 us

  TEST_CASE(
      "operator bench: launch overheads as measured, GEMM and HBM efficiencies over the operators each term bounds") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const KernelBench b = operators_fixture();
    REQUIRE(b.operators.size() == 8);
    CHECK(b.operators[2].gemm.batch == 32.0);
    CHECK(b.operators[7].kind == cost::OpKind::kFusedAttention);
    CHECK(b.operators[7].elements == 1024.0);

    const auto launch = fit_launch_overheads(b);
    REQUIRE(launch.has_value());
    CHECK(launch->kernel_overhead.value() == doctest::Approx(2e-6));
    CHECK(launch->host_overhead.value() == doctest::Approx(3e-6));

    // bf16: (143.252 + 429.757) / ((202 - 2) + (562 - 2)) = 573.010 / 760 = 0.753960.
    const auto gemms = fit_gemm_efficiencies(b, topo.gpu(), microseconds(2.0));
    REQUIRE(gemms.size() == 1);
    CHECK(gemms[0].gemms == 2);
    CHECK(gemms[0].memory_bound == 1);
    CHECK(gemms[0].efficiency == doctest::Approx((kAttnIdealUs + kQkvIdealUs) / 760.0).epsilon(1e-9));
    CHECK(gemms[0].efficiency == doctest::Approx(0.753960).epsilon(1e-6));

    // HBM: (20.0325 + 80.7560 + 704.2675) / ((32 - 2) + (102 - 2) + (1000 - 4 x 2)) = 805.056 / 1122 = 0.717519.
    const auto memory = fit_memory_efficiency(b, topo.gpu(), microseconds(2.0));
    REQUIRE(memory.has_value());
    CHECK(memory->operators == 3);
    CHECK(memory->efficiency == doctest::Approx((kNormUs + kSwigluUs + kLossUs) / 1122.0).epsilon(1e-9));
    CHECK(memory->efficiency == doctest::Approx(0.717519).epsilon(1e-6));
    CHECK(memory->min_operator_efficiency == doctest::Approx(kNormUs / 30.0).epsilon(1e-9));     // 0.668
    CHECK(memory->max_operator_efficiency == doctest::Approx(kSwigluUs / 100.0).epsilon(1e-9));  // 0.808
  }

  TEST_CASE(
      "operator bench against the model: errors per operator and per family, before and after calibrating on it") {
    const auto topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const KernelBench b = operators_fixture();
    // Uncalibrated H100 defaults: GEMMs at 792.1/989 = 0.800910 of peak times the shipped sustained
    // share s, HBM at 0.8753 (the H200's copy kernel, 4201.6 of 4800 GB/s, the same GH100 die), o per
    // kernel on the GPU (kernel_tables.hpp).
    const double o = kernel_overhead_us();
    constexpr double kHbm = 0.8753;
    const OperatorComparison before = compare_operators(b, topo.gpu(), {});
    REQUIRE(before.points.size() == 8);  // seven timed operators and the empty kernel
    const auto pct = [](double predicted, double measured) { return (predicted - measured) / measured * 100.0; };
    // qkv: 429.757 / (0.800910 s) + o against 562.
    CHECK(before.points[0].error_pct == doctest::Approx(pct(kQkvIdealUs / hopper_default() + o, 562.0)).epsilon(1e-6));
    // Scores: memory-bound in the model too, 1140850688 B / (0.8753 x 3350 GB/s) = 389.07 us + o against 420.
    CHECK(before.points[2].bound == cost::Bound::kMemory);
    CHECK(before.points[2].error_pct ==
          doctest::Approx(pct(1140850688.0 / (kHbm * kBw) * 1e6 + o, 420.0)).epsilon(1e-6));
    // Memory-bound family: norm 20.0325 / 0.8753 + o against 32, swiglu 80.756 / 0.8753 + o against
    // 102, loss (four launches) 704.2675 / 0.8753 + 4 o against 1000, and the compute-heavy one, its
    // 100 us of arithmetic above its 11.4 us of traffic, 100 + o against 110. Median of the four
    // absolute errors: the mean of the middle two.
    const auto& memory = before.families[static_cast<std::size_t>(OperatorFamily::kMemory)];
    CHECK(memory.points == 4);
    std::vector<double> abs_errors = {
        std::fabs(pct(kNormUs / kHbm + o, 32.0)), std::fabs(pct(kSwigluUs / kHbm + o, 102.0)),
        std::fabs(pct(kLossUs / kHbm + 4.0 * o, 1000.0)), std::fabs(pct(100.0 + o, 110.0))};
    std::sort(abs_errors.begin(), abs_errors.end());
    CHECK(memory.median_abs_error_pct == doctest::Approx((abs_errors[1] + abs_errors[2]) / 2.0).epsilon(1e-9));
    CHECK(memory.max_abs_error_pct == doctest::Approx(abs_errors[3]).epsilon(1e-9));
    CHECK(before.points[6].bound == cost::Bound::kCompute);
    CHECK(before.points[6].error_pct == doctest::Approx(pct(100.0 + o, 110.0)).epsilon(1e-9));
    // The empty kernel: o modelled against 2 us measured.
    CHECK(before.points[7].family == OperatorFamily::kLaunch);
    CHECK(before.points[7].error_pct == doctest::Approx(pct(o, 2.0)).epsilon(1e-9));
    const auto& attention = before.families[static_cast<std::size_t>(OperatorFamily::kAttention)];
    CHECK(attention.points == 0);
    CHECK(attention.skipped == 1);
    CHECK(before.families[static_cast<std::size_t>(OperatorFamily::kBatchedGemm)].points == 1);

    // Calibrated on the file itself (fit residuals, not accuracy): the fitted terms reproduce
    // the summed time of what they were fitted on.
    cost::Calibration cal;
    cal.compute = cost::ComputeCalibration{};
    cal.compute->kernel_overhead = microseconds(2.0);
    cal.compute->gemm_efficiency["bf16"] = fit_gemm_efficiencies(b, topo.gpu(), microseconds(2.0))[0].efficiency;
    cal.compute->memory_efficiency = fit_memory_efficiency(b, topo.gpu(), microseconds(2.0))->efficiency;
    const OperatorComparison after = compare_operators(b, topo.gpu(), cal);
    CHECK((after.points[0].predicted + after.points[1].predicted).value() == doctest::Approx(764e-6).epsilon(1e-9));
    CHECK((after.points[3].predicted + after.points[4].predicted + after.points[5].predicted).value() ==
          doctest::Approx(1134e-6).epsilon(1e-9));
    CHECK(after.points[7].error_pct == doctest::Approx(0.0).epsilon(1e-9));
  }

  TEST_CASE("calibrate and validate on the operator bench: the compute section says what each figure was fitted on") {
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_operator_cal_test.json").string();
    const std::string report = stepcast::test::run_stepcast("calibrate --measured " + kOperators +
                                                            " --topology topologies/dgx-h100.json --nodes 1 -o " + cal);
    CHECK(report.find("attention: not fitted, the bench skipped its 1 fused-attention operators") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text_file(cal));
    const auto& compute = j.at("compute");
    // The empty kernel's times are reported, not written: the model's overheads carry a
    // framework's per-operator time.
    CHECK_FALSE(compute.contains("kernel_overhead"));
    CHECK_FALSE(compute.contains("host_overhead"));
    CHECK(compute.at("memory_efficiency").get<double>() == doctest::Approx(0.717519).epsilon(1e-6));
    CHECK(compute.at("gemm_efficiency").at("bf16").get<double>() == doctest::Approx(0.753960).epsilon(1e-6));
    CHECK(compute.at("fitted_on").at("memory_efficiency").get<std::string>().find("3 memory-bound operators") !=
          std::string::npos);
    CHECK(compute.at("fitted_on").contains("gemm_efficiency.bf16"));
    // The file loads again, and a fitted_on key for a field the section does not set is refused.
    CHECK_NOTHROW((void)cost::load_calibration(cal));
    auto doctored = j;
    doctored["compute"]["fitted_on"]["attention_forward_efficiency"] = "nothing";
    CHECK(test::input_error_text([&] { (void)cost::parse_calibration(doctored.dump(), "c.json"); }) ==
          "c.json:/compute/fitted_on/attention_forward_efficiency: \"attention_forward_efficiency\" is not a field "
          "this compute section sets");

    const auto v = nlohmann::json::parse(stepcast::test::run_stepcast(
        "validate --measured " + kOperators + " --topology topologies/dgx-h100.json --nodes 1 --json"));
    const auto& file = v.at("operators").at(0);
    CHECK(file.at("points").size() == 8);
    CHECK(file.at("families").at("memory-bound").at("points") == 4);
    CHECK(file.at("families").at("attention").at("skipped") == 1);
    CHECK(file.at("families").at("attention").at("median_abs_error_pct").is_null());
    CHECK(file.at("skipped").at(0).at("name") == "flash attention");
    std::filesystem::remove(cal);
  }
}

}  // namespace kernel_bench_test
