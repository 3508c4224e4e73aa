// Private: where a Chakra trace's files go, and the checks a trace passes before any is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "stepcast/report/chakra_trace.hpp"

namespace stepcast::report::chakra {

/// Chakra times nodes in whole microseconds (start_time_micros, duration_micros).
inline constexpr double kMicrosPerSecond = 1e6;

/// <directory>/<prefix>.<rank>.et, as Chakra's converters and ASTRA-sim's workload layer name them.
std::filesystem::path trace_path(const std::filesystem::path& directory, std::string_view prefix, int rank);

/// <directory>/<prefix>.comm_groups.json.
std::filesystem::path comm_groups_path(const std::filesystem::path& directory, std::string_view prefix);

/// Point-to-point messages by sender, receiver, tag and bytes: each send counts +1, each receive -1.
using Messages = std::map<std::tuple<int, int, std::uint32_t, double>, long>;

/// The checks a rank's trace passes before it is written, one rank after another, keeping its
/// memory from one rank to the next.
class RankChecker {
 public:
  /// Throws InputError naming `file` and the node on the first rule rank `rank` of `ranks` breaks
  /// (as write_chakra lists them); adds its sends and receives to `messages`.
  void check(const std::filesystem::path& file, int rank, int ranks, const std::vector<TraceNode>& nodes,
             Messages& messages);

 private:
  static constexpr std::size_t kMissing = static_cast<std::size_t>(-1);

  [[noreturn]] void fail(const std::string& message) const;
  void index(const std::vector<TraceNode>& nodes);
  [[nodiscard]] std::size_t position(std::uint64_t id) const;  // kMissing when no node has it
  void check_figures(const TraceNode& n) const;
  void check_communication(const TraceNode& n, Messages& messages) const;
  void check_acyclic(const std::vector<TraceNode>& nodes) const;

  const std::filesystem::path* file_ = nullptr;
  int rank_ = 0;
  int ranks_ = 0;
  std::vector<std::pair<std::uint64_t, std::size_t>> by_id_;  // each node's id and position, by id
};

/// Throws InputError naming the rank's file when a message is sent but not received, or the reverse.
void check_messages(const std::filesystem::path& directory, std::string_view prefix, const Messages& messages);

}  // namespace stepcast::report::chakra
