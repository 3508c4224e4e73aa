// Planning and timing the stand-ins of memory-bound operators.
#include "kernel_bench_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cuda_check.hpp"

namespace stepcast::validate {
namespace {

constexpr std::size_t kVectorBytes = 16;
/// Resident threads per SM on Ampere and Hopper (CUDA C++ Programming Guide, compute
/// capabilities table: 2048): the grid-stride kernels launch enough blocks to fill them.
constexpr int kThreadsPerSm = 2048;

bool pattern_kind(const std::string& pattern, MemoryKind& kind) {
  if (pattern == "elementwise")
    kind = MemoryKind::kElementwise;
  else if (pattern == "row-norm")
    kind = MemoryKind::kRowNorm;
  else if (pattern == "row-softmax")
    kind = MemoryKind::kRowSoftmax;
  else if (pattern == "dropout")
    kind = MemoryKind::kDropout;
  else if (pattern == "reduction")
    kind = MemoryKind::kReduction;
  else if (pattern == "fill")
    kind = MemoryKind::kFill;
  else
    return false;
  return true;
}

const char* kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kElementwise:
      return "element-wise";
    case MemoryKind::kRowNorm:
      return "row norm";
    case MemoryKind::kRowSoftmax:
      return "row softmax";
    case MemoryKind::kDropout:
      return "dropout";
    case MemoryKind::kReduction:
      return "reduction";
    case MemoryKind::kFill:
      return "fill";
  }
  return "?";
}

bool is_row(MemoryKind kind) { return kind == MemoryKind::kRowNorm || kind == MemoryKind::kRowSoftmax; }

}  // namespace

MemoryPlan plan_memory(const ListOperator& op, double budget_bytes) {
  MemoryPlan p;
  if (op.pattern == "none" || !pattern_kind(op.pattern, p.kind)) {
    p.skipped = op.pattern == "none" ? "skipped: no kernel of the bench's patterns moves exactly this operator's bytes"
                                     : fmt::format("skipped: unknown pattern \"{}\"", op.pattern);
    return p;
  }
  p.element_bytes = op.element_bytes;
  p.reads = op.reads;
  p.writes = op.writes;
  p.mask = op.mask == "write" ? MaskMode::kWrite : op.mask == "read" ? MaskMode::kRead : MaskMode::kNone;
  p.launches = static_cast<int>(op.kernels);
  const std::size_t vector = kVectorBytes / static_cast<std::size_t>(p.element_bytes);
  // Rows that 16-byte vectors do not tile run element-wise (same bytes, no row reduction).
  p.row_length = is_row(p.kind) ? static_cast<std::size_t>(op.row_length) : 0;
  if (is_row(p.kind) && (p.row_length == 0 || p.row_length % vector != 0)) {
    p.kind = MemoryKind::kElementwise;
    p.row_length = 0;
  }
  const std::size_t unit = p.row_length > 0 ? p.row_length : vector;
  const double per_element =
      static_cast<double>(p.element_bytes) * (p.reads + p.writes) + (p.mask == MaskMode::kNone ? 0.0 : 1.0);
  const auto elements = static_cast<double>(op.elements);
  double per_launch = std::floor(elements / p.launches / static_cast<double>(unit)) * static_cast<double>(unit);
  const double fitting =
      std::floor(budget_bytes / (per_element * p.launches) / static_cast<double>(unit)) * static_cast<double>(unit);
  per_launch = std::min(per_launch, fitting);
  if (per_launch < static_cast<double>(unit)) {
    p.skipped = fmt::format("skipped: fewer than {} elements per launch, the stand-in's smallest unit", unit);
    return p;
  }
  p.per_launch = static_cast<std::size_t>(per_launch);
  p.fraction = per_launch * p.launches / elements;
  p.bytes = per_launch * p.launches * per_element;
  return p;
}

std::string describe(const MemoryPlan& p) {
  if (!p.skipped.empty()) return p.skipped;
  std::string text = fmt::format("{} x {} of {} elements ({} B each): reads {}, writes {}", p.launches,
                                 kind_name(p.kind), p.per_launch, p.element_bytes, p.reads, p.writes);
  if (p.row_length > 0) text += fmt::format(", rows of {}", p.row_length);
  if (p.mask != MaskMode::kNone)
    text += p.mask == MaskMode::kWrite ? ", writes a Philox keep mask" : ", reads a keep mask";
  text += fmt::format("; {:.4g} MB", p.bytes / 1e6);
  if (p.fraction < 1.0) text += fmt::format(", {:.4g} of the operator (time scaled up)", p.fraction);
  return text;
}

Timing time_memory(const Device& d, const Settings& s, const MemoryPlan& p) {
  const std::size_t stream_elements = p.per_launch * static_cast<std::size_t>(p.launches);
  const std::size_t eb = static_cast<std::size_t>(p.element_bytes);
  const std::size_t in_bytes =
      std::max<std::size_t>(static_cast<std::size_t>(p.reads) * stream_elements * eb, kVectorBytes);
  const std::size_t out_bytes =
      std::max<std::size_t>(static_cast<std::size_t>(p.writes) * stream_elements * eb, kVectorBytes);
  const int grid =
      static_cast<int>(std::min<std::size_t>((p.per_launch / (kVectorBytes / eb) + kMemoryThreads - 1) / kMemoryThreads,
                                             static_cast<std::size_t>(d.sm_count) * (kThreadsPerSm / kMemoryThreads)));
  void* in = nullptr;
  void* out = nullptr;
  unsigned char* mask = nullptr;
  float* partials = nullptr;
  STEPCAST_CUDA_CHECK(cudaMalloc(&in, in_bytes));
  STEPCAST_CUDA_CHECK(cudaMalloc(&out, out_bytes));
  STEPCAST_CUDA_CHECK(cudaMalloc(&partials, sizeof(float) * static_cast<std::size_t>(std::max(grid, 1))));
  if (p.mask != MaskMode::kNone) {
    STEPCAST_CUDA_CHECK(cudaMalloc(&mask, stream_elements));
    STEPCAST_CUDA_CHECK(cudaMemsetAsync(mask, 1, stream_elements, d.stream));
  }
  fill_uniform(in, in_bytes / eb, p.element_bytes == 4 ? Elem::kFp32 : Elem::kBf16, 3u, d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());
  MemoryLaunch launch;
  launch.kind = p.kind;
  launch.element_bytes = p.element_bytes;
  launch.in = in;
  launch.out = out;
  launch.mask = mask;
  launch.partials = partials;
  launch.stride = stream_elements;
  launch.count = p.per_launch;
  launch.row_length = p.row_length;
  launch.reads = p.reads;
  launch.writes = p.writes;
  launch.mask_mode = p.mask;
  launch.grid_blocks = std::max(grid, 1);
  unsigned long long seed = 0;
  Timing t = time_cold(d, s, [&] {
    launch.seed = ++seed;
    for (int l = 0; l < p.launches; ++l) {
      launch.offset = static_cast<std::size_t>(l) * p.per_launch;
      launch_memory(launch, d.stream);
      STEPCAST_CUDA_CHECK(last_launch_error());
    }
  });
  t.time_s /= p.fraction;
  if (mask != nullptr) STEPCAST_CUDA_CHECK(cudaFree(mask));
  STEPCAST_CUDA_CHECK(cudaFree(partials));
  STEPCAST_CUDA_CHECK(cudaFree(out));
  STEPCAST_CUDA_CHECK(cudaFree(in));
  return t;
}

}  // namespace stepcast::validate
