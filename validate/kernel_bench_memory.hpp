// The stand-in kernels of memory-bound operators: how each is run (planned on the host, so the
// plan can be printed without a GPU) and timed.
#pragma once

#include <cstddef>
#include <string>

#include "kernel_bench_kernels.hpp"
#include "kernel_bench_list.hpp"
#include "kernel_bench_timing.hpp"

namespace stepcast::validate {

/// How one memory-bound operator is run: `launches` launches of `per_launch` elements each over
/// disjoint slices of its tensors, `fraction` of the operator's elements in all (1 unless the
/// operator's tensors exceed the memory budget: then a slice is timed and the time scaled by
/// 1 / fraction, memory-bound time being linear in bytes at these sizes).
struct MemoryPlan {
  MemoryKind kind = MemoryKind::kElementwise;
  MaskMode mask = MaskMode::kNone;
  int element_bytes = 2;
  int reads = 0;
  int writes = 0;
  std::size_t row_length = 0;
  int launches = 1;
  std::size_t per_launch = 0;
  double fraction = 1.0;
  double bytes = 0.0;   ///< bytes the timed launches move
  std::string skipped;  ///< why it cannot run; empty when it can
};

/// Plans `op` within `budget_bytes` of device memory for its tensors.
MemoryPlan plan_memory(const ListOperator& op, double budget_bytes);

/// The plan in words, for --plan-only.
std::string describe(const MemoryPlan& plan);

/// Allocates the plan's tensors, fills the inputs and times one run (all launches).
Timing time_memory(const Device& d, const Settings& s, const MemoryPlan& plan);

}  // namespace stepcast::validate
