// The model's free parameters: the few figures no measurement of a kernel gives, fitted on the
// development corpus by scripts/fit-defaults and shipped in topologies/model-defaults.json. The
// list below is this build's; a defaults file must give exactly these, within their bounds.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace stepcast::topology {

enum class ParameterUnit { kSeconds, kFraction };

/// One free parameter: its name (as GPU files and calibrations write it), unit, the physical
/// range a fit keeps it in, and what it means.
struct ParameterSpec {
  std::string_view name;
  ParameterUnit unit = ParameterUnit::kFraction;
  double lower = 0.0;  ///< in SI units (seconds) or as a fraction
  double upper = 0.0;
  std::string_view meaning;
};

/// This build's free parameters, in a fixed order.
std::span<const ParameterSpec> model_parameters();
/// The parameter called `name`, or nullptr.
const ParameterSpec* find_parameter(std::string_view name);
/// The names of the list, comma-separated, for messages.
std::string parameter_names();

struct ParameterValue {
  double value = 0.0;  ///< SI units
  std::string source;  ///< what it was fitted on
};

/// Values of the free parameters, with what the whole set was fitted on.
struct ModelParameters {
  std::string source;
  std::map<std::string, ParameterValue> values;
};

/// Loads a defaults file: {"source": "...", "parameters": {NAME: {"value": ..., "source": "..."}}}
/// (times as strings with a unit, fractions as numbers). A file that names a parameter this build
/// does not have, leaves one out, or gives a value outside its bounds is refused whole
/// (InputError naming the file, the JSON pointer and the rule): it was fitted for another list.
ModelParameters load_model_parameters(const std::filesystem::path& file);

/// The defaults file the product ships: topologies/model-defaults.json of the source tree.
std::filesystem::path shipped_defaults_file();

/// "32.1 us" or "0.801": a value in the parameter's unit, for messages and written files.
std::string format_parameter(const ParameterSpec& spec, double value);

}  // namespace stepcast::topology
