// Helpers for the topology tests: paths of shipped files, and small files written on the fly.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/core/errors.hpp"
#include "support/input_error_text.hpp"

namespace stepcast::topology::test {

inline std::filesystem::path shipped(const std::string& name) {
  return std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies" / name;
}

/// Writes `text` to a file named `name` in a scratch folder and returns its path.
inline std::filesystem::path scratch_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "stepcast_topology_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

/// A cluster of two nodes of two H100s whose "nics" block also holds `nics_keys` (e.g.
/// "\"network\": \"infiniband\", "), written before the block's source.
inline std::string two_node_cluster(const std::string& nics_keys) {
  return R"({"form": "cluster", "name": "t", "source": "test", "gpu": "h100-sxm5-80gb",
      "node": {"gpus_per_node": 2, "intra": {"kind": "nvswitch", "bandwidth_per_gpu": "100 GB/s", "latency": "1 us",
      "source": "test"}, "nics": {"count": 1, "bandwidth": "100 Gbps", "latency": "1 us", )" +
         nics_keys + R"("source": "test"}},
      "nodes": 2, "fabric": {"kind": "single-switch", "source": "test"}})";
}

template <class F>
std::string error_of(F&& f) {
  return stepcast::test::input_error_text(std::forward<F>(f));
}

}  // namespace stepcast::topology::test
