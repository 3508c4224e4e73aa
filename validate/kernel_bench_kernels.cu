// Device kernels of stepcast-kernel-bench: operand fill, the memory-bandwidth copy, the
// stand-ins for memory-bound operators (validate/README.md lists which runs for which operator)
// and the empty and spin kernels. Built for sm_80 and sm_90 (validate/CMakeLists.txt); fp8
// conversion needs sm_89+ at run time only where fp8 GEMMs run, and the host code skips fp8
// below that.
#include "kernel_bench_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace stepcast::validate {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 65535;
constexpr int kWarp = 32;
constexpr int kVectorBytes = 16;  // one uint4 load or store
/// Dropout keeps an element when 16 random bits reach this: p = 0.1 of 65536, Megatron's default.
constexpr unsigned kDropThreshold = 6554u;
constexpr float kKeepScale = 1.0f / 0.9f;
constexpr float kNormEpsilon = 1e-5f;

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

__device__ float to_float(float v) { return v; }
__device__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

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

// ---- 16-byte vectors of bf16 (8) or fp32 (4) elements, converted to fp32 registers.

template <typename T>
struct Vec {
  static constexpr int kN = kVectorBytes / static_cast<int>(sizeof(T));
  float v[kN];
};

template <typename T>
__device__ Vec<T> load_vec(const T* p) {
  union {
    uint4 raw;
    T e[Vec<T>::kN];
  } u;
  u.raw = *reinterpret_cast<const uint4*>(p);
  Vec<T> out;
#pragma unroll
  for (int i = 0; i < Vec<T>::kN; ++i) out.v[i] = to_float(u.e[i]);
  return out;
}

template <typename T>
__device__ void store_vec(T* p, const Vec<T>& x) {
  union {
    uint4 raw;
    T e[Vec<T>::kN];
  } u;
#pragma unroll
  for (int i = 0; i < Vec<T>::kN; ++i) u.e[i] = convert<T>(x.v[i]);
  *reinterpret_cast<uint4*>(p) = u.raw;
}

// The sum of `v` over the thread block (warp shuffles, then one warp over the warps' sums).
__device__ float block_sum(float v) {
  __shared__ float partial[kWarp];
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (static_cast<int>(blockDim.x) + kWarp - 1) / kWarp;
  v = static_cast<int>(threadIdx.x) < warps ? partial[threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const float total = partial[0];
  __syncthreads();  // `partial` is reused by the next call
  return total;
}

__device__ float block_max(float v) {
  __shared__ float partial[kWarp];
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (static_cast<int>(blockDim.x) + kWarp - 1) / kWarp;
  v = static_cast<int>(threadIdx.x) < warps ? partial[threadIdx.x] : -INFINITY;
  if (warp == 0) {
    for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const float total = partial[0];
  __syncthreads();
  return total;
}

// Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3"; the
// generator of cuRAND and PyTorch's CUDA dropout): 4 random words per (counter, key).
__device__ uint4 philox(uint4 c, uint2 k) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const unsigned hi0 = __umulhi(0xD2511F53u, c.x);
    const unsigned lo0 = 0xD2511F53u * c.x;
    const unsigned hi1 = __umulhi(0xCD9E8D57u, c.z);
    const unsigned lo1 = 0xCD9E8D57u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k.x += 0x9E3779B9u;
    k.y += 0xBB67AE85u;
  }
  return c;
}

// ---- The stand-ins. Each reads its `reads` inputs and writes its `writes` outputs once from
// HBM; row kernels read a row's first input a second time, from cache.

