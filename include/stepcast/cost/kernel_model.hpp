// Time of one operator on one GPU: a roofline (FLOPs at the tensor-core peak times a GEMM
// efficiency from tile and wave quantization, or bytes at the achieved HBM bandwidth) plus a
// per-kernel overhead on the GPU, and the host time the framework spends launching it. The free
// parameters are named in KernelParams; their defaults come from the GPU's file of the catalogue
// (topologies/gpus/), each with its source or the free parameter it is.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

/// The compute model's free parameters for one GPU and precision. Each default comes from a
/// cited kernel-level measurement or is a free parameter fitted on named data (the GPU file says which);
/// `stepcast calibrate` replaces them with fitted figures.
struct KernelParams {
  /// Large, well-shaped GEMMs reach this fraction of the datasheet tensor peak (the maximum
  /// achievable matmul FLOP/s); tile and wave quantization lower it for other shapes.
  double gemm_efficiency = 0.0;
  /// The same for the GEMMs a low-precision plan runs in bf16 (attention core, output layer);
  /// equal to gemm_efficiency in a 16- or 32-bit plan.
  double gemm_efficiency_bf16 = 0.0;
  /// Achieved fraction of the datasheet HBM bandwidth for memory-bound kernels.
  double memory_efficiency = 0.0;
  /// Fused attention: fraction of the 16-bit tensor peak its forward and backward reach (at the
  /// head dimension and keys per query of their figures).
  double attention_forward_efficiency = 0.0;
  double attention_backward_efficiency = 0.0;
  /// ... at the head dimension these were measured at, and how they move with it (absent: not at
  /// all; topology::AttentionScaling).
  std::optional<topology::AttentionScaling> attention_head_dim;
  /// ... and with the keys each query attends (absent: not at all).
  std::optional<topology::AttentionScaling> attention_sequence;
  /// GPU time every kernel costs beyond its roofline time (launch, ramp-up and drain).
  Seconds kernel_overhead;
  /// Host (CPU) time the framework spends issuing one kernel; a stream of small kernels runs at
  /// this pace when the GPU finishes them faster.
  Seconds host_overhead;
  /// Time every collective of a step costs beyond NCCL's model of it (nccl-tests times calls
  /// back to back, which hides it): the framework's stream synchronisation and launch.
  Seconds collective_overhead;
  std::string source;  ///< a calibration that replaced figures, if any (kernel_figure_sources names the others)
};

/// Values of the model's free parameters (topology/model_parameters.hpp) that replace the shipped
/// defaults, by name, in SI units.
using ParameterValues = std::map<std::string, double, std::less<>>;

/// The datasheet peak of the GPU in a precision (tensor-core rates; fp32 without).
FlopsPerSecond peak_rate(const topology::GpuSpec& gpu, plan::Precision precision);

/// The default parameters for `gpu` in the plan's precision with its attention kernel, from the
/// GPU file's kernel figures. InputError naming the file and the figure when it gives none that
/// the plan needs (a precision, an attention kernel such as FlashAttention-3 before Hopper).
/// `parameters`, when given, replaces the shipped value of every figure that names one of them.
KernelParams default_kernel_params(const topology::GpuSpec& gpu, const plan::Plan& plan,
                                   const ParameterValues* parameters = nullptr);

/// Where each figure default_kernel_params reads for the plan comes from (its GPU file's sources,
/// the free parameters and borrowed figures named), for --explain.
std::string kernel_figure_sources(const topology::GpuSpec& gpu, const plan::Plan& plan);

/// Why an operator takes the time it does.
enum class Bound { kCompute, kMemory, kOverhead };

struct KernelTime {
  Seconds gpu;   ///< on the GPU's stream: roofline + kernel overhead
  Seconds host;  ///< on the CPU that launches it
  Bound bound = Bound::kCompute;
  double efficiency = 0.0;  ///< GEMM and attention: achieved fraction of the peak; memory: of HBM bandwidth
};

/// The tile and wave quantization factor of a GEMM on a GPU with `sm_count` SMs: the best,
/// over the output tiles cuBLAS/CUTLASS choose between and split-K factors, of the fraction of
/// SM time doing useful multiply-adds (NVIDIA, "Matrix Multiplication Background User's Guide":
/// tile quantization pads M and N to whole tiles; wave quantization leaves the last wave of
/// tiles partly empty). 1 for a large, tile-aligned GEMM.
double gemm_quantization(const GemmShape& gemm, int sm_count);

/// The time of `op` on `gpu` in `precision` (GEMMs at that precision's peak; attention at the
/// 16-bit peak; memory-bound kernels at the HBM bandwidth).
KernelTime time_operator(const Operator& op, const topology::GpuSpec& gpu, plan::Precision precision,
                         const KernelParams& params);

std::string_view to_string(Bound bound);

}  // namespace stepcast::cost
