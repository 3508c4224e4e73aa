// The compute model's per-kernel overheads as stepcast-kernel-bench measures them with empty
// kernels: the GPU time between back-to-back kernels, and the host time of one launch call.
#include <fmt/format.h>

#include "stepcast/calibrate/kernel_bench.hpp"

namespace stepcast::calibrate {

std::optional<LaunchOverheadFit> fit_launch_overheads(const KernelBench& bench) {
  if (!bench.launch) return std::nullopt;
  const LaunchTiming& l = *bench.launch;
  LaunchOverheadFit f;
  f.kernel_overhead = l.gpu_per_kernel;
  f.host_overhead = l.host_per_launch;
  f.kernel_source = fmt::format("stepcast-kernel-bench {}: {} empty kernels back to back on one stream of {}, {}",
                                bench.file, l.kernels, bench.gpu_name, format_seconds(l.gpu_per_kernel));
  // The CUDA runtime's own cost: a framework issuing the kernels (eager PyTorch) adds its own.
  f.host_source = fmt::format(
      "stepcast-kernel-bench {}: {} launch calls of an empty kernel from C++ (the CUDA runtime alone, no "
      "framework) on the host of {}, {} each",
      bench.file, l.launches, bench.gpu_name, format_seconds(l.host_per_launch));
  return f;
}

}  // namespace stepcast::calibrate
