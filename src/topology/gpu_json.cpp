// The GPU catalogue: named GPU files and the kernel figures of a GPU block (gpu_json.hpp).
#include "gpu_json.hpp"

#include "catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/problems.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::topology {
namespace {

constexpr std::array<std::string_view, 7> kGemmPrecisions = {"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"};
constexpr std::array<std::string_view, 4> kAttentionKernels = {"fa2", "fa3", "triton", "cudnn"};
constexpr std::array<std::string_view, 6> kGenerations = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"};

std::string listed(std::span<const std::string_view> names) {
  std::string out;
  for (const auto n : names) out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out;
}

/// The shipped defaults, read the first time a figure names a parameter.
class Defaults {
 public:
  const ModelParameters& get() {
    if (!values_) values_ = load_model_parameters(shipped_defaults_file());
    return *values_;
  }

 private:
  std::optional<ModelParameters> values_;
};

/// The free parameter `r` names, which must be of `unit`.
const ParameterSpec& named_parameter(const JsonReader& r, ParameterUnit unit) {
  const std::string name = r.string();
  const ParameterSpec* spec = find_parameter(name);
  if (!spec) {
    r.fail(fmt::format("\"{}\" is not a free parameter of stepcast (its parameters: {})", name, parameter_names()));
  }
  if (spec->unit != unit) {
    r.fail(fmt::format("\"{}\" is {}, and this figure is {}", name,
                       spec->unit == ParameterUnit::kSeconds ? "a time" : "a fraction",
                       unit == ParameterUnit::kSeconds ? "a time" : "a fraction"));
  }
  return *spec;
}

/// A "borrowed_from" that names a GPU of the catalogue.
std::string read_lender(const JsonReader& b) {
  std::string lender = b.string();
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies" / "gpus" / (lender + ".json"),
                               ec)) {
    b.fail(fmt::format("names \"{}\", which is no GPU of the catalogue (topologies/gpus/)", lender));
  }
  return lender;
}

/// A figure: {"value": V, "source": "..."} or {"parameter": NAME, "source": "..."}. Fractions are
/// numbers in (0, 1]; times are strings with a unit, at least zero. A cited fraction may add
/// "scaled_by": NAME, a fraction parameter it is multiplied by.
GpuFigure read_figure(const JsonReader& r, ParameterUnit unit, Defaults& defaults) {
  r.check_keys({"value", "parameter", "source", "borrowed_from", "scaled_by"});
  GpuFigure f;
  f.source = r.at("source").string();
  if (f.source.empty()) r.at("source").fail("must say where the figure comes from, got an empty string");
  if (const auto b = r.find("borrowed_from")) f.borrowed_from = read_lender(*b);
  const bool has_value = r.has("value");
  if (has_value == r.has("parameter")) {
    r.fail("give either \"value\" (a cited figure) or \"parameter\" (a free parameter of the model), not both");
  }
  if (has_value) {
    const JsonReader v = r.at("value");
    if (unit == ParameterUnit::kSeconds) {
      f.value = v.quantity<Seconds>().value();
      if (f.value < 0.0) v.fail("a time per kernel must not be negative");
    } else {
      f.value = v.number();
      if (!(f.value > 0.0 && f.value <= 1.0)) {
        v.fail(fmt::format("an efficiency is a fraction of the peak, in (0, 1], got {}", f.value));
      }
    }
    if (const auto scaled = r.find("scaled_by")) {
      if (unit != ParameterUnit::kFraction) scaled->fail("only a fraction of a peak is scaled by a parameter");
      f.scaled_by = std::string(named_parameter(*scaled, ParameterUnit::kFraction).name);
      f.scale = defaults.get().values.at(f.scaled_by).value;
    }
    return f;
  }
  if (const auto scaled = r.find("scaled_by")) scaled->fail("scales a cited value; a parameter is fitted whole");
  f.parameter = std::string(named_parameter(r.at("parameter"), unit).name);
  f.value = defaults.get().values.at(f.parameter).value;
  return f;
}

