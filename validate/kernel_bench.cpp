// stepcast-kernel-bench: times the cuBLASLt GEMMs of one transformer layer (QKV, attention output
// and MLP projections; forward, dgrad and wgrad) in tf32, bf16, fp16 and fp8, and device memory
// bandwidth, on GPU 0; writes JSON (validate/README.md). With no GPU it exits 77 (CTest: skip).
#include <cublasLt.h>
#include <cublas_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "kernel_bench_kernels.hpp"
#include "stepcast/core/units.hpp"

// Fail fast on a cuBLAS/cuBLASLt error, as STEPCAST_CUDA_CHECK does for the runtime.
#define STEPCAST_CUBLAS_CHECK(call)                                             \
  do {                                                                          \
    const cublasStatus_t stepcast_st_ = (call);                                 \
    if (stepcast_st_ != CUBLAS_STATUS_SUCCESS) {                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cublasLtGetStatusString(stepcast_st_));                      \
      std::exit(1);                                                             \
    }                                                                           \
  } while (false)

namespace {

using stepcast::validate::Elem;

constexpr int kSkip = 77;
constexpr int kBadInput = 2;
constexpr const char* kTool = "stepcast-kernel-bench";
constexpr int kSchemaVersion = 1;
// cuBLASLt's recommended workspace on Hopper (cuBLAS docs, "cublasSetWorkspace"); enough on Ampere.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
// Each bandwidth copy moves this much (capped at a quarter of free memory): large enough that
// launch overhead and the L2 (50-60 MB on H100/H200) do not count.
constexpr std::size_t kCopyBytes = std::size_t{1} << 30;
// cudaDeviceProp major*10+minor below which a precision has no tensor-core GEMM.
constexpr int kSm80 = 80;
constexpr int kSm89 = 89;

/// One GEMM of the layer, row-major C[m, n] = A[m, k] x B[k, n]; FLOPs = 2 m n k.
struct Shape {
  std::string name;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

struct Precision {
  const char* name;
  Elem ab;  ///< A and B element type
  cudaDataType_t ab_type;
  cudaDataType_t cd_type;  ///< C and D (output) type
  cublasComputeType_t compute;
  int min_cc;         ///< major*10+minor
  const char* needs;  ///< the skip text when the GPU is older
};

// Accumulation is fp32 in every case, as in mixed-precision training; fp8 writes bf16 output
// (Transformer Engine's choice for activations between fp8 GEMMs).
const Precision kPrecisions[] = {
    {"tf32", Elem::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, kSm80, "needs sm_80+"},
    {"bf16", Elem::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kSm80, "needs sm_80+"},
    {"fp16", Elem::kFp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0, ""},
    {"fp8", Elem::kFp8E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kSm89, "needs sm_89+"},
};

std::size_t elem_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return 4;
    case CUDA_R_16BF:
    case CUDA_R_16F:
      return 2;
    default:
      return 1;
  }
}

struct Options {
  std::int64_t hidden = 4096;  // Llama-2 7B (Touvron et al. 2023, table 1; HF config.json)
  std::int64_t ffn = 11008;
  std::int64_t heads = 32;
  std::int64_t kv_heads = 32;  // fewer under grouped-query attention (Llama-2 70B: 8 of 64)
  std::int64_t seq = 4096;
  std::int64_t micro_batch = 1;
  bool gated = true;  // SwiGLU: gate and up projections fused into one GEMM of width 2 x ffn
  int warmup = 10;
  int iters = 50;
  bool quick = false;
  std::string output;
};

const char* kUsage =
    "usage: stepcast-kernel-bench [--hidden 4096] [--ffn 11008] [--heads 32] [--kv-heads 32] [--seq 4096]\n"
    "                             [--micro-batch 1] [--no-gated-mlp] [--warmup 10] [--iters 50] [--quick]\n"
    "                             [-o|--output FILE]\n"
    "Times one transformer layer's GEMMs (cuBLASLt; tf32, bf16, fp16, fp8 on sm_89+) and device memory\n"
    "bandwidth on GPU 0 and writes JSON (schema in validate/README.md). Exits 77 when no GPU is visible.\n";

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n%s", kTool, message.c_str(), kUsage);
  std::exit(kBadInput);
}

