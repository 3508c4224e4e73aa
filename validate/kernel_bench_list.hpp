// Operator lists for stepcast-kernel-bench: the JSON of `stepcast operators --format json`, read
// into the rows the bench times (host code only; no GPU needed, so bad input is refused first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepcast::validate {

/// One row of an operator list (columns as `stepcast operators` writes them).
struct ListOperator {
  std::string name;
  std::string part;
  std::string pass;
  std::string kind;       ///< "gemm", "fused attention", "memory-bound"
  std::string precision;  ///< "bf16", "fp8", ...
  std::int64_t batch = 0;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t elements = 0;  ///< memory-bound: elements; fused attention: thread blocks
  double flops = 0.0;
  double bytes = 0.0;
  std::int64_t kernels = 1;
  std::string pattern;  ///< memory-bound: the stand-in's pattern; "none" when there is none
  std::int64_t row_length = 0;
  int reads = 0;
  int writes = 0;
  int element_bytes = 0;
  std::string mask;  ///< "none", "read", "write"

  [[nodiscard]] bool is_gemm() const { return kind == "gemm"; }
  [[nodiscard]] bool is_memory() const { return kind == "memory-bound"; }
  [[nodiscard]] bool is_attention() const { return kind == "fused attention"; }
};

struct OperatorList {
  std::string file;
  std::string title;
  std::vector<std::string> notes;
  std::vector<ListOperator> operators;
};

/// Reads one list; on bad input prints "FILE: row N: why" and exits 2.
OperatorList read_operator_list(const std::string& file);

}  // namespace stepcast::validate
