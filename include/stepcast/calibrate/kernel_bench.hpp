// stepcast-kernel-bench's measurements of one GPU (schema in validate/README.md): every operator
// of the operator lists it was given (`stepcast operators`), timed, and the launch overhead of an
// empty kernel; the compute-model parameters they imply, and the model's error on each.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// One operator of a list, as the bench read and timed it.
struct TimedOperator {
  int list = 0;      ///< index into KernelBench::lists
  std::string name;  ///< "qkv projection", "softmax", ...
  cost::OpPart part = cost::OpPart::kLayer;
  cost::OpPass pass = cost::OpPass::kForward;
  cost::OpKind kind = cost::OpKind::kGemm;
  std::string precision;  ///< "bf16", "fp8", ...
  cost::GemmShape gemm;   ///< GEMMs and fused attention
  double elements = 0.0;  ///< memory-bound operators; fused attention: its thread blocks
  Flops flops;
  Bytes bytes;                  ///< read + written, as the model prices it (the bench's kernel moves the same)
  double kernels = 1.0;         ///< launches
  std::string pattern;          ///< memory-bound: the bench kernel's pattern ("row-norm", ...)
  std::optional<Seconds> time;  ///< one run of the operator (all its launches); none when skipped
  std::string skipped;          ///< why it was not timed

  /// The operator as cost::time_operator takes it; its name views this object's `name`.
  [[nodiscard]] cost::Operator op() const;
};

/// Empty kernels: what a kernel costs beyond its work.
struct LaunchTiming {
  Seconds gpu_per_kernel;  ///< GPU time per empty kernel, launched back to back with the host ahead
  int kernels = 0;
  Seconds host_per_launch;  ///< host time per launch call (the CUDA runtime's, without a framework)
  int launches = 0;
};

/// Everything calibration needs from one stepcast-kernel-bench file.
struct KernelBench {
  std::string file;
  std::string gpu_name;                  ///< as the CUDA driver names it, "NVIDIA H100 80GB HBM3"
  std::string compute_capability;        ///< "9.0"
  std::vector<std::string> lists;        ///< each operator list's title ("Operators of one micro-batch: ...")
  std::vector<TimedOperator> operators;  ///< in file order
  std::optional<LaunchTiming> launch;
};

/// Whether `text` (a whole file) is stepcast-kernel-bench output: JSON whose "tool" says so.
bool is_kernel_bench_json(const std::string& text);

/// Reads stepcast-kernel-bench JSON text (schema_version 2) that came from `origin`. A GEMM's
/// "flops" must be 2 x batch x m x n x k (a file whose figures disagree with its own shapes is
/// not trusted); bad input throws InputError with the file and JSON pointer.
KernelBench parse_kernel_bench_json(const std::string& text, const std::string& origin);

/// InputError unless the model token of gpu.name ("H100" of "H100-SXM5-80GB") appears in the
/// bench's GPU name ("NVIDIA H100 80GB HBM3"): form factor and memory are spelled differently.
void require_same_gpu_model(const KernelBench& bench, const topology::GpuSpec& gpu);

/// The asymptotic GEMM efficiency of one precision (cost::KernelParams::gemm_efficiency).
struct GemmEfficiencyFit {
  std::string precision;
  int gemms = 0;                     ///< timed GEMMs the fit used
  int memory_bound = 0;              ///< timed GEMMs left out: memory-bound at the datasheet figures
  Flops flops;                       ///< summed over the precision's fitted GEMMs (batched ones too)
  Seconds time;                      ///< idem, measured
  Seconds ideal;                     ///< sum of FLOPs / (peak x tile/wave quantization): the time at efficiency 1
  Seconds busy;                      ///< sum of measured time minus the kernel overheads
  FlopsPerSecond peak;               ///< the topology GPU's datasheet figure
  double efficiency = 0.0;           ///< ideal / busy
  double min_gemm_efficiency = 0.0;  ///< the same ratio for single GEMMs: the spread the model leaves
  double max_gemm_efficiency = 0.0;
  std::string source;
};

/// The time an operator's GEMM would take at the full datasheet `peak` with its tile and wave
/// quantization on `gpu` (cost::gemm_quantization): FLOPs / (peak x quantization).
Seconds quantized_peak_time(const TimedOperator& gemm, const topology::GpuSpec& gpu, FlopsPerSecond peak);