std::int64_t positive(const std::string& flag, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0)
    bad_input(fmt::format("{} needs a positive integer, got \"{}\"", flag, text));
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  bool iters_set = false;
  bool warmup_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad_input(a + " needs a value");
      return argv[++i];
    };
    if (a == "--hidden")
      o.hidden = positive(a, value());
    else if (a == "--ffn")
      o.ffn = positive(a, value());
    else if (a == "--heads")
      o.heads = positive(a, value());
    else if (a == "--kv-heads")
      o.kv_heads = positive(a, value());
    else if (a == "--seq")
      o.seq = positive(a, value());
    else if (a == "--micro-batch")
      o.micro_batch = positive(a, value());
    else if (a == "--no-gated-mlp")
      o.gated = false;
    else if (a == "--warmup") {
      o.warmup = static_cast<int>(positive(a, value()));
      warmup_set = true;
    } else if (a == "--iters") {
      o.iters = static_cast<int>(positive(a, value()));
      iters_set = true;
    } else if (a == "--quick")
      o.quick = true;
    else if (a == "-o" || a == "--output")
      o.output = value();
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else
      bad_input(fmt::format("unknown argument \"{}\"", a));
  }
  if (o.hidden % o.heads != 0) bad_input(fmt::format("--heads {} must divide --hidden {}", o.heads, o.hidden));
  if (o.heads % o.kv_heads != 0) bad_input(fmt::format("--kv-heads {} must divide --heads {}", o.kv_heads, o.heads));
  if (o.quick) {
    if (!warmup_set) o.warmup = 2;
    if (!iters_set) o.iters = 5;
  }
  return o;
}

// The layer's GEMMs over T = seq x micro_batch tokens, for a weight W[in, out]: forward
// Y[T, out] = X[T, in] W, dgrad dX[T, in] = dY W^T, wgrad dW[in, out] = X^T dY (Narayanan et al.
// 2021, sec. 5.1: backward is twice the forward FLOPs). Attention's score and context products
// (flash attention) are not cuBLAS GEMMs and are not timed here.
std::vector<Shape> layer_shapes(const Options& o) {
  const std::int64_t t = o.seq * o.micro_batch;
  const std::int64_t h = o.hidden;
  const std::int64_t up = o.gated ? 2 * o.ffn : o.ffn;
  // Q is h wide; K and V are kv_heads x head_dim each (grouped-query attention, Ainslie et al. 2023).
  const std::int64_t qkv = h + 2 * o.kv_heads * (h / o.heads);
  struct Weight {
    const char* name;
    std::int64_t in, out;
  };
  const Weight weights[] = {{"qkv", h, qkv}, {"attn_out", h, h}, {"mlp_up", h, up}, {"mlp_down", o.ffn, h}};
  std::vector<Shape> shapes;
  for (const auto& w : weights) {
    shapes.push_back({fmt::format("{}.fwd", w.name), t, w.out, w.in});
    shapes.push_back({fmt::format("{}.dgrad", w.name), t, w.in, w.out});
    shapes.push_back({fmt::format("{}.wgrad", w.name), w.in, w.out, t});
  }
  return shapes;
}

struct Device {
  cudaStream_t stream{};
  cudaEvent_t start{};
  cudaEvent_t stop{};
  cublasLtHandle_t lt{};
  void* workspace = nullptr;
};

