// host_overhead measured on eager PyTorch layers (scripts/measure-eager-host): the launches the
// model counts for the timed GPT layer, counted by hand; the median rule on hand-made rows; the
// file's reader and its refusals; and `calibrate --measured` writing the figure.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/input_file.hpp"
#include "support/run_stepcast.hpp"

namespace eager_host_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

const std::string kHandMade = "tests/data/eager-host/hand-made.json";

EagerHostLayer layer(int hidden, int layers, bool recompute, double issue_s, bool host_bound) {
  EagerHostLayer l;
  l.hidden = hidden;
  l.heads = 16;
  l.sequence = 1024;
  l.micro_batch = 1;
  l.layers = layers;
  l.full_recompute = recompute;
  l.issue = Seconds(issue_s);
  l.host_bound = host_bound;
  return l;
}

std::string shape_json(const std::string& recompute) {
  return R"({"tool": "scripts/measure-eager-host", "method": "m", "machine": {"cpu": "c", "python": "p",
  "torch": "2.11", "cuda": "13", "gpu": "g"}, "dtype": "fp16", "dropout": 0.1, "attention": "a",
  "dispatch_s": 8e-6, "shapes": [{"hidden": 256, "heads": 4, "sequence": 128, "micro_batch": 1, "layers": 4,
  "recompute": ")" +
         recompute + R"(", "issue_s": 0.0068, "wall_s": 0.0069, "gpu_kernel_s": 0.0005, "kernels": 265,
  "launch_calls": 265, "issue_per_kernel_s": 2.6e-5, "host_bound": true}]})";
}

}  // namespace

TEST_SUITE("calibrate.eager_host") {
  TEST_CASE("a Megatron-style GPT layer launches 36 kernels forward and backward, 49 with full recompute") {
    // The layer as the script builds it (pre-norm, biases, unfused attention, dropout, GeLU):
    // forward 13 operators, one kernel each: norm, QKV GEMM, scores GEMM, softmax, attention
    // dropout, PV GEMM, output GEMM, dropout + residual, norm, up GEMM, GeLU, down GEMM, dropout +
    // residual. Backward 19: dgrad and wgrad of the four linear GEMMs (8), two GEMMs for each of
    // the two attention GEMMs (4), and the backward of the two norms, softmax, three dropouts and
    // GeLU (7); and one reduction per bias gradient of the four linear layers (4): 13 + 19 + 4 =
    // 36. Full recompute runs the 13 forward kernels again: 49.
    CHECK(model_layer_launches(layer(1024, 4, false, 0.01, true)) == 36.0);
    CHECK(model_layer_launches(layer(1024, 4, true, 0.01, true)) == 49.0);
    // The count does not depend on the shape's size.
    CHECK(model_layer_launches(layer(256, 1, false, 0.01, true)) == 36.0);
  }

  TEST_CASE("the median over host-bound shapes of issue time per layer over the model's launches") {
    // 8 ms over 4 layers at 40 launches a layer: 50 us; 12 ms over 4 layers at 50 (full
    // recompute): 60 us; 3 ms over 1 layer at 40: 75 us; the GPU-bound shape (1 s) is not host
    // time and stays out. Median of 50, 60 and 75 us: 60 us.
    EagerHostFile f;
    f.file = "hand";
    f.machine = "m";
    f.shapes = {layer(1024, 4, false, 8e-3, true), layer(1024, 4, true, 12e-3, true), layer(1024, 1, false, 3e-3, true),
                layer(1024, 4, false, 1.0, false)};
    const auto fit = fit_host_overhead({f}, [](const EagerHostLayer& l) { return l.full_recompute ? 50.0 : 40.0; });
    REQUIRE(fit);
    CHECK(fit->host_overhead.value() == doctest::Approx(60e-6).epsilon(1e-12));
    REQUIRE(fit->rows.size() == 3);
    CHECK(fit->rows[2].per_launch.value() == doctest::Approx(75e-6).epsilon(1e-12));
    CHECK(fit->source.find("the median over 3 host-bound GPT layers (hidden 1024-1024, with and without full "
                           "recompute)") != std::string::npos);
    // No host-bound shape: nothing to say about host time.
    f.shapes.resize(0);
    f.shapes.push_back(layer(1024, 4, false, 1.0, false));
    CHECK_FALSE(fit_host_overhead({f}));
  }

  TEST_CASE("the reader takes the script's files and refuses what it does not know, naming the field") {
    const EagerHostFile f = parse_eager_host_json(shape_json("full"), "x.json");
    REQUIRE(f.shapes.size() == 1);
    CHECK(f.shapes[0].full_recompute);
    CHECK(f.shapes[0].issue.value() == 0.0068);
    CHECK(f.machine == "g, c, PyTorch 2.11");
    CHECK(is_eager_host_json(shape_json("none")));
    CHECK_FALSE(is_eager_host_json(R"({"tool": "stepcast-kernel-bench"})"));
    CHECK_THROWS_WITH_AS(parse_eager_host_json(shape_json("selective"), "x.json"),
                         doctest::Contains("/shapes/0/recompute"), InputError);
    std::string extra = shape_json("none");
    extra.insert(1, R"("schema": 1, )");
    CHECK_THROWS_WITH_AS(parse_eager_host_json(extra, "x.json"), doctest::Contains("schema"), InputError);
  }

  TEST_CASE("calibrate --measured writes host_overhead from an eager-host file and says where it came from") {
    // tests/data/eager-host/hand-made.json: 5.76 ms over 4 layers of 36 launches = 40 us, 9.8 ms
    // over 4 layers of 49 (full recompute) = 50 us, and a GPU-bound shape left out: median 45 us.
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_eager_host_cal_test.json").string();
    const std::string report =
        stepcast::test::run_stepcast("calibrate --measured " + kHandMade + " --topology dgx-h100 -o " + cal);
    CHECK(report.find("2 of 3 shapes host-bound") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text_file(cal));
    const std::string host = j.at("compute").at("host_overhead").get<std::string>();
    CHECK(std::stod(host) == doctest::Approx(45e-6).epsilon(1e-9));
    CHECK(j.at("compute").at("fitted_on").at("host_overhead").get<std::string>().find(kHandMade) != std::string::npos);
    // And predict prices each launch's host time at it.
    const auto p = nlohmann::json::parse(stepcast::test::run_stepcast(
        "predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --global-batch 64 --json --explain "
        "--calibration " +
        cal));
    CHECK(p.dump().find("45.000 us on the host") != std::string::npos);
  }
}

}  // namespace eager_host_test
