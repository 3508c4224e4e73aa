// Loading the measurement commands' inputs: files, topology and point filter.
#include "stepcast/report/measured_inputs.hpp"

#include <fmt/format.h>
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
  if (text.empty() || text == "auto") return std::nullopt;
  const auto a = cost::parse_algorithm(text);
  if (!a) {
    throw InputError("--algorithm", {},
                     fmt::format("unknown algorithm \"{}\"; accepted: auto, {}", text, cost::accepted_algorithms()));
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

}  // namespace

MeasuredInputs load_measured_inputs(const MeasuredOptions& o) {
  std::vector<std::filesystem::path> files(o.measured.begin(), o.measured.end());
  calibrate::MeasurementFiles read = calibrate::read_measurement_files(files, run_facts(o));
  const std::optional<int> nodes = o.nodes > 0 ? std::optional<int>(o.nodes) : std::nullopt;
  topology::Topology topo = calibrate::topology_for(data_path(o.topology), nodes, read.collectives);
  calibrate::PointFilter filter;
  if (!o.min_size.empty()) filter.min_size = size_option("--min-size", o.min_size);
  if (!o.max_size.empty()) filter.max_size = size_option("--max-size", o.max_size);
  filter.holdout = calibrate::Holdout::parse(o.holdout);
  return MeasuredInputs{std::move(read.collectives),   std::move(read.kernels), std::move(topo), filter,
                        algorithm_option(o.algorithm), o.algorithm == "auto"};
}

}  // namespace stepcast::report
