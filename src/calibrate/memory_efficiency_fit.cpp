// The compute model's HBM efficiency from measured memory-bound operators: each one's time is
// modelled as bytes / (datasheet bandwidth x efficiency) + its launches' kernel overhead, and
// the efficiency that reproduces their summed measured time is solved for.
#include <fmt/format.h>

#include <algorithm>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {

std::optional<MemoryEfficiencyFit> fit_memory_efficiency(const KernelBench& bench, const topology::GpuSpec& gpu,
                                                         Seconds kernel_overhead) {
  require_same_gpu_model(bench, gpu);
  if (!(gpu.memory_bandwidth.value() > 0.0)) {
    throw InputError(
        bench.file, {},
        fmt::format("memory-bound operators were measured but the topology's {} has no memory_bandwidth", gpu.name));
  }
  MemoryEfficiencyFit f;
  for (const TimedOperator& op : bench.operators) {
    if (op.kind != cost::OpKind::kMemory || !op.time) continue;
    const Seconds ideal = op.bytes / gpu.memory_bandwidth;
    // Only what the model itself holds memory-bound: an operator whose CUDA-core FLOPs outlast
    // its bytes says nothing about the HBM.
    if (!(ideal.value() > 0.0) || op.flops / gpu.peak_fp32 > ideal) continue;
    const Seconds busy = *op.time - kernel_overhead * op.kernels;
    const double efficiency = ideal / busy;
    f.min_operator_efficiency = f.operators == 0 ? efficiency : std::min(f.min_operator_efficiency, efficiency);
    f.max_operator_efficiency = std::max(f.max_operator_efficiency, efficiency);
    f.bytes += op.bytes;
    f.time += *op.time;
    f.ideal += ideal;
    f.busy += busy;
    ++f.operators;
  }
  if (f.operators == 0) return std::nullopt;
  f.efficiency = f.busy.value() > 0.0 ? f.ideal / f.busy : 2.0;
  const double achieved_GBps = (f.bytes / f.time).value() / unit::kGiga;
  if (f.efficiency > 1.0) {
    throw InputError(
        bench.file, {},
        fmt::format(
            "memory-bound operators moved {:.0f} GB/s, above what the topology's {} memory_bandwidth of {:.0f} GB/s "
            "allows after the kernel overheads: check the topology's gpu.memory_bandwidth",
            achieved_GBps, gpu.name, gpu.memory_bandwidth.value() / unit::kGiga));
  }
  f.source = fmt::format(
      "stepcast-kernel-bench {}: {} memory-bound operators of {} operator list(s) on {}, {:.0f} GB/s of {:.0f}",
      bench.file, f.operators, bench.lists.size(), bench.gpu_name, achieved_GBps,
      gpu.memory_bandwidth.value() / unit::kGiga);
  return f;
}

}  // namespace stepcast::calibrate
