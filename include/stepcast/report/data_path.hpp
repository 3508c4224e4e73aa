// Finding the shipped topologies/ and workloads/ files from any working directory.
#pragma once

#include <filesystem>
#include <string>

namespace stepcast::report {

/// `path` as given when it exists; otherwise, for a relative path, the same path under the
/// stepcast source tree this executable was built from (so `--topology topologies/p4d-24xlarge.json`
/// works from any folder). Falls back to `path` unchanged, whose loader then reports it missing.
std::filesystem::path data_path(const std::string& path);

}  // namespace stepcast::report
