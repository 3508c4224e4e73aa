// Reading stepcast-kernel-bench's JSON output (schema in validate/README.md).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/json_reader.hpp"

namespace stepcast::calibrate {
namespace {

constexpr std::string_view kTool = "stepcast-kernel-bench";
constexpr std::int64_t kSchemaVersion = 1;

GemmTiming read_gemm(const JsonReader& r) {
  r.check_keys({"name", "m", "n", "k", "precision", "flops", "time_s", "tflops"});
  GemmTiming g;
  g.name = r.at("name").string();
  g.m = r.at("m").count();
  g.n = r.at("n").count();
  g.k = r.at("k").count();
  g.precision = r.at("precision").string();
  g.flops = Flops(r.at("flops").positive_number());
  g.time = Seconds(r.at("time_s").positive_number());
  const double expected = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (std::abs(g.flops.value() - expected) > 1e-9 * expected) {
    r.at("flops").fail(fmt::format("{:.6g} is not 2 m n k = {:.6g} for m={} n={} k={}", g.flops.value(), expected, g.m,
                                   g.n, g.k));
  }
  return g;
}

}  // namespace

bool is_kernel_bench_json(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto tool = j.find("tool");
  return tool != j.end() && tool->is_string() && tool->get<std::string>() == kTool;
}

KernelBench parse_kernel_bench_json(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parse_json_text(text, origin);
  const JsonReader root(j, origin);
  root.check_keys({"tool", "version", "schema_version", "gpu", "driver_version", "cuda_runtime_version",
                   "cublas_version", "cublaslt_version", "workload", "warmup_iters", "iters", "gemm_layout", "gemms",
                   "summary", "memory_bandwidth"});
  if (root.at("tool").string() != kTool) {
    root.at("tool").fail(fmt::format("expected \"{}\", got \"{}\"", kTool, root.at("tool").string()));
  }
  if (root.at("schema_version").integer() != kSchemaVersion) {
    root.at("schema_version").fail(fmt::format("this stepcast reads schema_version {}", kSchemaVersion));
  }
  KernelBench bench;
  bench.file = origin;
  const JsonReader gpu = root.at("gpu");
  gpu.check_keys({"index", "name", "compute_capability", "memory_bytes", "multiprocessors"});
  bench.gpu_name = gpu.at("name").string();
  bench.compute_capability = gpu.at("compute_capability").string();
  const JsonReader workload = root.at("workload");
  workload.check_keys({"hidden", "ffn", "heads", "kv_heads", "seq", "micro_batch", "tokens", "gated_mlp"});
  bench.tokens = workload.at("tokens").count();
  for (const JsonReader& g : root.at("gemms").elements()) bench.gemms.push_back(read_gemm(g));
  for (const auto& [precision, summary] : root.at("summary").members()) {
    if (auto why = summary.find("skipped")) bench.skipped[precision] = why->string();
  }
  if (bench.gemms.empty()) root.at("gemms").fail("no GEMM was timed: nothing to calibrate from");
  return bench;
}

}  // namespace stepcast::calibrate
