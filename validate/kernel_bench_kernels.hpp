// Device kernels of stepcast-kernel-bench (kernel_bench_kernels.cu, built by nvcc), called from the
// host code in kernel_bench.cpp (built by g++ with the project's warnings).
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

namespace stepcast::validate {

/// The element types the GEMM operands are filled in.
enum class Elem { kFp32, kBf16, kFp16, kFp8E4M3 };

/// Fills `count` elements of type `elem` at `data` with values in [-1, 1) from a hash of the
/// index and `seed`: non-zero operands, so the tensor cores draw the power real data makes them
/// draw (all-zero inputs run faster than training does).
void fill_uniform(void* data, std::size_t count, Elem elem, unsigned seed, cudaStream_t stream);

/// Copies `count` float4 (16 B each) from `src` to `dst` with a grid-stride kernel.
void copy_float4(const void* src, void* dst, std::size_t count, cudaStream_t stream);

/// The last launch's error (cudaGetLastError), for the caller's check macro.
cudaError_t last_launch_error();

}  // namespace stepcast::validate
