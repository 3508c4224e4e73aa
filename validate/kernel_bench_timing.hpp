// How stepcast-kernel-bench times one run of an operator on GPU 0: from a cold L2, with the GPU
// already busy when the run is enqueued, each run between its own pair of CUDA events.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cuda_check.hpp"
#include "kernel_bench_kernels.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::validate {

/// The GPU and what every measurement shares.
struct Device {
  cudaStream_t stream{};
  cudaEvent_t start{};
  cudaEvent_t stop{};
  cublasLtHandle_t lt{};
  void* workspace = nullptr;  ///< cuBLASLt's
  void* flush = nullptr;      ///< overwritten before each timed run
  std::size_t flush_bytes = 0;
  int sm_count = 0;
  int compute_capability = 0;  ///< major x 10 + minor
};

struct Settings {
  int warmup = 2;             ///< untimed runs first
  int iters = 10;             ///< timed runs at most
  double max_seconds = 0.05;  ///< timed runs stop at about this much GPU time (at least kMinIters)
};

struct Timing {
  double time_s = 0.0;  ///< median of the timed runs
  int iters = 0;
};

/// The fewest timed runs of an operator, whatever its length.
inline constexpr int kMinIters = 3;
/// The spin before each timed run: longer than the host takes to enqueue an operator's launches
/// (a cuBLASLt call or a few kernels, microseconds), so the GPU never waits on the host.
inline constexpr unsigned long long kSpinNs = 100000;

/// Times `run` (one run of an operator: all its launches). Before each timed run the L2 is
/// overwritten (a memset of twice its size), so inputs come from HBM as they do for a kernel
/// whose inputs were written long before (Triton's do_bench does the same); then a spin kernel
/// keeps the GPU busy while the host enqueues the run between two events. Returns the median.
template <typename Run>
Timing time_cold(const Device& d, const Settings& s, Run run) {
  for (int i = 0; i < s.warmup; ++i) run();
  std::vector<double> samples;
  int want = s.iters;
  for (int i = 0; i < want; ++i) {
    STEPCAST_CUDA_CHECK(cudaMemsetAsync(d.flush, i & 0xff, d.flush_bytes, d.stream));
    launch_spin(kSpinNs, d.stream);
    STEPCAST_CUDA_CHECK(last_launch_error());
    STEPCAST_CUDA_CHECK(cudaEventRecord(d.start, d.stream));
    run();
    STEPCAST_CUDA_CHECK(cudaEventRecord(d.stop, d.stream));
    STEPCAST_CUDA_CHECK(cudaEventSynchronize(d.stop));
    float ms = 0.0f;
    STEPCAST_CUDA_CHECK(cudaEventElapsedTime(&ms, d.start, d.stop));
    samples.push_back(static_cast<double>(ms) / unit::kKilo);
    if (i == 0) {
      const double fit = s.max_seconds / std::max(samples[0], 1e-9);
      want = std::clamp(static_cast<int>(std::min(fit, 1e6)), std::min(kMinIters, s.iters), s.iters);
    }
  }
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
  return {median, static_cast<int>(n)};
}

}  // namespace stepcast::validate
