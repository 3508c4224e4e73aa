// The compute model's default parameters per GPU architecture, each with where it comes from.
// One inspectable table, as NCCL keeps its tuning constants (STYLE.md B9.5): nothing below is
// tuned to a training run; the two overheads were fitted on named data, said so where they are.
#pragma once

#include <string_view>

namespace stepcast::cost::kernel_tables {

/// Maximum achievable matmul FLOP/s over datasheet peak, BF16 inputs, best shape of a search
/// (Stas Bekman, ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS
/// comparison table", CUDA 12.1): A100 SXM 267.9 of 312 TFLOP/s, H100 SXM 792.1 of 989 TFLOP/s.
inline constexpr double kAmpereGemmEfficiency = 267.9 / 312.0;
inline constexpr double kHopperGemmEfficiency = 792.1 / 989.0;
/// Blackwell (B200, GB200): no maximum-achievable-matmul measurement is held, so Hopper's fraction
/// stands in (an assumption, stated in the README), as the HBM fraction below stands in for Hopper.
inline constexpr double kBlackwellGemmEfficiency = kHopperGemmEfficiency;
inline constexpr std::string_view kGemmSource =
    "maximum achievable matmul FLOP/s (ml-engineering MAMF table, BF16, CUDA 12.1): A100 SXM 267.9/312, H100 SXM "
    "792.1/989 TFLOP/s; "
    "the 16-bit figure also stands for tf32/fp32/fp8/mxfp8/nvfp4, and Hopper's for Blackwell, for which no such "
    "measurement is held";

/// Achieved HBM bandwidth: a streaming read kernel on an A100 80GB SXM reaches 1.80 of 2.04 TB/s
/// (88%, Nsight Compute agreeing), and the GTC talk cited there found about 90% the best any
/// kernel reaches (NVIDIA developer forums, "Trouble to Reach Peak Bandwidth of A100", thread
/// 339083). No Hopper measurement is held: the same fraction is used there. (Fitted together with
/// the overheads below on vTrain's 2-GPU rows, it comes out at 0.866: the data agree.)
inline constexpr double kMemoryEfficiency = 0.88;
inline constexpr std::string_view kMemorySource =
    "HBM: 1.80 of 2.04 TB/s on A100 80GB (NVIDIA developer forums thread 339083)";

/// FlashAttention-2 on A100 (Dao 2023, arXiv:2307.08691): "50-73% of the theoretical maximum
/// FLOPs/s", the forward reaching up to 230 TFLOP/s (73%) and the backward, the harder pass,
/// the lower end. On H100 the same code reaches up to 335 TFLOP/s forward + backward (34% of
/// 989, section 4.1, Fig. 7).
inline constexpr double kFlash2AmpereForward = 0.73;
inline constexpr double kFlash2AmpereBackward = 0.50;
inline constexpr double kFlash2Hopper = 335.0 / 989.0;
/// Fused attention on Blackwell (FlashAttention-3 runs on Hopper only): no measurement is held,
/// so FlashAttention-2's fraction on H100 stands in (an assumption, stated in the README).
inline constexpr double kAttentionBlackwell = kFlash2Hopper;
/// FlashAttention-3 on H100 (Shah et al. 2024, arXiv:2407.08608): FP16 forward up to 740 TFLOP/s
/// (75%); the backward 1.5-1.75x FlashAttention-2's, taken at 1.5x.
inline constexpr double kFlash3HopperForward = 740.0 / 989.0;
inline constexpr double kFlash3HopperBackward = 1.5 * kFlash2Hopper;
/// FlashAttention in Triton (the kernel MPT's attn_impl: triton runs): Dao 2023, section 4.1,
/// "FlashAttention-2 is around 1.3-1.5x faster than FlashAttention in Triton in the forward pass
/// and around 2x faster in the backward pass"; the forward's range taken at its middle.
inline constexpr double kFlash2OverTritonForward = 1.4;
inline constexpr double kFlash2OverTritonBackward = 2.0;
inline constexpr std::string_view kAttentionSource =
    "FlashAttention-2 (Dao 2023: 50-73% of A100 peak; 335 TFLOP/s on H100), FlashAttention-3 (Shah et al. 2024: 740 "
    "TFLOP/s forward, "
    "backward 1.5x FA2), Triton's at 1/1.4 and 1/2 of FA2 (Dao 2023)";

/// GPU time per kernel beyond its roofline, and host time per kernel launch: the least-squares
/// fit on log throughput of the 240 2-GPU rows of the vTrain set (Megatron-DeepSpeed iterations on
/// A100s, tests/data/runs/vtrain_single_node_a100.csv; its 1,200 4- and 8-GPU rows held out), all
/// other parameters at the values above, which `stepcast calibrate --runs
/// tests/data/runs/vtrain_single_node_a100.csv --fit-on gpus=2` reproduces. Both carry what the
/// list leaves out of that framework (views made contiguous, the random numbers of dropout,
/// autograd's bookkeeping); the host figure is Megatron-DeepSpeed's eager PyTorch on that
/// machine's CPU, and other frameworks and CPUs differ.
inline constexpr double kKernelOverheadUs = 32.1;
inline constexpr double kHostOverheadUs = 69.4;
inline constexpr std::string_view kOverheadSource =
    "kernel and host overheads fitted on vTrain's 2-GPU rows (Megatron-DeepSpeed, A100); 4- and 8-GPU rows held out";

}  // namespace stepcast::cost::kernel_tables
