// Loading the measurement commands' inputs: files, topology and point filter.
#include "stepcast/report/measured_inputs.hpp"

#include <fmt/format.h>
#include <cctype>
#include <filesystem>

#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/report/data_path.hpp"

namespace stepcast::report {
namespace {

Bytes size_option(const std::string& option, const std::string& text) {
  try {
    return parse_bytes(text);
  } catch (const UnitError& e) {
    throw InputError(option, {}, e.what());
  }
}

std::optional<cost::Algorithm> algorithm_option(const std::string& text) {
  // "default": each collective's own closed-form default (ring all-reduce, ...), calibrate's.
  if (text.empty() || text == "auto" || text == "default") return std::nullopt;
  const auto a = cost::parse_algorithm(text);
  if (!a) {
    throw InputError(
        "--algorithm", {},
        fmt::format("unknown algorithm \"{}\"; accepted: auto, default, {}", text, cost::accepted_algorithms()));
  }
  return a;
}

// What the options state about the runs (calibrate::RunFacts); InputError when they disagree.
calibrate::RunFacts run_facts(const MeasuredOptions& o) {
  calibrate::RunFacts f;
  if (!o.op.empty()) {
    f.op = cost::parse_collective_op(o.op);
    if (!f.op) {
      throw InputError("--op", {},
                       fmt::format("unknown collective \"{}\"; accepted: {}", o.op, cost::accepted_collective_ops()));
    }
  }
  if (o.ranks > 0) f.ranks = o.ranks;
  if (o.nodes > 0) f.nodes = o.nodes;
  if (o.gpus_per_node > 0) f.gpus_per_node = o.gpus_per_node;
  if (f.ranks && f.nodes && f.gpus_per_node && (*f.ranks + *f.gpus_per_node - 1) / *f.gpus_per_node != *f.nodes) {
    throw InputError("--ranks", {},
                     fmt::format("{} ranks at {} per node fill {} nodes, but --nodes says {}", *f.ranks,
                                 *f.gpus_per_node, (*f.ranks + *f.gpus_per_node - 1) / *f.gpus_per_node, *f.nodes));
  }
  return f;
}

/// The GPU model a device or catalogue name states ("NVIDIA H100 80GB HBM3" and "H100-SXM5-80GB":
/// H100; "Tesla V100-SXM2-16GB": V100; "GB200-186GB": GB200), upper-cased; empty when none does.
std::string gpu_model(std::string_view name) {
  std::string word;
  const auto is_model = [](const std::string& w) {
    std::size_t letters = 0;
    while (letters < w.size() && std::isalpha(static_cast<unsigned char>(w[letters]))) ++letters;
    std::size_t digits = letters;
    while (digits < w.size() && std::isdigit(static_cast<unsigned char>(w[digits]))) ++digits;
    return letters >= 1 && letters <= 2 && digits - letters >= 2 && digits - letters <= 4 && w.size() - digits <= 1;
  };
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != ' ' && name[i] != '-') {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
      continue;
    }
    if (is_model(word)) return word;
    word.clear();
  }
  return {};
}

/// Refuses a log whose "# Rank" lines name another GPU than the topology's: its times measure
/// that GPU's links and would be priced, or fitted, as the topology's.
void check_log_gpus(const std::vector<calibrate::Measurements>& files, const topology::Topology& topo) {
  const std::string expected = gpu_model(topo.gpu().name);
  if (expected.empty()) return;
  for (const calibrate::Measurements& m : files) {
    for (const calibrate::MeasuredCollective& run : m.runs) {
      if (run.devices.empty()) continue;
      const std::string seen = gpu_model(run.devices.front());
      if (seen.empty() || seen == expected) continue;
      throw InputError(m.file, std::to_string(run.first_line),
                       fmt::format("the log ran on {} GPUs (its \"# Rank\" lines name \"{}\"), but {} has {} GPUs "
                                   "({}): give the topology of the cluster the log ran on",
                                   seen, run.devices.front(), topo.name(), expected, topo.gpu().name));
    }
  }
}

}  // namespace

MeasuredInputs load_measured_inputs(const MeasuredOptions& o) {
  std::vector<std::filesystem::path> files(o.measured.begin(), o.measured.end());
  calibrate::MeasurementFiles read = calibrate::read_measurement_files(files, run_facts(o));
  const std::optional<int> nodes = o.nodes > 0 ? std::optional<int>(o.nodes) : std::nullopt;
  topology::Topology topo = calibrate::topology_for(topology_path(o.topology), nodes, read.collectives);
  check_log_gpus(read.collectives, topo);
  calibrate::PointFilter filter;
  if (!o.min_size.empty()) filter.min_size = size_option("--min-size", o.min_size);
  if (!o.max_size.empty()) filter.max_size = size_option("--max-size", o.max_size);
  filter.holdout = calibrate::Holdout::parse(o.holdout);
  return MeasuredInputs{
      std::move(read.collectives),   std::move(read.kernels), std::move(read.eager_host), std::move(topo), filter,
      algorithm_option(o.algorithm), o.algorithm == "auto"};
}

}  // namespace stepcast::report
