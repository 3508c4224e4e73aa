// Device kernels of stepcast-kernel-bench (kernel_bench_kernels.cu, built by nvcc), called from the
// host code (built by g++ with the project's warnings): operand fill, the bandwidth copy, the
// representative kernels of memory-bound operators, and the empty and spin kernels that time
// launch overhead.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace stepcast::validate {

/// The element types the operands are filled in.
enum class Elem { kFp32, kBf16, kFp16, kFp8E4M3 };

/// Fills `count` elements of type `elem` at `data` with values in [-1, 1) from a hash of the
/// index and `seed`: non-zero operands, so the tensor cores draw the power real data makes them
/// draw (all-zero inputs run faster than training does).
void fill_uniform(void* data, std::size_t count, Elem elem, unsigned seed, cudaStream_t stream);

/// Copies `count` float4 (16 B each) from `src` to `dst` with a grid-stride kernel.
void copy_float4(const void* src, void* dst, std::size_t count, cudaStream_t stream);

/// The patterns of calibrate/bench_operators.hpp (MemoryPattern), in the same order.
enum class MemoryKind { kElementwise, kRowNorm, kRowSoftmax, kDropout, kReduction, kFill };
enum class MaskMode { kNone, kRead, kWrite };

/// One launch of a memory-bound stand-in kernel over `count` elements from `offset` of each of
/// `reads` input tensors (at `in`, `stride` elements apart) and `writes` output tensors (at
/// `out`, likewise), plus a 1-byte-per-element mask. Elements are bf16 (element_bytes 2) or fp32
/// (4), computed in fp32. `count`, `offset`, `stride` and `row_length` are multiples of 16 bytes'
/// worth of elements (the kernels load and store 16 B vectors, as vectorised framework kernels do).
struct MemoryLaunch {
  MemoryKind kind = MemoryKind::kElementwise;
  int element_bytes = 2;
  const void* in = nullptr;
  void* out = nullptr;
  unsigned char* mask = nullptr;
  float* partials = nullptr;  ///< reductions: one float per thread block
  std::size_t stride = 0;
  std::size_t offset = 0;
  std::size_t count = 0;
  std::size_t row_length = 0;  ///< row kinds: one thread block per row
  int reads = 0;
  int writes = 0;
  MaskMode mask_mode = MaskMode::kNone;
  unsigned long long seed = 0;
  int grid_blocks = 1;  ///< grid-stride kinds: thread blocks of the launch
};

/// Enqueues one launch on `stream`.
void launch_memory(const MemoryLaunch& launch, cudaStream_t stream);

/// Threads per block of the memory kernels.
inline constexpr int kMemoryThreads = 256;

/// An empty kernel of one thread.
void launch_empty(cudaStream_t stream);

/// A one-thread kernel that runs for `ns` nanoseconds of the GPU's global timer: it keeps the GPU
/// busy while the host enqueues the work to be timed, so no launch latency of the host counts.
void launch_spin(unsigned long long ns, cudaStream_t stream);

/// The last launch's error (cudaGetLastError), for the caller's check macro.
cudaError_t last_launch_error();

}  // namespace stepcast::validate
