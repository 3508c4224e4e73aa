// The GPU catalogue (topologies/gpus/) and the shipped defaults of the model's free parameters:
// every shipped topology names a catalogue GPU, the files give the figures their sources cite,
// no figure of one generation stands silently for another, and bad files are refused whole.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "stepcast/topology/model_parameters.hpp"
#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace gpu_catalogue_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::scratch_file;
using stepcast::topology::test::shipped;

namespace {

std::filesystem::path catalogue(const std::string& id) { return shipped("gpus/" + id + ".json"); }

std::vector<std::filesystem::path> catalogue_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(shipped("gpus"))) {
    if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Every kernel figure of a GPU by a name of its place ("gemm.bf16", "attention.fa2.forward").
std::map<std::string, GpuFigure> figures_of(const GpuSpec& g) {
  std::map<std::string, GpuFigure> out;
  for (const auto& [p, f] : g.kernels.gemm) out["gemm." + p] = f;
  if (g.kernels.memory) out["memory"] = *g.kernels.memory;
  for (const auto& [k, a] : g.kernels.attention) {
    out["attention." + k + ".forward"] = a.forward;
    out["attention." + k + ".backward"] = a.backward;
  }
  if (g.kernels.kernel_overhead) out["kernel_overhead"] = *g.kernels.kernel_overhead;
  if (g.kernels.host_overhead) out["host_overhead"] = *g.kernels.host_overhead;
  return out;
}

/// A GPU file with `kernels` as its kernels block, written to a scratch folder's gpus/.
std::filesystem::path gpu_with_kernels(const std::string& id, const std::string& kernels) {
  std::filesystem::create_directories(std::filesystem::temp_directory_path() / "stepcast_topology_test" / "gpus");
  return scratch_file("gpus/" + id + ".json", R"({"name": "T", "generation": "hopper", "compute_capability": "9.0",
      "memory": "80 GiB", "memory_bandwidth": "3350 GB/s", "sm_count": 132,
      "peak": {"fp32": "67 TFLOP/s", "tf32": "494.7 TFLOP/s", "bf16": "989.4 TFLOP/s", "fp16": "989.4 TFLOP/s"},
      "source": "test", "kernels": )" + kernels + "}");
}

}  // namespace

