// The roofline of one kernel: tensor-core GEMMs through tile and wave quantization (NVIDIA,
// "Matrix Multiplication Background User's Guide"), fused attention at FlashAttention's measured
// efficiency, memory-bound kernels at the achieved HBM bandwidth; plus per-kernel overheads.
#include "stepcast/cost/kernel_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"

namespace stepcast::cost {

namespace {

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

/// A fused-attention pass's efficiency at size `x` over the one at the size its figure was
/// measured at (topology::AttentionScaling): by head dimension, a score's non-matmul work does not
/// grow with it (FlashAttention-2, section 3.1; FlashAttention-3 and -4 on the exponential's
/// share); by keys per query, a block of queries pays a fixed part besides streaming its keys
/// (FlashAttention-3 paper, Figures 5 and 7: every kernel's rate climbs with the sequence length
/// at a fixed number of thread blocks).
double scaling_factor(const topology::AttentionScalingPass& s, double x) {
  return (1.0 + s.fixed / s.measured_at) / (1.0 + s.fixed / x);
}

/// "; attention KERNEL by WHAT: x (1 + k/x0) / (1 + k/x), forward k = ... from x0 = ...,
/// backward ...: SOURCE", the sources line of one scaling block.
std::string scaling_source(std::string_view kernel, std::string_view what, const topology::AttentionScaling& s) {
  return fmt::format(
      "; attention {} by {}: x (1 + k/x0) / (1 + k/x), forward k = {:.4g} from x0 = {:g}, backward k = {:.4g} "
      "from x0 = {:g}: {}{}",
      kernel, what, s.forward.fixed, s.forward.measured_at, s.backward.fixed, s.backward.measured_at, s.source,
      s.borrowed_from.empty() ? "" : fmt::format(" (borrowed from {})", s.borrowed_from));
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

namespace {

/// The attention kernel a plan runs: the one it names, or the GPU file's default.
std::string attention_kernel(const topology::GpuSpec& gpu, const plan::Plan& plan) {
  switch (plan.flash_kernel) {
    case plan::FlashKernel::kFa2:
      return "fa2";
    case plan::FlashKernel::kFa3:
      return "fa3";
    case plan::FlashKernel::kTriton:
      return "triton";
    case plan::FlashKernel::kNewest:
      return gpu.kernels.default_attention;
  }
  STEPCAST_UNREACHABLE("unknown attention kernel");
}

/// A figure the prediction needs and the GPU file does not give: bad input, naming the file, the
/// JSON pointer the figure belongs at and what asks for it.
[[noreturn]] void missing_figure(const topology::GpuSpec& gpu, const std::string& pointer, const std::string& what) {
  throw InputError(gpu.file.empty() ? gpu.name : gpu.file, gpu.pointer + "/kernels" + pointer,
                   fmt::format("the {} gives no figure for {}, which the compute model needs: add it to the GPU file "
                               "(a cited value or a free parameter of the model, topologies/gpus/README.md)",
                               gpu.name, what));
}

const topology::GpuFigure& gemm_figure(const topology::GpuSpec& gpu, plan::Precision precision) {
  const std::string name(plan::to_string(precision));
  const auto it = gpu.kernels.gemm.find(name);
  if (it == gpu.kernels.gemm.end()) missing_figure(gpu, "/gemm/" + name, fmt::format("GEMMs in {}", name));
  return it->second;
}

/// Appends where a figure comes from to `out`; nothing when no one asked (predictions that explain
/// nothing, the planner's path, skip the formatting).
void add_source(std::string* out, std::string_view what, const topology::GpuFigure& f) {
  if (!out) return;
  *out += fmt::format("{}{}: {}{}{}{}", out->empty() ? "" : "; ", what, f.source,
                      f.parameter.empty() ? "" : fmt::format(" (free parameter {})", f.parameter),
                      f.scaled_by.empty() ? "" : fmt::format(" (times free parameter {})", f.scaled_by),
                      f.borrowed_from.empty() ? "" : fmt::format(" (borrowed from {})", f.borrowed_from));
}

/// The parameters of the figures the plan uses (default_kernel_params), and where each comes from
/// into `sources` when it is given.
KernelParams kernel_params_of(const topology::GpuSpec& gpu, const plan::Plan& plan, const ParameterValues* parameters,
                              std::string* sources) {
  const topology::GpuKernelFigures& k = gpu.kernels;
  // A free parameter's value: the calibration's, else the shipped one (`shipped`).
  const auto parameter = [parameters](const std::string& name, double shipped) {
    if (parameters && !name.empty()) {
      if (const auto it = parameters->find(name); it != parameters->end()) return it->second;
    }
    return shipped;
  };
  // A figure's value: the file's or its free parameter's, times the parameter scaling it, if any.
  const auto value = [&parameter](const topology::GpuFigure& f) {
    return parameter(f.parameter, f.value) * parameter(f.scaled_by, f.scale);
  };
  if (plan.moe_fused_mlp && gpu.compute_capability / 10 != 10) {
    // TE's fused grouped MLP checks get_device_compute_capability()[0] == 10 (is_supported).
    throw InputError(gpu.file.empty() ? gpu.name : gpu.file, gpu.pointer + "/compute_capability",
                     fmt::format("moe-fused-mlp=on runs Transformer Engine's CuTe DSL grouped MLP kernels, built for "
                                 "compute capability 10.x (B200, B300, GB200, GB300); the {} is {}",
                                 gpu.name,
                                 gpu.compute_capability > 0
                                     ? fmt::format("{}.{}", gpu.compute_capability / 10, gpu.compute_capability % 10)
                                     : std::string("of no stated compute capability")));
  }
  KernelParams p;
  const topology::GpuFigure& gemm = gemm_figure(gpu, plan.precision);
  p.gemm_efficiency = value(gemm);
  add_source(sources, fmt::format("GEMM {}", plan::to_string(plan.precision)), gemm);
  // A low-precision plan runs its other GEMMs (attention core, output layer) in bf16.
  const topology::GpuFigure& gemm16 =
      is_low_precision(plan.precision) ? gemm_figure(gpu, plan::Precision::kBf16) : gemm;
  p.gemm_efficiency_bf16 = value(gemm16);
  if (&gemm16 != &gemm) add_source(sources, "GEMM bf16", gemm16);
  if (!k.memory) missing_figure(gpu, "/memory", "the achieved fraction of its HBM bandwidth");
  p.memory_efficiency = value(*k.memory);
  add_source(sources, "HBM", *k.memory);
  if (plan.flash_attention) {
    const std::string kernel = attention_kernel(gpu, plan);
    const auto it = k.attention.find(kernel);
    if (it == k.attention.end()) {
      std::string known;
      for (const auto& [name, figures] : k.attention) known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
      throw InputError(gpu.file.empty() ? gpu.name : gpu.file, gpu.pointer + "/kernels/attention/" + kernel,
                       fmt::format("flash={}: the {} runs no {} attention kernel stepcast holds figures for (its "
                                   "kernels: {}; FlashAttention-3 runs on Hopper GPUs only); choose one of those",
                                   kernel, gpu.name, kernel, known.empty() ? "none" : known));
    }
    p.attention_forward_efficiency = value(it->second.forward);
    p.attention_backward_efficiency = value(it->second.backward);
    p.attention_head_dim = it->second.head_dim;
    p.attention_sequence = it->second.sequence;
    add_source(sources, fmt::format("attention {} forward", kernel), it->second.forward);
    add_source(sources, fmt::format("attention {} backward", kernel), it->second.backward);
    if (sources != nullptr && p.attention_head_dim)
      *sources += scaling_source(kernel, "head dimension", *p.attention_head_dim);
    if (sources != nullptr && p.attention_sequence)
      *sources += scaling_source(kernel, "keys per query", *p.attention_sequence);
  }
  if (!k.kernel_overhead) missing_figure(gpu, "/kernel_overhead", "the GPU time per kernel beyond its roofline");
  if (!k.host_overhead) missing_figure(gpu, "/host_overhead", "the host time per kernel launch");
  p.kernel_overhead = Seconds(value(*k.kernel_overhead));
  p.host_overhead = Seconds(value(*k.host_overhead));
  add_source(sources, "kernel overhead", *k.kernel_overhead);
  add_source(sources, "host overhead", *k.host_overhead);
  p.collective_overhead = Seconds(value(k.collective_overhead));
  add_source(sources, "collective overhead", k.collective_overhead);
  return p;
}

}  // namespace

KernelParams default_kernel_params(const topology::GpuSpec& gpu, const plan::Plan& plan,
                                   const ParameterValues* parameters) {
  return kernel_params_of(gpu, plan, parameters, nullptr);
}

std::string kernel_figure_sources(const topology::GpuSpec& gpu, const plan::Plan& plan) {
  std::string out;
  (void)kernel_params_of(gpu, plan, nullptr, &out);
  return out;
}

KernelTime time_operator(const Operator& op, const topology::GpuSpec& gpu, plan::Precision precision,
                         const KernelParams& params) {
  KernelTime out;
  Seconds compute(0.0);
  double compute_efficiency = 0.0;
  switch (op.kind) {
    case OpKind::kGemm: {
      // A low-precision plan's other GEMMs run in bf16 (gemm_peak), at bf16's efficiency.
      const bool bf16 = is_low_precision(precision) && !op.low_precision;
      compute_efficiency =
          (bf16 ? params.gemm_efficiency_bf16 : params.gemm_efficiency) * gemm_quantization(op.gemm, gpu.sm_count);
      compute = op.flops / (gemm_peak(gpu, precision, op) * compute_efficiency);
      break;
    }
    case OpKind::kFusedAttention: {
      // FlashAttention runs in 16-bit whatever the GEMM precision; its thread blocks (a block of
      // queries of one head of one sequence) fill the SMs in waves.
      const bool forward = op.pass == OpPass::kForward || op.pass == OpPass::kRecompute;
      double pass = forward ? params.attention_forward_efficiency : params.attention_backward_efficiency;
      const auto scale = [&](const std::optional<topology::AttentionScaling>& s, double x) {
        if (s && x > 0.0) pass *= scaling_factor(forward ? s->forward : s->backward, x);
      };
      scale(params.attention_head_dim, op.head_dim);
      scale(params.attention_sequence, op.gemm.n);
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
  out.host = params.host_overhead * op.host_calls.value_or(op.kernels);
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
