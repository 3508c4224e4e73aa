// Measured collective timings, as nccl-tests and stepcast-nccl-bench report them: one series of
// message sizes per collective run, with the ranks and devices it ran on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"

namespace stepcast::calibrate {

/// One column group of a result row: out-of-place or in-place.
struct MeasuredTiming {
  Seconds time;           ///< average time of one operation
  BytesPerSecond algbw;   ///< size / time
  BytesPerSecond busbw;   ///< algbw x nccl-tests' bus factor (doc/PERFORMANCE.md)
  std::optional<std::int64_t> wrong;  ///< elements that failed the check; none when not checked
};

/// One message size of a series.
struct MeasuredPoint {
  Bytes size;                ///< nccl-tests' S (see cost::CollectiveCost::size)
  std::int64_t count = 0;    ///< elements
  std::string type;          ///< "float", "double", ...
  MeasuredTiming out_of_place;
  std::optional<MeasuredTiming> in_place;  ///< none where the program printed N/A
  int line = 0;              ///< where the row is in its file (1-based); 0 for JSON input
};

/// One collective run: a series of sizes over a fixed set of ranks.
struct MeasuredCollective {
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  std::string program;               ///< "all_reduce_perf", or "stepcast-nccl-bench"
  int ranks = 0;                     ///< ranks in the communicator
  int hosts = 0;                     ///< distinct host names
  std::vector<std::string> devices;  ///< device name of each rank, in rank order (may be empty)
  std::optional<BytesPerSecond> avg_busbw;  ///< the "# Avg bus bandwidth" line
  std::vector<MeasuredPoint> points; ///< in file order
  std::string file;
  int first_line = 0;                ///< where the run starts in the file
};

/// Everything read from one measurement file.
struct Measurements {
  std::string file;
  std::vector<MeasuredCollective> runs;
};

/// Reads an nccl-tests log or a stepcast-nccl-bench JSON file (told apart by the first
/// non-blank character: "{" is JSON). Bad input throws InputError with the file and the line
/// (log) or JSON pointer (JSON).
Measurements read_measurements(const std::filesystem::path& file);

/// As read_measurements, for the text of a file that came from `origin`.
Measurements parse_measurements(const std::string& text, const std::string& origin);

/// Reads stepcast-nccl-bench JSON text (schema in validate/README.md) that came from `origin`.
Measurements parse_nccl_bench_json(const std::string& text, const std::string& origin);

}  // namespace stepcast::calibrate