// out_w[i] = f(in_1[i], ..., in_r[i]) (+ the dropout mask); grid-stride over 16-byte vectors.
template <typename T>
__global__ void elementwise_kernel(MemoryLaunch a) {
  constexpr int kN = Vec<T>::kN;
  const T* in = static_cast<const T*>(a.in) + a.offset;
  T* out = static_cast<T*>(a.out) + a.offset;
  unsigned char* mask = a.mask != nullptr ? a.mask + a.offset : nullptr;
  const std::size_t vectors = a.count / kN;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += step) {
    Vec<T> acc;
#pragma unroll
    for (int i = 0; i < kN; ++i) acc.v[i] = 0.0f;
    for (int r = 0; r < a.reads; ++r) {
      const Vec<T> x = load_vec(in + static_cast<std::size_t>(r) * a.stride + v * kN);
#pragma unroll
      for (int i = 0; i < kN; ++i) acc.v[i] = fmaf(acc.v[i], 0.5f, x.v[i]);
    }
    if (a.mask_mode == MaskMode::kWrite) {
      // 16 random bits per element: one Philox call covers 8 elements.
      const uint4 r0 = philox(make_uint4(static_cast<unsigned>(v), static_cast<unsigned>(v >> 32), 0u, 0u),
                              make_uint2(static_cast<unsigned>(a.seed), static_cast<unsigned>(a.seed >> 32)));
      const unsigned words[4] = {r0.x, r0.y, r0.z, r0.w};
#pragma unroll
      for (int i = 0; i < kN; ++i) {
        const unsigned bits = (words[i / 2] >> (16 * (i % 2))) & 0xFFFFu;
        const bool keep = bits >= kDropThreshold;
        acc.v[i] = keep ? acc.v[i] * kKeepScale : 0.0f;
        mask[v * kN + i] = keep ? 1 : 0;
      }
    } else if (a.mask_mode == MaskMode::kRead) {
#pragma unroll
      for (int i = 0; i < kN; ++i) acc.v[i] = mask[v * kN + i] != 0 ? acc.v[i] * kKeepScale : 0.0f;
    }
    for (int w = 0; w < a.writes; ++w) {
      Vec<T> y = acc;
#pragma unroll
      for (int i = 0; i < kN; ++i) y.v[i] += static_cast<float>(w);
      store_vec(out + static_cast<std::size_t>(w) * a.stride + v * kN, y);
    }
  }
}

// Writes only: every output element set to a constant.
template <typename T>
__global__ void fill_constant_kernel(MemoryLaunch a) {
  constexpr int kN = Vec<T>::kN;
  T* out = static_cast<T*>(a.out) + a.offset;
  const std::size_t vectors = a.count / kN;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  Vec<T> zero;
#pragma unroll
  for (int i = 0; i < kN; ++i) zero.v[i] = 0.0f;
  for (std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += step) {
    for (int w = 0; w < a.writes; ++w) store_vec(out + static_cast<std::size_t>(w) * a.stride + v * kN, zero);
  }
}

// Sum of squares over every input, one partial per thread block (a gradient norm's first pass).
template <typename T>
__global__ void reduction_kernel(MemoryLaunch a) {
  constexpr int kN = Vec<T>::kN;
  const T* in = static_cast<const T*>(a.in) + a.offset;
  const std::size_t vectors = a.count / kN;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += step) {
    for (int r = 0; r < a.reads; ++r) {
      const Vec<T> x = load_vec(in + static_cast<std::size_t>(r) * a.stride + v * kN);
#pragma unroll
      for (int i = 0; i < kN; ++i) sum = fmaf(x.v[i], x.v[i], sum);
    }
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) a.partials[blockIdx.x] = sum;
}

// One thread block per row: the mean of squares over the row's inputs, then the row's first
// input scaled by its reciprocal square root (RMSNorm), written to every output.
template <typename T>
__global__ void row_norm_kernel(MemoryLaunch a) {
  constexpr int kN = Vec<T>::kN;
  const std::size_t row = a.offset + static_cast<std::size_t>(blockIdx.x) * a.row_length;
  const T* in = static_cast<const T*>(a.in) + row;
  T* out = static_cast<T*>(a.out) + row;
  const std::size_t vectors = a.row_length / kN;
  float sum = 0.0f;
  for (std::size_t v = threadIdx.x; v < vectors; v += blockDim.x) {
    for (int r = 0; r < a.reads; ++r) {
      const Vec<T> x = load_vec(in + static_cast<std::size_t>(r) * a.stride + v * kN);
#pragma unroll
      for (int i = 0; i < kN; ++i) sum = fmaf(x.v[i], x.v[i], sum);
    }
  }
  const float scale = rsqrtf(block_sum(sum) / static_cast<float>(a.row_length) + kNormEpsilon);
  for (std::size_t v = threadIdx.x; v < vectors; v += blockDim.x) {
    Vec<T> y = load_vec(in + v * kN);
#pragma unroll
    for (int i = 0; i < kN; ++i) y.v[i] *= scale;
    for (int w = 0; w < a.writes; ++w) store_vec(out + static_cast<std::size_t>(w) * a.stride + v * kN, y);
  }
}

