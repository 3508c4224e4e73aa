// Reading stepcast-kernel-bench's JSON output (schema_version 2, validate/README.md).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {
namespace {

constexpr std::string_view kTool = "stepcast-kernel-bench";
constexpr std::int64_t kSchemaVersion = 2;

/// The enumerator whose name (cost::to_string) is the field's text.
template <class Enum, std::size_t N>
Enum one_of(const JsonReader& r, const std::array<Enum, N>& values) {
  const std::string text = r.string();
  std::string accepted;
  for (const Enum v : values) {
    if (cost::to_string(v) == text) return v;
    accepted += fmt::format("{}\"{}\"", accepted.empty() ? "" : ", ", cost::to_string(v));
  }
  r.fail(fmt::format("unknown value \"{}\"; accepted: {}", text, accepted));
}

constexpr std::array kParts = {cost::OpPart::kLayer, cost::OpPart::kEmbedding, cost::OpPart::kHead,
                               cost::OpPart::kOptimizer};
constexpr std::array kPasses = {cost::OpPass::kForward, cost::OpPass::kBackward, cost::OpPass::kWeightGrad,
                                cost::OpPass::kRecompute};
constexpr std::array kKinds = {cost::OpKind::kGemm, cost::OpKind::kFusedAttention, cost::OpKind::kMemory};

void read_shape(const JsonReader& r, TimedOperator& op) {
  if (op.kind == cost::OpKind::kMemory) {
    r.check_keys({"elements"});
    op.elements = static_cast<double>(r.at("elements").count());
    return;
  }
  op.gemm = {static_cast<double>(r.at("batch").count()), static_cast<double>(r.at("m").count()),
             static_cast<double>(r.at("n").count()), static_cast<double>(r.at("k").count())};
  if (op.kind == cost::OpKind::kFusedAttention) {
    // FlashAttention's thread blocks (query blocks x sequences x heads), which fill the SMs in waves.
    r.check_keys({"batch", "m", "n", "k", "thread_blocks"});
    op.elements = static_cast<double>(r.at("thread_blocks").count());
  } else {
    r.check_keys({"batch", "m", "n", "k"});
  }
}

TimedOperator read_operator(const JsonReader& r, std::size_t lists) {
  r.check_keys({"list", "name", "part", "pass", "kind", "precision", "shape", "flops", "bytes", "kernels", "kernel",
                "time_s", "iters", "timed_fraction", "skipped"});
  TimedOperator op;
  const std::int64_t list = r.at("list").integer();
  if (list < 0 || static_cast<std::size_t>(list) >= lists)
    r.at("list").fail(fmt::format("no list {} among the file's {} lists", list, lists));
  op.list = static_cast<int>(list);
  op.name = r.at("name").string();
  op.part = one_of(r.at("part"), kParts);
  op.pass = one_of(r.at("pass"), kPasses);
  op.kind = one_of(r.at("kind"), kKinds);
  op.precision = r.at("precision").string();
  op.flops = Flops(r.at("flops").number());
  if (op.flops.value() < 0.0) r.at("flops").fail("must not be negative");
  op.bytes = Bytes(r.at("bytes").number());
  if (op.bytes.value() < 0.0) r.at("bytes").fail("must not be negative");
  op.kernels = static_cast<double>(r.at("kernels").count());
  read_shape(r.at("shape"), op);
  if (op.kind == cost::OpKind::kGemm) {
    const double expected = 2.0 * op.gemm.batch * op.gemm.m * op.gemm.n * op.gemm.k;
    if (std::abs(op.flops.value() - expected) > 1e-9 * expected) {
      r.at("flops").fail(fmt::format("{:.0f} is not 2 x batch x m x n x k = {:.0f} for {} x ({} x {} x {})",
                                     op.flops.value(), expected, op.gemm.batch, op.gemm.m, op.gemm.n, op.gemm.k));
    }
  }
  if (auto k = r.find("kernel")) {
    k->check_keys({"pattern", "row_length", "reads", "writes", "element_bytes", "mask"});
    op.pattern = k->at("pattern").string();
  }
  const bool timed = r.has("time_s");
  if (timed == r.has("skipped")) r.fail("an operator has either \"time_s\" or \"skipped\"");
  if (timed) {
    op.time = Seconds(r.at("time_s").positive_number());
  } else {
    op.skipped = r.at("skipped").string();
  }
  return op;
}

LaunchTiming read_launch(const JsonReader& r) {
  r.check_keys({"empty_kernel_gpu_s", "empty_kernels", "host_launch_s", "host_launches", "method"});
  LaunchTiming l;
  l.gpu_per_kernel = Seconds(r.at("empty_kernel_gpu_s").positive_number());
  l.kernels = static_cast<int>(r.at("empty_kernels").count());
  l.host_per_launch = Seconds(r.at("host_launch_s").positive_number());
  l.launches = static_cast<int>(r.at("host_launches").count());
  return l;
}

}  // namespace

bool is_kernel_bench_json(const std::string& text) { return is_json_from_tool(text, kTool); }

KernelBench parse_kernel_bench_json(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parse_json_text(text, origin);
  const JsonReader root(j, origin);
  if (root.at("tool").string() != kTool) {
    root.at("tool").fail(fmt::format("expected \"{}\", got \"{}\"", kTool, root.at("tool").string()));
  }
  if (root.at("schema_version").integer() != kSchemaVersion) {
    root.at("schema_version")
        .fail(fmt::format(
            "this stepcast reads schema_version {} (the operator bench); rerun the stepcast-kernel-bench built with it",
            kSchemaVersion));
  }
  root.check_keys({"tool", "version", "schema_version", "gpu", "driver_version", "cuda_runtime_version",
                   "cublas_version", "cublaslt_version", "warmup_iters", "iters", "max_seconds_per_operator", "timing",
                   "gemm_layout", "lists", "operators", "launch", "memory_bandwidth"});
  KernelBench bench;
  bench.file = origin;
  const JsonReader gpu = root.at("gpu");
  gpu.check_keys({"index", "name", "compute_capability", "memory_bytes", "multiprocessors", "l2_bytes"});
  bench.gpu_name = gpu.at("name").string();
  bench.compute_capability = gpu.at("compute_capability").string();
  for (const JsonReader& l : root.at("lists").elements()) {
    l.check_keys({"file", "title", "notes"});
    bench.lists.push_back(l.at("title").string());
  }
  for (const JsonReader& o : root.at("operators").elements())
    bench.operators.push_back(read_operator(o, bench.lists.size()));
  if (auto l = root.find("launch")) bench.launch = read_launch(*l);
  bool any_timed = bench.launch.has_value();
  for (const TimedOperator& op : bench.operators) any_timed = any_timed || op.time.has_value();
  if (!any_timed) root.at("operators").fail("no operator was timed: nothing to calibrate from");
  return bench;
}

cost::Operator TimedOperator::op() const {
  cost::Operator o;
  o.name = name;
  o.part = part;
  o.pass = pass;
  o.kind = kind;
  o.gemm = gemm;
  o.elements = elements;
  o.flops = flops;
  o.bytes = bytes;
  o.kernels = kernels;
  // A GEMM timed in fp8 (or a block-scaled format) is one of a layer's low-precision GEMMs: it runs
  // at that format's peak, where a low-precision plan's other GEMMs run in bf16.
  o.low_precision = kind == cost::OpKind::kGemm && cost::is_low_precision(plan::parse_precision(precision, {}));
  return o;
}

}  // namespace stepcast::calibrate
