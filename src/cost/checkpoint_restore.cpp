// Restoring a checkpoint under another plan (more or fewer GPUs, another tp or pp): which saved
// shards each restored rank's byte range overlaps, and what it reads with ranged or whole-file reads.
#include "stepcast/cost/checkpoint.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cstdint>

#include "checkpoint_parts.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::cost {
namespace {

int pieces_of(const CheckpointPart& part, const plan::Plan& plan) {
  return plan.tp * plan.pp * data_parallel_shards(part, plan);
}

// The most saved pieces one restored piece overlaps, when [0, 1) is cut into `saved` and into
// `restored` equal pieces: piece j covers [j/r, (j+1)/r), which meets saved pieces
// floor(j s / r) .. ceil((j+1) s / r) - 1.
int most_overlapped(std::int64_t saved, std::int64_t restored) {
  std::int64_t most = 0;
  for (std::int64_t j = 0; j < restored; ++j) {
    const std::int64_t first = j * saved / restored;
    const std::int64_t last = ((j + 1) * saved + restored - 1) / restored - 1;
    most = std::max(most, last - first + 1);
  }
  return static_cast<int>(most);
}

}  // namespace

RestoreReads restore_reads(double parameters, const plan::Plan& saved, const plan::Plan& restored,
                           const StateBytesPerParameter& bytes, const CheckpointOptions& options) {
  STEPCAST_ASSERT(parameters > 0.0 && saved.gpus() >= 1 && restored.gpus() >= 1, "resolved plans, parameters > 0");
  RestoreReads out;
  out.gpus = restored.gpus();
  out.files_per_rank = 1;
  for (const CheckpointPart& part : checkpoint_parts(bytes, options)) {
    if (part.bytes_per_parameter <= 0.0) continue;
    const Bytes full(parameters * part.bytes_per_parameter);
    const int n_saved = pieces_of(part, saved);
    const int n_restored = pieces_of(part, restored);
    const int files = most_overlapped(n_saved, n_restored);
    const Bytes needed = full / static_cast<double>(n_restored);
    const Bytes whole = full / static_cast<double>(n_saved) * static_cast<double>(files);
    out.needed_per_rank += needed;
    out.whole_file_per_rank += whole;
    out.files_per_rank = std::max(out.files_per_rank, files);
    out.explanation.push_back({fmt::format("{} read per rank", part.name),
                               fmt::format("ranged: full / {} restored pieces; whole files: {} of {} saved pieces "
                                           "x full / {}",
                                           n_restored, files, n_saved, n_saved),
                               fmt::format("{} ranged, {} whole files", format_bytes(needed), format_bytes(whole))});
  }
  const CheckpointExtras& ex = options.extras;
  const Bytes extras = ex.scheduler + ex.rng_per_rank + ex.data_position_per_rank;
  out.needed_per_rank += extras;
  out.whole_file_per_rank += extras;
  return out;
}

}  // namespace stepcast::cost
