// The roofline of one kernel: tensor-core GEMMs through tile and wave quantization (NVIDIA,
// "Matrix Multiplication Background User's Guide"), fused attention at FlashAttention's measured
// efficiency, memory-bound kernels at the achieved HBM bandwidth; plus per-kernel overheads.
#include "stepcast/cost/kernel_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kernel_tables.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::cost {

namespace {

namespace kt = kernel_tables;

/// Output tiles of one thread block that cuBLAS and CUTLASS choose between for tensor-core
/// GEMMs (CUTLASS's default tile shapes for SM80/SM90: 256x128 down to 64x64).
struct Tile {
  double m;
  double n;
};
constexpr std::array<Tile, 6> kTiles = {{{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};
/// Split-K factors: a GEMM with too few output tiles to fill the GPU splits its K loop over more
/// thread blocks and sums the partial tiles.
constexpr std::array<double, 5> kSplits = {1, 2, 4, 8, 16};
/// A split keeps at least this many of K per thread block, so each still runs a full pipeline.
constexpr double kMinSplitK = 256.0;
/// A tile's operands are reused tm*tn/(tm+tn) times per element loaded; 128x128 (64) is where
/// the SM's tensor cores stop waiting on shared memory (NVIDIA's guide: "larger tiles have more
/// data reuse"); smaller tiles lose throughput in proportion. Assumption, stated in the README.
constexpr double kFullRateReuse = 64.0;

double reuse_rate(const Tile& t) { return std::min(1.0, (t.m * t.n / (t.m + t.n)) / kFullRateReuse); }

/// The fraction of `sm_count` SMs busy over the waves `units` equal blocks of work take.
double wave_utilisation(double units, int sm_count) {
  const double waves = std::ceil(units / sm_count);
  return units / (waves * sm_count);
}

}  // namespace

FlopsPerSecond peak_rate(const topology::GpuSpec& gpu, plan::Precision precision) {
  switch (precision) {
    case plan::Precision::kFp32:
      return gpu.peak_fp32;
    case plan::Precision::kTf32:
      return gpu.peak_tf32;
    case plan::Precision::kBf16:
      return gpu.peak_bf16;
    case plan::Precision::kFp16:
      return gpu.peak_fp16;
    case plan::Precision::kFp8:
      return gpu.peak_fp8;
    case plan::Precision::kMxfp8:
      return gpu.peak_mxfp8;
    case plan::Precision::kNvfp4:
      return gpu.peak_nvfp4;
  }
  STEPCAST_UNREACHABLE("unknown precision");
}

double gemm_quantization(const GemmShape& g, int sm_count) {
  STEPCAST_ASSERT(sm_count >= 1, "gemm_quantization needs the GPU's SM count");
  if (g.m <= 0.0 || g.n <= 0.0 || g.k <= 0.0 || g.batch <= 0.0) return 1.0;
  double best = 0.0;
  for (const Tile& tile : kTiles) {
    const double tiles = g.batch * std::ceil(g.m / tile.m) * std::ceil(g.n / tile.n);
    for (const double split : kSplits) {
      if (split > 1.0 && (g.k / split < kMinSplitK || tiles >= sm_count)) break;
      const double k_per_block = std::ceil(g.k / split);
      const double units = tiles * split;
      const double waves = std::ceil(units / sm_count);
      // Useful multiply-adds over what the waves of padded tiles could have done.
      const double useful = g.batch * g.m * g.n * g.k;
      const double capacity = waves * sm_count * tile.m * tile.n * k_per_block;
      best = std::max(best, reuse_rate(tile) * useful / capacity);
    }
  }
  return best;
}

KernelParams default_kernel_params(const topology::GpuSpec& gpu, const plan::Plan& plan) {
  const std::optional<int> cc = nccl_compute_capability(gpu.name);
  const bool ampere = cc && (*cc == 80 || *cc == 86 || *cc == 89);
  const bool hopper = cc && *cc == 90;
  const bool blackwell = cc && (*cc == 100 || *cc == 103);
  if (!ampere && !hopper && !blackwell) {
    throw InputError(
        fmt::format("the compute model holds kernel figures for Ampere (A100), Hopper (H100, H200) and Blackwell "
                    "(B200, GB200) GPUs; \"{}\" is "
                    "{}: give measured figures with `stepcast calibrate` or use --achieved-fraction",
                    gpu.name,
                    cc ? fmt::format("compute capability {}.{}", *cc / 10, *cc % 10)
                       : std::string("not a GPU name stepcast knows")));
  }
  using plan::FlashKernel;
  const FlashKernel flash =
      plan.flash_kernel != FlashKernel::kNewest ? plan.flash_kernel : (hopper ? FlashKernel::kFa3 : FlashKernel::kFa2);
  if (plan.flash_attention && flash == FlashKernel::kFa3 && !hopper) {
    throw InputError(
        "--plan", "",
        fmt::format("flash=fa3: FlashAttention-3 runs on Hopper GPUs only, and {} is not one (use flash=fa2)",
                    gpu.name));
  }
  KernelParams p;
  p.gemm_efficiency = blackwell ? kt::kBlackwellGemmEfficiency
                      : hopper  ? kt::kHopperGemmEfficiency
                                : kt::kAmpereGemmEfficiency;
  p.memory_efficiency = kt::kMemoryEfficiency;
  if (flash == FlashKernel::kFa3) {
    p.attention_forward_efficiency = kt::kFlash3HopperForward;
    p.attention_backward_efficiency = kt::kFlash3HopperBackward;
  } else {
    // FlashAttention-2, and the Triton kernel at FA2's speed over Dao 2023's measured ratios.
    const double forward = hopper ? kt::kFlash2Hopper : blackwell ? kt::kAttentionBlackwell : kt::kFlash2AmpereForward;
    const double backward = hopper      ? kt::kFlash2Hopper
                            : blackwell ? kt::kAttentionBlackwell
                                        : kt::kFlash2AmpereBackward;
    const bool triton = flash == FlashKernel::kTriton;
    p.attention_forward_efficiency = triton ? forward / kt::kFlash2OverTritonForward : forward;
    p.attention_backward_efficiency = triton ? backward / kt::kFlash2OverTritonBackward : backward;
  }
  p.kernel_overhead = microseconds(kt::kKernelOverheadUs);
  p.host_overhead = microseconds(kt::kHostOverheadUs);
  p.source =
      fmt::format("{}; {}; {}; {}", kt::kGemmSource, kt::kMemorySource, kt::kAttentionSource, kt::kOverheadSource);
  return p;
}

KernelTime time_operator(const Operator& op, const topology::GpuSpec& gpu, plan::Precision precision,
                         const KernelParams& params) {
  KernelTime out;
  Seconds compute(0.0);
  double compute_efficiency = 0.0;
  switch (op.kind) {
    case OpKind::kGemm: {
      compute_efficiency = params.gemm_efficiency * gemm_quantization(op.gemm, gpu.sm_count);
      compute = op.flops / (gemm_peak(gpu, precision, op) * compute_efficiency);
      break;
    }
    case OpKind::kFusedAttention: {
      // FlashAttention runs in 16-bit whatever the GEMM precision; its thread blocks (a block of
      // queries of one head of one sequence) fill the SMs in waves.
      const bool forward = op.pass == OpPass::kForward || op.pass == OpPass::kRecompute;
      const double pass = forward ? params.attention_forward_efficiency : params.attention_backward_efficiency;
      compute_efficiency = pass * wave_utilisation(op.elements, gpu.sm_count);
      compute = op.flops / (gpu.peak_bf16 * compute_efficiency);
      break;
    }
    case OpKind::kMemory: {
      // Element-wise arithmetic runs on the CUDA cores at the fp32 vector rate.
      compute = op.flops / gpu.peak_fp32;
      break;
    }
  }
  const Seconds memory = op.bytes / (gpu.memory_bandwidth * params.memory_efficiency);
  const Seconds roofline = std::max(compute, memory);
  const Seconds overhead = params.kernel_overhead * op.kernels;
  out.gpu = roofline + overhead;
  out.host = params.host_overhead * op.kernels;
  if (overhead > roofline) {
    out.bound = Bound::kOverhead;
  } else {
    out.bound = compute >= memory ? Bound::kCompute : Bound::kMemory;
  }
  out.efficiency =
      op.kind == OpKind::kMemory ? (memory.value() > 0.0 ? params.memory_efficiency : 0.0) : compute_efficiency;
  return out;
}

std::string_view to_string(Bound bound) {
  switch (bound) {
    case Bound::kCompute:
      return "compute";
    case Bound::kMemory:
      return "memory";
    case Bound::kOverhead:
      return "overhead";
  }
  STEPCAST_UNREACHABLE("unknown bound");
}

}  // namespace stepcast::cost