/// The bounds and wording of one attention scaling block (topology::AttentionScaling).
struct ScalingBlock {
  std::string_view fixed_key;  ///< the JSON name of the pass's fixed term
  double measured_min, measured_max;
  std::string_view measured_what;  ///< "a head dimension", ...
  double fixed_max;
  std::string_view fixed_what;  ///< "head dimensions of matmul work", ...
};
/// {"forward": {"measured_at": D, "non_matmul": B}, "backward": {...}, "source": TEXT,
/// "borrowed_from": GPU (optional)}.
constexpr ScalingBlock kHeadDimBlock{"non_matmul",       8.0,    1024.0,
                                     "a head dimension", 1024.0, "head dimensions of matmul work"};
/// {"forward": {"measured_at": S, "fixed_keys": K}, ... as above}.
constexpr ScalingBlock kSequenceBlock{"fixed_keys", 16.0, 16777216.0, "keys per query", 65536.0, "keys' worth of work"};

/// An attention kernel's "head_dim" or "sequence" block.
AttentionScaling read_scaling(const JsonReader& r, const ScalingBlock& block) {
  r.check_keys({"forward", "backward", "source", "borrowed_from"});
  AttentionScaling s;
  s.source = r.at("source").string();
  if (s.source.empty()) r.at("source").fail("must say where the terms come from, got an empty string");
  if (const auto b = r.find("borrowed_from")) s.borrowed_from = read_lender(*b);
  const auto pass = [&block](const JsonReader& p) {
    const std::string fixed_key(block.fixed_key);
    p.check_keys({"measured_at", fixed_key});
    AttentionScalingPass out;
    out.measured_at = p.at("measured_at").number();
    if (!(out.measured_at >= block.measured_min && out.measured_at <= block.measured_max)) {
      p.at("measured_at")
          .fail(fmt::format("{} from {} to {}, got {}", block.measured_what, block.measured_min, block.measured_max,
                            out.measured_at));
    }
    out.fixed = p.at(fixed_key).number();
    if (!(out.fixed >= 0.0 && out.fixed <= block.fixed_max)) {
      p.at(fixed_key).fail(fmt::format("{} from 0 to {}, got {}", block.fixed_what, block.fixed_max, out.fixed));
    }
    return out;
  };
  s.forward = pass(r.at("forward"));
  s.backward = pass(r.at("backward"));
  return s;
}