// Seconds per operation of `iters` back-to-back launches of `op`, after `warmup` untimed ones.
template <typename Op>
double time_per_op(const Device& d, int warmup, int iters, Op op) {
  for (int i = 0; i < warmup; ++i) op();
  STEPCAST_CUDA_CHECK(cudaEventRecord(d.start, d.stream));
  for (int i = 0; i < iters; ++i) op();
  STEPCAST_CUDA_CHECK(cudaEventRecord(d.stop, d.stream));
  STEPCAST_CUDA_CHECK(cudaEventSynchronize(d.stop));
  float ms = 0.0f;
  STEPCAST_CUDA_CHECK(cudaEventElapsedTime(&ms, d.start, d.stop));
  return static_cast<double>(ms) / stepcast::unit::kKilo / iters;
}

// One GEMM in the "TN" layout (column-major A stored k x m and transposed, B k x n, D m x n): the
// layout cuBLASLt's fp8 GEMMs require, used for every precision so that they compare like for like.
// Returns the time per GEMM, or a negative value when cuBLASLt has no algorithm for the shape.
double time_gemm(const Device& d, const Precision& p, const Shape& s, void* a, void* b, void* c, int warmup,
                 int iters) {
  cublasLtMatmulDesc_t desc{};
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, p.compute, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T;
  const cublasOperation_t op_n = CUBLAS_OP_N;
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  const auto m = static_cast<std::uint64_t>(s.m);
  const auto n = static_cast<std::uint64_t>(s.n);
  const auto k = static_cast<std::uint64_t>(s.k);
  cublasLtMatrixLayout_t la{}, lb{}, lc{};
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, p.ab_type, k, m, s.k));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, p.ab_type, k, n, s.k));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, p.cd_type, m, n, s.m));
  cublasLtMatmulPreference_t pref{};
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = kWorkspaceBytes;
  STEPCAST_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t h = cublasLtMatmulAlgoGetHeuristic(d.lt, desc, la, lb, lc, lc, pref, 1, &best, &found);
  double t = -1.0;
  if (h == CUBLAS_STATUS_SUCCESS && found > 0) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    t = time_per_op(d, warmup, iters, [&] {
      STEPCAST_CUBLAS_CHECK(cublasLtMatmul(d.lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &best.algo,
                                           d.workspace, kWorkspaceBytes, d.stream));
    });
  } else if (h != CUBLAS_STATUS_SUCCESS && h != CUBLAS_STATUS_NOT_SUPPORTED) {
    STEPCAST_CUBLAS_CHECK(h);
  }
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lc));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lb));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(la));
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescDestroy(desc));
  return t;
}

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

