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
  Seconds time;          ///< average time of one operation
  BytesPerSecond algbw;  ///< size / time
  BytesPerSecond busbw;  ///< algbw x nccl-tests' bus factor (doc/PERFORMANCE.md)
  /// The check column as printed: elements that failed ("#wrong"; nccl-tests prints it with %g,
  /// so a large count reads 1.67772e+07), or in older nccl-tests the largest difference from the
  /// expected result ("error", "res"). None when the check was off (N/A, or "res" printed -1).
  std::optional<double> wrong;
};

/// One message size of a series.
struct MeasuredPoint {
  Bytes size;              ///< nccl-tests' S (see cost::CollectiveCost::size)
  std::int64_t count = 0;  ///< elements
  std::string type;        ///< "float", "double", ...
  MeasuredTiming out_of_place;
  std::optional<MeasuredTiming> in_place;  ///< none where the program printed N/A
  int line = 0;                            ///< where the row is in its file (1-based); 0 for JSON input
};

/// One collective run: a series of sizes over a fixed set of ranks.
struct MeasuredCollective {
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  std::string program;                      ///< "all_reduce_perf", or "stepcast-nccl-bench"
  int ranks = 0;                            ///< ranks in the communicator
  int hosts = 0;                            ///< distinct host names
  std::vector<std::string> devices;         ///< device name of each rank, in rank order (may be empty)
  std::optional<BytesPerSecond> avg_busbw;  ///< the "# Avg bus bandwidth" line
  std::vector<MeasuredPoint> points;        ///< in file order
  std::string file;
  int first_line = 0;  ///< where the run starts in the file
};

/// A line of an nccl-tests log that was not read, and why.
struct SkippedLine {
  enum class Kind {
    kResultRow,  ///< a line inside a result table that is not a whole row (cut off, or other text)
    kNcclDebug,  ///< an NCCL INFO/WARN/TRACE line (NCCL_DEBUG)
    kOther,      ///< launcher, MPI or shell text, or a summary line with no table before it
  };
  int line = 0;
  Kind kind = Kind::kOther;
  std::string why;
};

/// What the reader had to infer or found missing, at a line of the file.
struct ReadingNote {
  int line = 0;
  std::string text;
};

/// Everything read from one measurement file.
struct Measurements {
  std::string file;
  std::vector<MeasuredCollective> runs;
  std::vector<SkippedLine> skipped;  ///< nccl-tests logs: lines that are neither nccl-tests' comments nor rows read
  std::vector<ReadingNote> notes;    ///< nccl-tests logs: missing summary lines, facts taken from the options
};

/// What the command line states about the runs of nccl-tests logs (--op, --ranks, --nodes,
/// --gpus-per-node). They fill in what a log does not say; where it says otherwise the file is
/// refused with both named.
struct RunFacts {
  std::optional<cost::CollectiveOp> op;
  std::optional<int> ranks;          ///< ranks of each run
  std::optional<int> nodes;          ///< hosts each run spanned
  std::optional<int> gpus_per_node;  ///< most ranks on one host
};

/// Reads an nccl-tests log or a stepcast-nccl-bench JSON file (told apart by the first
/// non-blank character: "{" is JSON). Bad input throws InputError with the file and the line
/// (log) or JSON pointer (JSON).
/// `facts` fill in and check what the files say about their runs (RunFacts).
Measurements read_measurements(const std::filesystem::path& file, const RunFacts& facts = {});

/// As read_measurements, for the text of a file that came from `origin`.
Measurements parse_measurements(const std::string& text, const std::string& origin, const RunFacts& facts = {});

/// Refuses `run` (read from `file` at `where`, a line or JSON pointer) when it says otherwise than
/// `facts`: "the log's Rank lines name 8 ranks, but --ranks says 16".
void check_run_facts(const MeasuredCollective& run, const RunFacts& facts, const std::string& file,
                     const std::string& where);

/// Reads stepcast-nccl-bench JSON text (schema in validate/README.md) that came from `origin`.
Measurements parse_nccl_bench_json(const std::string& text, const std::string& origin);

}  // namespace stepcast::calibrate
