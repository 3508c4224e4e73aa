// (Batched) GEMMs of an operator list through cuBLASLt, in the operator's precision.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <string>

#include "kernel_bench_kernels.hpp"
#include "kernel_bench_timing.hpp"

namespace stepcast::validate {

struct GemmPrecision {
  const char* name;
  Elem ab;  ///< A and B element type
  cudaDataType_t ab_type;
  cudaDataType_t cd_type;  ///< C and D (output) type
  cublasComputeType_t compute;
  int min_cc;         ///< major*10+minor
  const char* needs;  ///< the skip text when the GPU is older
};

/// The precision named `name` ("fp32", "tf32", "bf16", "fp16", "fp8"); null when unknown.
const GemmPrecision* gemm_precision(const std::string& name);

/// Bytes of A, B and C of `batch` GEMMs C[m, n] = A[m, k] B[k, n] in `p`.
double gemm_operand_bytes(const GemmPrecision& p, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k);

struct GemmResult {
  Timing timing;
  std::string skipped;  ///< why it was not timed; empty when it was
};

/// Times the strided-batched GEMM (batch 1: a plain one) on the device, operands filled with
/// hashed values, in the "TN" layout with fp32 accumulation and cuBLASLt's first heuristic algorithm.
GemmResult time_gemm(const Device& d, const Settings& s, const GemmPrecision& p, std::int64_t batch, std::int64_t m,
                     std::int64_t n, std::int64_t k);

/// The layout text the output JSON records.
inline constexpr const char* kGemmLayout =
    "cuBLASLt, TN (A transposed; the layout fp8 GEMMs require, kept for every precision), strided batched where batch "
    "> 1, "
    "fp32 accumulation (fp32 GEMMs: no tensor cores), alpha 1 beta 0, 32 MiB workspace, the heuristic's first "
    "algorithm";

}  // namespace stepcast::validate