TEST_SUITE("topology.gpu_catalogue") {
  TEST_CASE("every shipped topology names a GPU of the catalogue, and every catalogue file loads with its sources") {
    for (const auto& e : std::filesystem::directory_iterator(shipped(""))) {
      if (e.path().extension() != ".json" || e.path().filename() == "model-defaults.json") continue;
      CAPTURE(e.path());
      const Topology t = load_topology(e.path());
      CHECK(t.gpu().file.find("/topologies/gpus/") != std::string::npos);
      CHECK(t.gpu().compute_capability > 0);
    }
    for (const auto& f : catalogue_files()) {
      CAPTURE(f);
      const GpuSpec g = load_gpu_file(f);
      CHECK_FALSE(g.generation.empty());
      CHECK_FALSE(g.kernels.default_attention.empty());
      CHECK(g.kernels.gemm.contains("bf16"));
      for (const auto& entry : figures_of(g)) {
        const auto& [place, fig] = entry;
        const std::string where = place;  // CAPTURE takes a variable, not a structured binding (clang 14)
        CAPTURE(where);
        CHECK_FALSE(fig.source.empty());
        CHECK(fig.value > 0.0);
      }
    }
  }

  TEST_CASE("every GEMM and fused-attention figure of a shipped GPU, a kernel timed on its own, is scaled") {
    // The README's rule: each such figure is an isolated benchmark (ml-engineering's maximum, a
    // sweep, a paper), taken down to what a training step's back-to-back kernels sustain. A file
    // that left one out would price that kernel at its isolated rate beside scaled ones.
    for (const auto& f : catalogue_files()) {
      const GpuSpec g = load_gpu_file(f);
      for (const auto& [precision, fig] : g.kernels.gemm) {
        const std::string where = f.filename().string() + " gemm " + precision;
        CAPTURE(where);
        CHECK(fig.scaled_by == "sustained_tensor_fraction");
      }
      for (const auto& [kernel, figs] : g.kernels.attention) {
        const std::string where = f.filename().string() + " attention " + kernel;
        CAPTURE(where);
        CHECK(figs.forward.scaled_by == "sustained_tensor_fraction");
        CHECK(figs.backward.scaled_by == "sustained_tensor_fraction");
      }
    }
  }

  TEST_CASE("the figures are the ones their sources cite") {
    const GpuSpec h100 = load_gpu_file(catalogue("h100-sxm5-80gb"));
    const GpuSpec a100 = load_gpu_file(catalogue("a100-sxm4-80gb"));
    // Maximum achievable matmul (ml-engineering): H100 SXM 792.1 of 989, A100 SXM 267.9 of 312 TFLOP/s.
    CHECK(h100.kernels.gemm.at("bf16").value == doctest::Approx(792.1 / 989.0));
    CHECK(a100.kernels.gemm.at("bf16").value == doctest::Approx(267.9 / 312.0));
    // FlashAttention-3 forward 740 of 989 (Shah et al. 2024); Triton's = FA2's 0.73 / 1.4 (Dao 2023).
    CHECK(h100.kernels.attention.at("fa3").forward.value == doctest::Approx(740.0 / 989.0));
    CHECK(a100.kernels.attention.at("triton").forward.value == doctest::Approx(0.73 / 1.4));
    CHECK(h100.compute_capability == 90);
    // Blackwell Ultra (verda.com's table of NVIDIA's datasheets, dense): GB300 BF16 2.5, NVFP4 15
    // PFLOPS, 279 GB at 8 TB/s; B300 NVFP4 14 PFLOPS; both compute capability 10.3.
    const GpuSpec gb300 = load_gpu_file(catalogue("gb300-279gb"));
    const GpuSpec b300 = load_gpu_file(catalogue("b300-sxm-270gb"));
    CHECK(gb300.peak_bf16.value() == doctest::Approx(2.5e15));
    CHECK(gb300.peak_nvfp4.value() == doctest::Approx(15e15));
    CHECK(gb300.memory.value() == doctest::Approx(279e9));
    CHECK(gb300.memory_bandwidth.value() == doctest::Approx(8e12));
    CHECK(b300.peak_nvfp4.value() == doctest::Approx(14e15));
    CHECK(b300.compute_capability == 103);
    CHECK(gb300.generation == "blackwell");
    // Blackwell's BF16 GEMMs in Megatron's shapes: SimuMax's B200 sweep, 0.4878 of the peak. Its
    // attention sweep at sequence 4096 (64 heads of 128): forward 0.8715 and backward 0.7294 of the
    // peak counting the whole s x s square, 0.4358 and 0.3647 in stepcast's causal count (half).
    // Blackwell Ultra's doubled SFU: about 35% more attention forward than Blackwell (NVIDIA's
    // softmax blog, 2026); the backward, bound by shared memory, stays the B200's.
    const GpuSpec b200 = load_gpu_file(catalogue("b200-sxm-180gb"));
    CHECK(b200.kernels.gemm.at("bf16").value == doctest::Approx(0.4878));
    CHECK(gb300.kernels.gemm.at("bf16").value == doctest::Approx(0.4878));
    // Both sweeps time kernels on their own, outside a training step: scaled like every such rate.
    CHECK(b200.kernels.gemm.at("bf16").scaled_by == "sustained_tensor_fraction");
    CHECK(b200.kernels.attention.at("cudnn").forward.scaled_by == "sustained_tensor_fraction");
    CHECK(b200.kernels.attention.at("cudnn").forward.value == doctest::Approx(0.8715 / 2.0).epsilon(1e-4));
    CHECK(b200.kernels.attention.at("cudnn").backward.value == doctest::Approx(0.7294 / 2.0).epsilon(1e-4));
    for (const GpuSpec* ultra : {&gb300, &b300}) {
      CHECK(ultra->kernels.attention.at("cudnn").forward.value == doctest::Approx(1.35 * 0.8715 / 2.0).epsilon(1e-4));
      CHECK(ultra->kernels.attention.at("cudnn").backward.value ==
            doctest::Approx(b200.kernels.attention.at("cudnn").backward.value));
    }
  }

  TEST_CASE("no figure of one generation stands silently for another: an equal figure is borrowed or a parameter") {
    // Two GPUs of different generations that give the same value for the same figure must say
    // where it comes from: "borrowed_from" on the borrower, or a free parameter both share.
    std::vector<GpuSpec> gpus;
    for (const auto& f : catalogue_files()) gpus.push_back(load_gpu_file(f));
    int pairs = 0;
    for (const GpuSpec& a : gpus) {
      for (const GpuSpec& b : gpus) {
        if (a.generation == b.generation || &a == &b) continue;
        const auto fa = figures_of(a);
        for (const auto& [place, fig] : figures_of(b)) {
          const auto it = fa.find(place);
          if (it == fa.end() || std::fabs(it->second.value - fig.value) > 1e-12 * fig.value) continue;
          const std::string where = place;  // CAPTURE takes a variable, not a structured binding (clang 14)
          CAPTURE(a.name);
          CAPTURE(b.name);
          CAPTURE(where);
          ++pairs;
          CHECK((!fig.borrowed_from.empty() || !it->second.borrowed_from.empty() ||
                 (!fig.parameter.empty() && fig.parameter == it->second.parameter)));
        }
      }
    }
    // The overheads (shared parameters) and the HBM fraction (borrowed from the A100) at least.
    CHECK(pairs > 0);
  }

  TEST_CASE("a topology's named GPU is looked up beside it first, then in the shipped catalogue") {
    const auto own = gpu_with_kernels("own-gpu", R"({"memory": {"value": 0.5, "source": "test"}})");
    const std::string topo_text = R"({"form": "cluster", "name": "t", "source": "test", "gpu": "own-gpu",
        "node": {"gpus_per_node": 2, "intra": {"kind": "nvswitch", "bandwidth_per_gpu": "100 GB/s", "latency": "1 us",
        "source": "test"}, "nics": {"count": 1, "bandwidth": "100 Gbps", "latency": "1 us", "source": "test"}},
        "nodes": 1, "fabric": {"kind": "single-switch", "source": "test"}})";
    const auto topo = scratch_file("named_gpu.json", topo_text);
    const Topology t = load_topology(topo);
    CHECK(t.gpu().name == "T");
    CHECK(t.gpu().kernels.memory->value == doctest::Approx(0.5));
    CHECK(t.gpu().file == own.string());
    std::string other = topo_text;
    other.replace(other.find("own-gpu"), 7, "h100-sxm5-80gb");
    CHECK(load_topology(scratch_file("shipped_gpu.json", other)).gpu().name == "H100-SXM5-80GB");
    other.replace(other.find("h100-sxm5-80gb"), 14, "mi300x");
    CHECK(error_of([&] { (void)load_topology(scratch_file("unknown_gpu.json", other)); })
              .find(":/gpu: no GPU file \"mi300x.json\" in gpus/ beside the topology nor in the shipped catalogue "
                    "(topologies/gpus/: a100-sxm4-40gb") != std::string::npos);
  }

  TEST_CASE(
      "a kernel figure is a cited value or a free parameter, one of them, of the right unit, scaled by a fraction") {
    const auto both = gpu_with_kernels("both", R"({"memory": {"value": 0.5, "parameter": "kernel_overhead",
        "source": "x"}})");
    CHECK(error_of([&] { (void)load_gpu_file(both); }) ==
          both.string() +
              ":/kernels/memory: give either \"value\" (a cited figure) or \"parameter\" (a free parameter of the "
              "model), not both");
    const auto unit = gpu_with_kernels("unit", R"({"memory": {"parameter": "kernel_overhead", "source": "x"}})");
    CHECK(error_of([&] { (void)load_gpu_file(unit); }) ==
          unit.string() + ":/kernels/memory/parameter: \"kernel_overhead\" is a time, and this figure is a fraction");
    const auto unknown = gpu_with_kernels("unknown", R"({"host_overhead": {"parameter": "launch", "source": "x"}})");
    CHECK(error_of([&] { (void)load_gpu_file(unknown); }) ==
          unknown.string() +
              ":/kernels/host_overhead/parameter: \"launch\" is not a free parameter of stepcast (its "
              "parameters: " +
              parameter_names() + ")");
    const auto scaled_time = gpu_with_kernels(
        "scaled_time", R"({"gemm": {"bf16": {"value": 0.8, "scaled_by": "kernel_overhead", "source": "x"}}})");
    CHECK(error_of([&] { (void)load_gpu_file(scaled_time); }) ==
          scaled_time.string() +
              ":/kernels/gemm/bf16/scaled_by: \"kernel_overhead\" is a time, and this figure is a fraction");
    const auto scaled_parameter = gpu_with_kernels(
        "scaled_parameter",
        R"({"gemm": {"bf16": {"parameter": "sustained_tensor_fraction", "scaled_by": "sustained_tensor_fraction",
        "source": "x"}}})");
    CHECK(error_of([&] { (void)load_gpu_file(scaled_parameter); }) ==
          scaled_parameter.string() +
              ":/kernels/gemm/bf16/scaled_by: scales a cited value; a parameter is fitted whole");
    const auto scaled_overhead = gpu_with_kernels(
        "scaled_overhead", R"({"kernel_overhead": {"value": "5 us", "scaled_by": "sustained_tensor_fraction",
        "source": "x"}})");
    CHECK(error_of([&] { (void)load_gpu_file(scaled_overhead); }) ==
          scaled_overhead.string() +
              ":/kernels/kernel_overhead/scaled_by: only a fraction of a peak is scaled by a parameter");
    const auto above = gpu_with_kernels("above", R"({"gemm": {"bf16": {"value": 1.2, "source": "x"}}})");
    CHECK(error_of([&] { (void)load_gpu_file(above); }) ==
          above.string() + ":/kernels/gemm/bf16/value: an efficiency is a fraction of the peak, in (0, 1], got 1.2");
    const auto lender =
        gpu_with_kernels("lender", R"({"memory": {"value": 0.5, "source": "x", "borrowed_from": "v100-sxm2"}})");
    CHECK(
        error_of([&] { (void)load_gpu_file(lender); }) ==
        lender.string() +
            ":/kernels/memory/borrowed_from: names \"v100-sxm2\", which is no GPU of the catalogue (topologies/gpus/)");
    const auto attention = gpu_with_kernels(
        "attention", R"({"attention": {"default": "fa3", "fa2": {"forward": {"value": 0.3, "source": "x"},
        "backward": {"value": 0.3, "source": "x"}}}})");
    CHECK(error_of([&] { (void)load_gpu_file(attention); }) ==
          attention.string() + ":/kernels/attention/default: names \"fa3\", which this block gives no figures for");
  }

  TEST_CASE("the shipped defaults give exactly the build's free parameters, each within its bounds") {
    const ModelParameters shipped_values = load_model_parameters(shipped_defaults_file());
    CHECK(shipped_values.values.size() == model_parameters().size());
    for (const ParameterSpec& s : model_parameters()) {
      CAPTURE(s.name);
      const double v = shipped_values.values.at(std::string(s.name)).value;
      CHECK(v >= s.lower);
      CHECK(v <= s.upper);
    }
  }

  TEST_CASE("a defaults file fitted for another list of parameters is refused whole, naming what differs") {
    std::string all;
    for (const ParameterSpec& s : model_parameters()) {
      const std::string value = s.unit == ParameterUnit::kSeconds ? "\"10 us\"" : "0.8";
      all += (all.empty() ? "" : ", ") + std::string("\"") + std::string(s.name) + "\": {\"value\": " + value +
             ", \"source\": \"test\"}";
    }
    const auto good = scratch_file("defaults_good.json", R"({"source": "test", "parameters": {)" + all + "}}");
    CHECK(load_model_parameters(good).values.size() == model_parameters().size());
    const auto extra =
        scratch_file("defaults_extra.json", R"({"source": "test", "parameters": {)" + all +
                                                R"(, "nccl_efficiency": {"value": 0.9, "source": "x"}}})");
    CHECK(error_of([&] { (void)load_model_parameters(extra); }) ==
          extra.string() + ":/parameters/nccl_efficiency: \"nccl_efficiency\" is not a parameter of this build (" +
              parameter_names() +
              "): the file was fitted for another list of parameters; refit it with "
              "scripts/fit-defaults");
    const auto missing = scratch_file("defaults_missing.json", R"({"source": "test", "parameters": {
        "kernel_overhead": {"value": "10 us", "source": "x"}}})");
    CHECK(error_of([&] {
            (void)load_model_parameters(missing);
          }).find(":/parameters: gives no value for \"host_overhead\", a parameter of this build") !=
          std::string::npos);
    std::string text = R"({"source": "test", "parameters": {)" + all + "}}";
    text.replace(text.find("\"10 us\""), 7, "\"900 us\"");
    const auto outside = scratch_file("defaults_outside.json", text);
    CHECK(error_of([&] {
            (void)load_model_parameters(outside);
          }).find("/value: kernel_overhead must lie in its bounds 0.5 us to 100 us, got 900 us") != std::string::npos);
  }
}

}  // namespace gpu_catalogue_test
