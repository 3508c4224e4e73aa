// stepcast-kernel-bench's measurements of one GPU (schema in validate/README.md): the GEMMs of a
// transformer layer per precision, and the GEMM efficiency of the compute model they imply.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// One timed GEMM, C[m, n] = A[m, k] B[k, n].
struct GemmTiming {
  std::string name;       ///< "qkv.fwd", "mlp_down.wgrad", ...
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string precision;  ///< "tf32", "bf16", "fp16", "fp8"
  Flops flops;            ///< 2 m n k
  Seconds time;           ///< average of one GEMM
};

/// Everything calibration needs from one stepcast-kernel-bench file.
struct KernelBench {
  std::string file;
  std::string gpu_name;                         ///< as the CUDA driver names it, "NVIDIA H100 80GB HBM3"
  std::string compute_capability;               ///< "9.0"
  std::int64_t tokens = 0;                      ///< sequence x micro-batch of the layer timed
  std::vector<GemmTiming> gemms;                ///< in file order
  std::map<std::string, std::string> skipped;   ///< precision -> why it was not run
};

/// Whether `text` (a whole file) is stepcast-kernel-bench output: JSON whose "tool" says so.
bool is_kernel_bench_json(const std::string& text);

/// Reads stepcast-kernel-bench JSON text that came from `origin`. Every GEMM's "flops" must be
/// 2 m n k (a file whose figures disagree with its own shapes is not trusted); bad input throws
/// InputError with the file and JSON pointer.
KernelBench parse_kernel_bench_json(const std::string& text, const std::string& origin);

/// The asymptotic GEMM efficiency of one precision (cost::KernelParams::gemm_efficiency).
struct GemmEfficiencyFit {
  std::string precision;
  int gemms = 0;
  Flops flops;               ///< summed over the precision's GEMMs
  Seconds time;              ///< idem, measured
  Seconds ideal;             ///< sum of FLOPs / (peak x tile/wave quantization): the time at efficiency 1
  Seconds busy;              ///< sum of measured time minus the kernel overhead
  FlopsPerSecond peak;       ///< the topology GPU's datasheet figure
  double efficiency = 0.0;   ///< ideal / busy
  double min_gemm_efficiency = 0.0;  ///< the same ratio for single GEMMs: the spread the model leaves
  double max_gemm_efficiency = 0.0;
  std::string source;
};

/// The time a measured GEMM would take at the full datasheet `peak` with its tile and wave
/// quantization on `gpu` (cost::gemm_quantization): FLOPs / (peak x quantization).
Seconds quantized_peak_time(const GemmTiming& gemm, const topology::GpuSpec& gpu, FlopsPerSecond peak);

/// For every precision `bench` ran: efficiency = sum of quantized_peak_time / sum of (measured
/// time - kernel_overhead), the value for which the compute model (cost::time_operator on a
/// compute-bound GEMM) reproduces the GEMMs' summed time exactly. InputError when the bench ran
/// on a different GPU model than `gpu` (the model token of gpu.name, e.g. "H100", must appear
/// in the bench's GPU name), when the topology has no peak for a measured precision, or when the
/// efficiency comes out above 1 (a wrong topology or datasheet figure).
std::vector<GemmEfficiencyFit> fit_gemm_efficiencies(const KernelBench& bench, const topology::GpuSpec& gpu, Seconds kernel_overhead);

/// InputError unless the model token of gpu.name ("H100" of "H100-SXM5-80GB") appears in the
/// bench's GPU name ("NVIDIA H100 80GB HBM3"): form factor and memory are spelled differently.
void require_same_gpu_model(const KernelBench& bench, const topology::GpuSpec& gpu);

/// One measured GEMM against the compute model's time for it (cost::time_operator).
struct ComparedGemm {
  GemmTiming gemm;
  double efficiency = 0.0;  ///< achieved fraction of peak the model gives this GEMM (efficiency x quantization)
  Seconds predicted;
  double error_pct = 0.0;  ///< (predicted - measured) / measured x 100
};

struct GemmComparison : ErrorSummary {
  std::vector<ComparedGemm> points;
};

/// Predicts every GEMM of `bench` as the step model times compute (cost::time_operator with the
/// GPU's kernel parameters, the calibration's where it has them), and compares.
GemmComparison compare_gemms(const KernelBench& bench, const topology::GpuSpec& gpu, const cost::Calibration& calibration);

}  // namespace stepcast::calibrate
