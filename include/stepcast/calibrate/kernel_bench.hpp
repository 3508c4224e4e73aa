// stepcast-kernel-bench's measurements of one GPU (schema in validate/README.md): the GEMMs of a
// transformer layer per precision, and the achieved fraction of the datasheet peak they imply.
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

/// The achieved fraction of the datasheet peak for one precision.
struct ComputeFractionFit {
  std::string precision;
  int gemms = 0;
  Flops flops;               ///< summed over the precision's GEMMs
  Seconds time;              ///< idem
  FlopsPerSecond achieved;   ///< flops / time: the rate of the layer's GEMMs run back to back
  FlopsPerSecond peak;       ///< the topology GPU's datasheet figure
  double fraction = 0.0;     ///< achieved / peak
  double min_gemm_fraction = 0.0;  ///< the slowest GEMM's own rate / peak (small GEMMs run further from peak)
  double max_gemm_fraction = 0.0;
  std::string source;
};

/// compute_fraction[p] = (sum of flops / sum of time) / peak[p] for every precision `bench` ran,
/// using the sums rather than a mean of rates because they reproduce the measured time of the
/// layer's GEMMs exactly. InputError when the bench ran on a different GPU model than `gpu`
/// (the model token of gpu.name, e.g. "H100", must appear in the bench's GPU name), when the
/// topology has no peak for a measured precision, or when a measured rate exceeds the peak (a
/// wrong topology or datasheet figure, not a fraction).
std::vector<ComputeFractionFit> fit_compute_fractions(const KernelBench& bench, const topology::GpuSpec& gpu);

/// InputError unless the model token of gpu.name ("H100" of "H100-SXM5-80GB") appears in the
/// bench's GPU name ("NVIDIA H100 80GB HBM3"): form factor and memory are spelled differently.
void require_same_gpu_model(const KernelBench& bench, const topology::GpuSpec& gpu);

/// One measured GEMM against the model's time for it: flops / (peak x achieved fraction).
struct ComparedGemm {
  GemmTiming gemm;
  double fraction = 0.0;  ///< the calibration's for the precision, else stepcast's default
  Seconds predicted;
  double error_pct = 0.0;  ///< (predicted - measured) / measured x 100
};

struct GemmComparison : ErrorSummary {
  std::vector<ComparedGemm> points;
};

/// Predicts every GEMM of `bench` as the step model times compute, on `gpu`'s peaks with the
/// calibration's compute fraction (else cost::default_achieved_fraction), and compares.
GemmComparison compare_gemms(const KernelBench& bench, const topology::GpuSpec& gpu, const cost::Calibration& calibration);

}  // namespace stepcast::calibrate