// One thread block per row: the maximum and the sum of exponentials over the row's inputs (one
// pass, online, Milakov and Gimelshein 2018), then exp(x - max) / sum of the first input
// written to every output.
template <typename T>
__global__ void row_softmax_kernel(MemoryLaunch a) {
  constexpr int kN = Vec<T>::kN;
  const std::size_t row = a.offset + static_cast<std::size_t>(blockIdx.x) * a.row_length;
  const T* in = static_cast<const T*>(a.in) + row;
  T* out = static_cast<T*>(a.out) + row;
  const std::size_t vectors = a.row_length / kN;
  float m = -INFINITY;
  float s = 0.0f;
  for (std::size_t v = threadIdx.x; v < vectors; v += blockDim.x) {
    for (int r = 0; r < a.reads; ++r) {
      const Vec<T> x = load_vec(in + static_cast<std::size_t>(r) * a.stride + v * kN);
#pragma unroll
      for (int i = 0; i < kN; ++i) {
        const float next = fmaxf(m, x.v[i]);
        s = s * __expf(m - next) + __expf(x.v[i] - next);
        m = next;
      }
    }
  }
  const float row_max = block_max(m);
  const float row_sum = block_sum(m == -INFINITY ? 0.0f : s * __expf(m - row_max));
  const float inverse = 1.0f / row_sum;
  for (std::size_t v = threadIdx.x; v < vectors; v += blockDim.x) {
    Vec<T> y = load_vec(in + v * kN);
#pragma unroll
    for (int i = 0; i < kN; ++i) y.v[i] = __expf(y.v[i] - row_max) * inverse;
    for (int w = 0; w < a.writes; ++w) store_vec(out + static_cast<std::size_t>(w) * a.stride + v * kN, y);
  }
}

template <typename T>
void launch_typed(const MemoryLaunch& a, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(a.grid_blocks > 0 ? a.grid_blocks : 1);
  switch (a.kind) {
    case MemoryKind::kElementwise:
    case MemoryKind::kDropout:
      elementwise_kernel<T><<<grid, kMemoryThreads, 0, stream>>>(a);
      break;
    case MemoryKind::kFill:
      fill_constant_kernel<T><<<grid, kMemoryThreads, 0, stream>>>(a);
      break;
    case MemoryKind::kReduction:
      reduction_kernel<T><<<grid, kMemoryThreads, 0, stream>>>(a);
      break;
    case MemoryKind::kRowNorm:
    case MemoryKind::kRowSoftmax: {
      const auto rows = static_cast<unsigned>(a.count / a.row_length);
      // Short rows get fewer threads: one 16-byte vector per thread at least.
      const std::size_t vectors = a.row_length / Vec<T>::kN;
      const std::size_t warps = (vectors + kWarp - 1) / kWarp;
      const auto threads = static_cast<unsigned>(
          warps * kWarp < static_cast<std::size_t>(kMemoryThreads) ? warps * kWarp : kMemoryThreads);
      if (a.kind == MemoryKind::kRowNorm) {
        row_norm_kernel<T><<<rows, threads, 0, stream>>>(a);
      } else {
        row_softmax_kernel<T><<<rows, threads, 0, stream>>>(a);
      }
      break;
    }
  }
}

__global__ void empty_kernel() {}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
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

void launch_memory(const MemoryLaunch& launch, cudaStream_t stream) {
  if (launch.element_bytes == 4) {
    launch_typed<float>(launch, stream);
  } else {
    launch_typed<__nv_bfloat16>(launch, stream);
  }
}

void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }

void launch_spin(unsigned long long ns, cudaStream_t stream) { spin_kernel<<<1, 1, 0, stream>>>(ns); }

cudaError_t last_launch_error() { return cudaGetLastError(); }

}  // namespace stepcast::validate
