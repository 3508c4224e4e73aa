// Rules of NCCL's channel search (NVIDIA/nccl src/graph/search.cc, the 2026 tree) that every graph
// stepcast sketches shares: the speeds tried per channel and how many channels a budget holds.
#pragma once

#include <cmath>
#include <span>

#include "nccl_tuning_tables.hpp"

namespace stepcast::cost::nccl_detail {

/// The per-channel speeds tried, fastest first, for graphs inside one node or across nodes
/// (sm90 lists from Hopper on; Blackwell searches with them here, nccl_tuning_tables.hpp).
inline std::span<const double> intra_speeds(int compute_capability) {
  return compute_capability >= 90 ? std::span<const double>(nccl_tables::kSpeedsIntraSm90)
                                  : std::span<const double>(nccl_tables::kSpeedsIntra);
}
inline std::span<const double> inter_speeds(int compute_capability) {
  return compute_capability >= 90 ? std::span<const double>(nccl_tables::kSpeedsInterSm90)
                                  : std::span<const double>(nccl_tables::kSpeedsInter);
}

/// How many whole channels of `speed` (GB/s) fit in `budget`, with NCCL's 1e-3 rounding (SUB_ROUND).
inline int fit(double budget, double speed) { return static_cast<int>(std::floor((budget + 1e-3) / speed)); }

}  // namespace stepcast::cost::nccl_detail