GpuKernelFigures read_kernels(const JsonReader& r) {
  r.check_keys({"gemm", "memory", "attention", "kernel_overhead", "host_overhead"});
  GpuKernelFigures k;
  Defaults defaults;
  ProblemList problems;
  problems.check([&] {
    if (const auto gemm = r.find("gemm")) {
      for (const auto& [precision, fig] : gemm->members()) {
        // Structured bindings named through init-captures (clang before 16 cannot capture them).
        problems.check([&, &precision = precision, &fig = fig] {
          if (std::find(kGemmPrecisions.begin(), kGemmPrecisions.end(), precision) == kGemmPrecisions.end()) {
            fig.fail(fmt::format("unknown precision \"{}\" (expected one of {})", precision, listed(kGemmPrecisions)));
          }
          k.gemm[precision] = read_figure(fig, ParameterUnit::kFraction, defaults);
        });
      }
    }
  });
  problems.check([&] {
    if (const auto m = r.find("memory")) k.memory = read_figure(*m, ParameterUnit::kFraction, defaults);
  });
  problems.check([&] {
    const auto attention = r.find("attention");
    if (!attention) return;
    for (const auto& [kernel, fig] : attention->members()) {
      if (kernel == "default") continue;
      problems.check([&, &kernel = kernel, &fig = fig] {
        if (std::find(kAttentionKernels.begin(), kAttentionKernels.end(), kernel) == kAttentionKernels.end()) {
          fig.fail(fmt::format("unknown attention kernel \"{}\" (expected default or one of {})", kernel,
                               listed(kAttentionKernels)));
        }
        fig.check_keys({"forward", "backward", "head_dim", "sequence"});
        AttentionFigures a;
        a.forward = read_figure(fig.at("forward"), ParameterUnit::kFraction, defaults);
        a.backward = read_figure(fig.at("backward"), ParameterUnit::kFraction, defaults);
        if (const auto h = fig.find("head_dim")) a.head_dim = read_scaling(*h, kHeadDimBlock);
        if (const auto q = fig.find("sequence")) a.sequence = read_scaling(*q, kSequenceBlock);
        k.attention[kernel] = a;
      });
    }
    const JsonReader d = attention->at("default");
    k.default_attention = d.string();
    // A kernel whose block was refused above is not reported twice.
    if (!k.attention.contains(k.default_attention) && !attention->has(k.default_attention)) {
      d.fail(fmt::format("names \"{}\", which this block gives no figures for", k.default_attention));
    }
  });
  problems.check([&] {
    if (const auto t = r.find("kernel_overhead"))
      k.kernel_overhead = read_figure(*t, ParameterUnit::kSeconds, defaults);
  });
  problems.check([&] {
    if (const auto t = r.find("host_overhead")) k.host_overhead = read_figure(*t, ParameterUnit::kSeconds, defaults);
  });
  problems.throw_if_any();
  k.collective_overhead.parameter = "collective_overhead";
  k.collective_overhead.value = defaults.get().values.at(k.collective_overhead.parameter).value;
  k.collective_overhead.source =
      "a free parameter of the model (topologies/model-defaults.json says what it was fitted on)";
  return k;
}

/// "9.0" -> 90, "10.3" -> 103.
int read_compute_capability(const JsonReader& r) {
  const std::string text = r.string();
  static const std::regex kForm(R"(([1-9][0-9]?)\.([0-9]))");
  std::smatch m;
  if (!std::regex_match(text, m, kForm)) {
    r.fail(fmt::format("expected a CUDA compute capability such as \"9.0\" or \"10.3\", got \"{}\"", text));
  }
  return std::stoi(m[1].str()) * 10 + std::stoi(m[2].str());
}

}  // namespace

std::filesystem::path catalogue_gpu_file(const JsonReader& name) { return catalogue_file(name, "gpus", "GPU"); }

void read_gpu_extras(const JsonReader& r, bool in_catalogue, GpuSpec& gpu) {
  ProblemList problems;
  problems.check([&] {
    const auto g = in_catalogue ? std::optional<JsonReader>(r.at("generation")) : r.find("generation");
    if (!g) return;
    gpu.generation = g->string();
    if (std::find(kGenerations.begin(), kGenerations.end(), gpu.generation) == kGenerations.end()) {
      g->fail(fmt::format("unknown generation \"{}\" (expected one of {})", gpu.generation, listed(kGenerations)));
    }
  });
  problems.check([&] {
    const auto cc = in_catalogue ? std::optional<JsonReader>(r.at("compute_capability")) : r.find("compute_capability");
    if (cc) gpu.compute_capability = read_compute_capability(*cc);
  });
  problems.check([&] {
    const auto k = in_catalogue ? std::optional<JsonReader>(r.at("kernels")) : r.find("kernels");
    if (k) gpu.kernels = read_kernels(*k);
  });
  problems.throw_if_any();
  gpu.file = r.file();
  gpu.pointer = r.pointer();
}

void expand_named_gpu(nlohmann::json& doc, const std::filesystem::path& topology_file) {
  if (!doc.is_object() || !doc.contains("gpu") || !doc["gpu"].is_string()) return;
  const JsonReader root(doc, topology_file.string());
  doc["gpu"] = read_json_file(catalogue_gpu_file(root.at("gpu")));
}

}  // namespace stepcast::topology
