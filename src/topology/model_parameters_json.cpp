// The model's free parameters and the defaults file that gives their values (model_parameters.hpp).
#include <fmt/format.h>

#include <array>
#include <set>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/core/problems.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::topology {
namespace {

constexpr double kOneMicrosecond = 1e-6;

// The bounds are the physical range of each figure, wide enough that a fit never rests on one:
// a kernel's fixed cost lies between a launch with nothing to do (under a microsecond on the GPU)
// and a tenth of a millisecond; a host issues a kernel in 1 to 200 microseconds (eager PyTorch on
// a slow CPU); a collective's stream synchronisation and launch cost no more than such a slow host's
// launch. A training step's tensor-core kernels sustain at most the rate one timed on its own
// reaches; the floor, half of it, is there only so that a fit never rests on it.
constexpr std::array<ParameterSpec, 4> kParameterList = {{
    {"kernel_overhead", ParameterUnit::kSeconds, 0.5 * kOneMicrosecond, 100.0 * kOneMicrosecond,
     "GPU time every kernel costs beyond its roofline time (launch, ramp-up and drain)"},
    {"host_overhead", ParameterUnit::kSeconds, 1.0 * kOneMicrosecond, 200.0 * kOneMicrosecond,
     "host (CPU) time the framework spends issuing one kernel"},
    {"sustained_tensor_fraction", ParameterUnit::kFraction, 0.5, 1.0,
     "fraction of a tensor-core kernel's rate timed on its own (a GEMM sweep's best shape or a training shape, a "
     "fused attention benchmark) that a training step's back-to-back kernels sustain; the GPU files scale every "
     "such GEMM and attention figure by it"},
    {"collective_overhead", ParameterUnit::kSeconds, 0.5 * kOneMicrosecond, 200.0 * kOneMicrosecond,
     "time every collective of a training step costs beyond NCCL's model of it, which nccl-tests' back-to-back "
     "calls hide: the framework's stream synchronisation around the call and its launch"},
}};

double read_value(const JsonReader& r, const ParameterSpec& spec) {
  if (spec.unit == ParameterUnit::kSeconds) return r.quantity<Seconds>().value();
  return r.number();
}

}  // namespace

std::span<const ParameterSpec> model_parameters() { return kParameterList; }

const ParameterSpec* find_parameter(std::string_view name) {
  for (const ParameterSpec& p : kParameterList) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string parameter_names() {
  std::string out;
  for (const ParameterSpec& p : kParameterList) out += fmt::format("{}{}", out.empty() ? "" : ", ", p.name);
  return out;
}

std::string format_parameter(const ParameterSpec& spec, double value) {
  if (spec.unit == ParameterUnit::kSeconds) return fmt::format("{:.4g} us", value / kOneMicrosecond);
  return fmt::format("{:.4g}", value);
}

ModelParameters load_model_parameters(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  const JsonReader root(doc, file.string());
  root.check_keys({"source", "fitted_on", "parameters"});
  ModelParameters out;
  ProblemList problems;
  problems.check([&] {
    out.source = root.at("source").string();
    if (out.source.empty()) root.at("source").fail("must say what the parameters were fitted on");
  });
  const JsonReader block = root.at("parameters");
  std::set<std::string> seen;
  for (const auto& [name, r] : block.members()) {
    // Structured bindings named through init-captures (clang before 16 cannot capture them).
    problems.check([&, &name = name, &r = r] {
      const ParameterSpec* spec = find_parameter(name);
      if (!spec) {
        r.fail(
            fmt::format("\"{}\" is not a parameter of this build ({}): the file was fitted for another list of "
                        "parameters; refit it with scripts/fit-defaults",
                        name, parameter_names()));
      }
      r.check_keys({"value", "source"});
      const double v = read_value(r.at("value"), *spec);
      if (!(v >= spec->lower && v <= spec->upper)) {
        r.at("value").fail(fmt::format("{} must lie in its bounds {} to {}, got {}", name,
                                       format_parameter(*spec, spec->lower), format_parameter(*spec, spec->upper),
                                       format_parameter(*spec, v)));
      }
      std::string source = r.at("source").string();
      if (source.empty()) r.at("source").fail("must say where the value comes from");
      out.values[name] = {v, std::move(source)};
      seen.insert(name);
    });
  }
  for (const ParameterSpec& p : kParameterList) {
    if (!seen.contains(std::string(p.name)) && !block.has(p.name)) {
      problems.check([&] {
        block.fail(
            fmt::format("gives no value for \"{}\", a parameter of this build ({}): the file was fitted for "
                        "another list of parameters; refit it with scripts/fit-defaults",
                        p.name, parameter_names()));
      });
    }
  }
  problems.throw_if_any();
  return out;
}

std::filesystem::path shipped_defaults_file() {
  return std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies" / "model-defaults.json";
}

}  // namespace stepcast::topology