void write_output(const nlohmann::json& j, const std::string& path) {
  const std::string text = j.dump(2) + "\n";
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "%s: cannot write %s\n", kTool, path.c_str());
    std::exit(kBadInput);
  }
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA GPU visible (%s); skipping (exit 77)\n", kTool,
                 probe != cudaSuccess ? cudaGetErrorString(probe) : "0 devices");
    return kSkip;
  }
  STEPCAST_CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  STEPCAST_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int cc = prop.major * 10 + prop.minor;
  int driver = 0, runtime = 0, cublas_major = 0, cublas_minor = 0, cublas_patch = 0;
  STEPCAST_CUDA_CHECK(cudaDriverGetVersion(&driver));
  STEPCAST_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  STEPCAST_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &cublas_major));
  STEPCAST_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &cublas_minor));
  STEPCAST_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &cublas_patch));

  nlohmann::json j;
  j["tool"] = kTool;
  j["version"] = STEPCAST_VERSION;
  j["schema_version"] = kSchemaVersion;
  j["gpu"] = {{"index", 0},
              {"name", prop.name},
              {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
              {"memory_bytes", prop.totalGlobalMem},
              {"multiprocessors", prop.multiProcessorCount}};
  j["driver_version"] = version_text(driver);
  j["cuda_runtime_version"] = version_text(runtime);
  j["cublas_version"] = fmt::format("{}.{}.{}", cublas_major, cublas_minor, cublas_patch);
  j["cublaslt_version"] = std::to_string(cublasLtGetVersion());
  j["workload"] = {{"hidden", o.hidden},
                   {"ffn", o.ffn},
                   {"heads", o.heads},
                   {"kv_heads", o.kv_heads},
                   {"seq", o.seq},
                   {"micro_batch", o.micro_batch},
                   {"tokens", o.seq * o.micro_batch},
                   {"gated_mlp", o.gated}};
  j["warmup_iters"] = o.warmup;
  j["iters"] = o.iters;
  j["gemm_layout"] = "TN (A transposed), fp32 accumulation, alpha 1 beta 0, cuBLASLt heuristic's first algorithm";

  Device d;
  STEPCAST_CUDA_CHECK(cudaStreamCreate(&d.stream));
  STEPCAST_CUDA_CHECK(cudaEventCreate(&d.start));
  STEPCAST_CUDA_CHECK(cudaEventCreate(&d.stop));
  STEPCAST_CUBLAS_CHECK(cublasLtCreate(&d.lt));
  STEPCAST_CUDA_CHECK(cudaMalloc(&d.workspace, kWorkspaceBytes));

  // Operand buffers big enough for every shape in the widest type (fp32, 4 B).
  const std::vector<Shape> shapes = layer_shapes(o);
  std::size_t a_elems = 0, b_elems = 0, c_elems = 0;
  for (const auto& s : shapes) {
    a_elems = std::max(a_elems, static_cast<std::size_t>(s.m * s.k));
    b_elems = std::max(b_elems, static_cast<std::size_t>(s.k * s.n));
    c_elems = std::max(c_elems, static_cast<std::size_t>(s.m * s.n));
  }
  constexpr std::size_t kWidest = 4;
  std::size_t free_b = 0, total_b = 0;
  STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t need = (a_elems + b_elems + c_elems) * kWidest;
  if (need > free_b) {
    std::fprintf(stderr,
                 "%s: the GEMM operands need %zu bytes, the GPU has %zu free; use smaller --seq/--micro-batch\n", kTool,
                 need, free_b);
    return kBadInput;
  }
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  STEPCAST_CUDA_CHECK(cudaMalloc(&a, a_elems * kWidest));
  STEPCAST_CUDA_CHECK(cudaMalloc(&b, b_elems * kWidest));
  STEPCAST_CUDA_CHECK(cudaMalloc(&c, c_elems * kWidest));

  nlohmann::json gemms = nlohmann::json::array();
  nlohmann::json summary = nlohmann::json::object();
  for (const Precision& p : kPrecisions) {
    if (cc < p.min_cc) {
      std::fprintf(stderr, "%s: %s GEMMs skipped: %s (this GPU is sm_%d)\n", kTool, p.name, p.needs, cc);
      summary[p.name] = {{"skipped", fmt::format("skipped: {}", p.needs)}};
      continue;
    }
    stepcast::validate::fill_uniform(a, a_elems, p.ab, 1u, d.stream);
    STEPCAST_CUDA_CHECK(stepcast::validate::last_launch_error());
    stepcast::validate::fill_uniform(b, b_elems, p.ab, 2u, d.stream);
    STEPCAST_CUDA_CHECK(stepcast::validate::last_launch_error());
    double flops = 0.0, time_s = 0.0, weighted = 0.0, lo = 0.0, hi = 0.0;
    int timed = 0;
    nlohmann::json missing = nlohmann::json::array();
    for (const auto& s : shapes) {
      const double t = time_gemm(d, p, s, a, b, c, o.warmup, o.iters);
      if (t < 0.0) {
        std::fprintf(stderr, "%s: %s %s: no cuBLASLt algorithm for m=%lld n=%lld k=%lld\n", kTool, p.name,
                     s.name.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                     static_cast<long long>(s.k));
        missing.push_back(s.name);
        continue;
      }
      const double tflops = s.flops() / t / stepcast::unit::kTera;
      std::fprintf(stderr, "%s: %-5s %-16s m=%-6lld n=%-6lld k=%-6lld %10.3f us %8.1f TFLOP/s\n", kTool, p.name,
                   s.name.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                   static_cast<long long>(s.k), t * stepcast::unit::kMega, tflops);
      gemms.push_back({{"name", s.name},
                       {"m", s.m},
                       {"n", s.n},
                       {"k", s.k},
                       {"precision", p.name},
                       {"flops", s.flops()},
                       {"time_s", t},
                       {"tflops", tflops}});
      lo = timed == 0 ? tflops : std::min(lo, tflops);
      hi = timed == 0 ? tflops : std::max(hi, tflops);
      flops += s.flops();
      time_s += t;
      weighted += s.flops() * tflops;
      ++timed;
    }
    if (timed == 0) {
      summary[p.name] = {{"skipped", "skipped: cuBLASLt has no algorithm for these shapes"}};
      continue;
    }
    summary[p.name] = {{"gemms", timed},
                       {"flops", flops},
                       {"time_s", time_s},
                       {"tflops_flop_weighted_mean", weighted / flops},
                       {"tflops_total", flops / time_s / stepcast::unit::kTera},
                       {"tflops_min", lo},
                       {"tflops_max", hi},
                       {"missing", missing}};
  }
  j["gemms"] = gemms;
  j["summary"] = summary;
  STEPCAST_CUDA_CHECK(cudaFree(c));
  STEPCAST_CUDA_CHECK(cudaFree(b));
  STEPCAST_CUDA_CHECK(cudaFree(a));

  // Memory bandwidth: each copy reads size and writes size bytes; both are counted, as STREAM's
  // Copy does (McCalpin), so the figure compares with the datasheet's HBM bandwidth.
  STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t size = kCopyBytes;
  while (size * 4 > free_b && size > (std::size_t{1} << 20)) size /= 2;
  void* src = nullptr;
  void* dst = nullptr;
  STEPCAST_CUDA_CHECK(cudaMalloc(&src, size));
  STEPCAST_CUDA_CHECK(cudaMalloc(&dst, size));
  stepcast::validate::fill_uniform(src, size / sizeof(float), Elem::kFp32, 3u, d.stream);
  STEPCAST_CUDA_CHECK(stepcast::validate::last_launch_error());
  const double moved = 2.0 * static_cast<double>(size);
  const double t_memcpy = time_per_op(d, o.warmup, o.iters, [&] {
    STEPCAST_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, d.stream));
  });
  const std::size_t vec_bytes = 16;  // float4
  const double t_kernel = time_per_op(d, o.warmup, o.iters, [&] {
    stepcast::validate::copy_float4(src, dst, size / vec_bytes, d.stream);
    STEPCAST_CUDA_CHECK(stepcast::validate::last_launch_error());
  });
  auto bw = [&](double t) {
    return nlohmann::json{{"time_s", t}, {"bw_Bps", moved / t}, {"bw_GBps", moved / t / stepcast::unit::kGiga}};
  };
  j["memory_bandwidth"] = {{"size_bytes", size},
                           {"bytes_per_copy", moved},
                           {"counting", "read + write: each copy counts 2 x size_bytes"},
                           {"memcpy_d2d", bw(t_memcpy)},
                           {"copy_kernel", bw(t_kernel)}};
  std::fprintf(stderr, "%s: memory bandwidth (read + write) cudaMemcpy D2D %.0f GB/s, copy kernel %.0f GB/s\n", kTool,
               moved / t_memcpy / stepcast::unit::kGiga, moved / t_kernel / stepcast::unit::kGiga);
  STEPCAST_CUDA_CHECK(cudaFree(dst));
  STEPCAST_CUDA_CHECK(cudaFree(src));
  STEPCAST_CUDA_CHECK(cudaFree(d.workspace));
  STEPCAST_CUBLAS_CHECK(cublasLtDestroy(d.lt));
  STEPCAST_CUDA_CHECK(cudaEventDestroy(d.stop));
  STEPCAST_CUDA_CHECK(cudaEventDestroy(d.start));
  STEPCAST_CUDA_CHECK(cudaStreamDestroy(d.stream));
  write_output(j, o.output);
  return 0;
}
