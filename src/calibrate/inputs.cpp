// Reading measurement files and sizing the topology to the runs in them.
#include "stepcast/calibrate/inputs.hpp"

#include <algorithm>

#include "stepcast/calibrate/nccl_tests_plausible.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/input_file.hpp"

namespace stepcast::calibrate {

MeasurementFiles read_measurement_files(const std::vector<std::filesystem::path>& files, const RunFacts& facts) {
  MeasurementFiles out;
  for (const auto& f : files) {
    const std::string text = read_text_file(f);
    if (is_kernel_bench_json(text)) {
      out.kernels.push_back(parse_kernel_bench_json(text, f.string()));
    } else if (is_eager_host_json(text)) {
      out.eager_host.push_back(parse_eager_host_json(text, f.string()));
    } else {
      out.collectives.push_back(parse_measurements(text, f.string(), facts));
    }
  }
  return out;
}

namespace {

topology::Topology sized_topology(const std::filesystem::path& file, std::optional<int> nodes,
                                  const std::vector<Measurements>& measurements) {
  if (nodes && *nodes < 1) throw InputError("--nodes", {}, "must be at least 1");
  topology::Topology topo = topology::load_topology(file, nodes);
  if (nodes) return topo;
  int ranks = 0;
  for (const Measurements& m : measurements) {
    for (const MeasuredCollective& r : m.runs) ranks = std::max(ranks, r.ranks);
  }
  if (ranks <= topo.gpu_count()) return topo;
  const int per_node = std::max(1, topo.gpus_per_node());
  return topology::load_topology(file, (ranks + per_node - 1) / per_node);
}

}  // namespace

topology::Topology topology_for(const std::filesystem::path& file, std::optional<int> nodes,
                                const std::vector<Measurements>& measurements) {
  topology::Topology topo = sized_topology(file, nodes, measurements);
  for (const Measurements& m : measurements) check_physically_possible(m, topo);
  return topo;
}

}  // namespace stepcast::calibrate
