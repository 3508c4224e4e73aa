// cuBLASLt GEMMs at an operator's shape and precision.
#include "kernel_bench_gemm.hpp"

#include <cublas_api.h>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "cuda_check.hpp"

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

namespace stepcast::validate {
namespace {

constexpr int kSm80 = 80;
constexpr int kSm89 = 89;
// cuBLASLt's recommended workspace on Hopper (cuBLAS docs, "cublasSetWorkspace"); enough on Ampere.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

// Accumulation is fp32 in every case, as in mixed-precision training; fp8 writes bf16 output
// (Transformer Engine's choice for activations between fp8 GEMMs).
const std::array<GemmPrecision, 5> kPrecisions = {{
    {"fp32", Elem::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, ""},
    {"tf32", Elem::kFp32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, kSm80, "needs sm_80+"},
    {"bf16", Elem::kBf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kSm80, "needs sm_80+"},
    {"fp16", Elem::kFp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0, ""},
    {"fp8", Elem::kFp8E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kSm89, "needs sm_89+"},
}};

double elem_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return 4.0;
    case CUDA_R_16BF:
    case CUDA_R_16F:
      return 2.0;
    default:
      return 1.0;
  }
}

// A strided batch of `batch` matrices of rows x cols, column-major with leading dimension `ld`.
cublasLtMatrixLayout_t layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                              std::int64_t batch) {
  cublasLtMatrixLayout_t l{};
  STEPCAST_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    const std::int64_t stride = rows * cols;
    STEPCAST_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    STEPCAST_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return l;
}

}  // namespace

const GemmPrecision* gemm_precision(const std::string& name) {
  for (const GemmPrecision& p : kPrecisions) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

double gemm_operand_bytes(const GemmPrecision& p, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto b = static_cast<double>(batch);
  const auto md = static_cast<double>(m);
  const auto nd = static_cast<double>(n);
  const auto kd = static_cast<double>(k);
  return b * ((md * kd + kd * nd) * elem_bytes(p.ab_type) + md * nd * elem_bytes(p.cd_type));
}

GemmResult time_gemm(const Device& d, const Settings& s, const GemmPrecision& p, std::int64_t batch, std::int64_t m,
                     std::int64_t n, std::int64_t k) {
  GemmResult out;
  if (d.compute_capability < p.min_cc) {
    out.skipped = fmt::format("skipped: {} GEMMs {} (this GPU is sm_{})", p.name, p.needs, d.compute_capability);
    return out;
  }
  if (batch > INT32_MAX) {
    out.skipped = "skipped: more matrices than cuBLASLt's 32-bit batch count";
    return out;
  }
  const auto a_elems = static_cast<std::size_t>(batch * m * k);
  const auto b_elems = static_cast<std::size_t>(batch * k * n);
  const auto c_elems = static_cast<std::size_t>(batch * m * n);
  std::size_t free_b = 0;
  std::size_t total_b = 0;
  STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double need = gemm_operand_bytes(p, batch, m, n, k);
  if (need > 0.9 * static_cast<double>(free_b)) {
    out.skipped = fmt::format("skipped: its operands need {:.3g} GB, the GPU has {:.3g} GB free", need / 1e9,
                              static_cast<double>(free_b) / 1e9);
    return out;
  }
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  STEPCAST_CUDA_CHECK(cudaMalloc(&a, static_cast<std::size_t>(static_cast<double>(a_elems) * elem_bytes(p.ab_type))));
  STEPCAST_CUDA_CHECK(cudaMalloc(&b, static_cast<std::size_t>(static_cast<double>(b_elems) * elem_bytes(p.ab_type))));
  STEPCAST_CUDA_CHECK(cudaMalloc(&c, static_cast<std::size_t>(static_cast<double>(c_elems) * elem_bytes(p.cd_type))));
  fill_uniform(a, a_elems, p.ab, 1u, d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());
  fill_uniform(b, b_elems, p.ab, 2u, d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());

  // Row-major C[m, n] = A[m, k] B[k, n] as column-major D (m x n) = op(A) B with A stored k x m
  // and transposed ("TN"), B stored k x n.
  cublasLtMatmulDesc_t desc{};
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, p.compute, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T;
  const cublasOperation_t op_n = CUBLAS_OP_N;
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  cublasLtMatrixLayout_t la = layout(p.ab_type, k, m, k, batch);
  cublasLtMatrixLayout_t lb = layout(p.ab_type, k, n, k, batch);
  cublasLtMatrixLayout_t lc = layout(p.cd_type, m, n, m, batch);
  cublasLtMatmulPreference_t pref{};
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = kWorkspaceBytes;
  STEPCAST_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t h = cublasLtMatmulAlgoGetHeuristic(d.lt, desc, la, lb, lc, lc, pref, 1, &best, &found);
  if (h == CUBLAS_STATUS_SUCCESS && found > 0) {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    out.timing = time_cold(d, s, [&] {
      STEPCAST_CUBLAS_CHECK(cublasLtMatmul(d.lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &best.algo,
                                           d.workspace, kWorkspaceBytes, d.stream));
    });
  } else if (h == CUBLAS_STATUS_SUCCESS || h == CUBLAS_STATUS_NOT_SUPPORTED) {
    out.skipped = "skipped: cuBLASLt has no algorithm for this shape";
  } else {
    STEPCAST_CUBLAS_CHECK(h);
  }
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lc));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lb));
  STEPCAST_CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(la));
  STEPCAST_CUBLAS_CHECK(cublasLtMatmulDescDestroy(desc));
  STEPCAST_CUDA_CHECK(cudaFree(c));
  STEPCAST_CUDA_CHECK(cudaFree(b));
  STEPCAST_CUDA_CHECK(cudaFree(a));
  return out;
}

}  // namespace stepcast::validate
