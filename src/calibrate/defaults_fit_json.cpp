// Writing a fit of the model's free parameters as a defaults file (defaults_fit.hpp).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stepcast/calibrate/defaults_fit.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::calibrate {

std::string defaults_json_text(const DefaultsFit& fit) {
  nlohmann::json j = nlohmann::json::object();
  std::size_t total = 0;
  for (const auto& [file, n] : fit.runs_per_file) total += n;
  j["source"] = fmt::format(
      "stepcast calibrate --runs ... --fit defaults: the model's free parameters fitted on {} measured runs of {} "
      "files, each file weighed alike (Levenberg-Marquardt on log throughput; weighted rms {:.4f} -> {:.4f})",
      total, fit.runs_per_file.size(), fit.rms_before, fit.rms_after);
  nlohmann::json on = nlohmann::json::array();
  for (const auto& [file, n] : fit.runs_per_file) on.push_back(fmt::format("{}: {} runs", file, n));
  j["fitted_on"] = std::move(on);
  nlohmann::json params = nlohmann::json::object();
  for (const FittedParameter& p : fit.parameters) {
    const topology::ParameterSpec& s = *topology::find_parameter(p.name);
    const nlohmann::json value = s.unit == topology::ParameterUnit::kSeconds
                                     ? nlohmann::json(fmt::format("{:.4g} us", p.value * 1e6))
                                     : nlohmann::json::parse(fmt::format("{:.4g}", p.value));
    params[p.name] = nlohmann::json{{"value", value}, {"source", fit.fitted.sources.at(p.name)}};
  }
  j["parameters"] = std::move(params);
  return j.dump(2) + "\n";
}

}  // namespace stepcast::calibrate
