// Device kernels of stepcast-kernel-bench: operand fill and the memory-bandwidth copy kernel.
// Built for sm_80 and sm_90 (validate/CMakeLists.txt); fp8 conversion needs sm_89+ at run time
// only where fp8 GEMMs run, and the host code skips fp8 below that.
#include "kernel_bench_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace stepcast::validate {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 65535;

// A 32-bit integer hash (Wang), mapped to [-1, 1).
__device__ float hash_uniform(std::size_t i, unsigned seed) {
  auto x = static_cast<std::uint32_t>(i) ^ (static_cast<std::uint32_t>(i >> 32) * 0x9e3779b9u) ^ seed;
  x = (x ^ 61u) ^ (x >> 16);
  x *= 9u;
  x ^= x >> 4;
  x *= 0x27d4eb2du;
  x ^= x >> 15;
  return static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f;
}

template <typename T>
__device__ T convert(float v);
template <>
__device__ float convert<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 convert<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __half convert<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, unsigned seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = convert<T>(hash_uniform(i, seed));
  }
}

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = src[i];
  }
}

unsigned blocks_for(std::size_t count) {
  const std::size_t want = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < kMaxBlocks ? (want > 0 ? want : 1) : kMaxBlocks);
}

}  // namespace

void fill_uniform(void* data, std::size_t count, Elem elem, unsigned seed, cudaStream_t stream) {
  const unsigned blocks = blocks_for(count);
  switch (elem) {
    case Elem::kFp32:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
      break;
    case Elem::kBf16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
      break;
    case Elem::kFp16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
      break;
    case Elem::kFp8E4M3:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed);
      break;
  }
}

void copy_float4(const void* src, void* dst, std::size_t count, cudaStream_t stream) {
  copy_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const float4*>(src), static_cast<float4*>(dst),
                                                          count);
}

cudaError_t last_launch_error() { return cudaGetLastError(); }

}  // namespace stepcast::validate