/// For every precision of the bench's timed GEMMs that the model holds compute-bound (their
/// quantized_peak_time outlasts their bytes at the datasheet bandwidth): efficiency = sum of
/// quantized_peak_time / sum of (measured time - launches x kernel_overhead), the value for
/// which the compute model (cost::time_operator on a compute-bound GEMM) reproduces their summed
/// time exactly. A precision with no such GEMM gets no fit.
/// InputError when the bench ran on a different GPU model than `gpu`, the topology has no peak
/// for a measured precision, or the efficiency comes out above 1 (a wrong datasheet figure).
std::vector<GemmEfficiencyFit> fit_gemm_efficiencies(const KernelBench& bench, const topology::GpuSpec& gpu,
                                                     Seconds kernel_overhead);

/// The achieved fraction of the datasheet HBM bandwidth (cost::KernelParams::memory_efficiency).
struct MemoryEfficiencyFit {
  int operators = 0;
  Bytes bytes;              ///< summed over the timed memory-bound operators
  Seconds time;             ///< idem, measured
  Seconds ideal;            ///< sum of bytes / datasheet bandwidth
  Seconds busy;             ///< sum of measured time minus the kernel overheads
  double efficiency = 0.0;  ///< ideal / busy
  double min_operator_efficiency = 0.0;
  double max_operator_efficiency = 0.0;
  std::string source;
};

/// From the bench's timed memory-bound operators that the model holds memory-bound (their bytes
/// at the datasheet bandwidth outlast their FLOPs at the fp32 rate): efficiency = sum of bytes /
/// bandwidth over sum of (measured time - launches x kernel_overhead). None when no such
/// operator was timed. InputError on another GPU model or an efficiency above 1.
std::optional<MemoryEfficiencyFit> fit_memory_efficiency(const KernelBench& bench, const topology::GpuSpec& gpu,
                                                         Seconds kernel_overhead);

/// The launch overheads the bench measured (cost::KernelParams::kernel_overhead and
/// host_overhead), with what they were measured on. None when the file has no launch section.
struct LaunchOverheadFit {
  Seconds kernel_overhead;
  Seconds host_overhead;
  std::string kernel_source;
  std::string host_source;
};
std::optional<LaunchOverheadFit> fit_launch_overheads(const KernelBench& bench);

/// Which family an operator's error is summarised in.
enum class OperatorFamily { kGemm, kBatchedGemm, kMemory, kAttention, kLaunch };
inline constexpr int kOperatorFamilies = 5;
std::string_view to_string(OperatorFamily family);

/// One timed operator (or the empty kernel, family kLaunch) against the model's time for it.
struct ComparedOperator {
  const TimedOperator* measured = nullptr;  ///< into the bench; null for the empty kernel
  OperatorFamily family = OperatorFamily::kGemm;
  Seconds measured_time;
  Seconds predicted;
  cost::Bound bound = cost::Bound::kCompute;
  double efficiency = 0.0;  ///< the model's achieved fraction of peak (GEMMs, attention) or of HBM bandwidth
  double error_pct = 0.0;   ///< (predicted - measured) / measured x 100
};

struct FamilySummary : ErrorSummary {
  int points = 0;
  int skipped = 0;  ///< the bench's operators of the family it did not time
};

struct OperatorComparison : ErrorSummary {
  std::vector<ComparedOperator> points;                     ///< timed operators in file order, then the empty kernel
  std::array<FamilySummary, kOperatorFamilies> families{};  ///< by OperatorFamily
};

/// Predicts every timed operator of `bench` as the step model times it (cost::time_operator
/// with the GPU's kernel parameters for the operator's precision, the calibration's where it has
/// them; FlashAttention at the GPU's newest version), and the empty kernel as one kernel
/// overhead; compares each with its measured time.
OperatorComparison compare_operators(const KernelBench& bench, const topology::GpuSpec& gpu,
                                     const cost::Calibration& calibration);

/// The family an operator is summarised in: kGemm (batch 1), kBatchedGemm, kMemory, kAttention.
OperatorFamily family_of(const TimedOperator& op);

}  // namespace stepcast::calibrate
