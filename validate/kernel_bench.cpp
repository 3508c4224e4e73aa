// stepcast-kernel-bench: times, on GPU 0, every operator of the operator lists `stepcast operators`
// writes (GEMMs through cuBLASLt, memory-bound operators by stand-in kernels moving their bytes),
// the launch overhead of empty kernels and the device memory bandwidth; writes JSON
// (validate/README.md). With no GPU it exits 77 (CTest: skip), after checking the lists.
#include <cublasLt.h>
#include <cublas_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "kernel_bench_gemm.hpp"
#include "kernel_bench_kernels.hpp"
#include "kernel_bench_list.hpp"
#include "kernel_bench_memory.hpp"
#include "kernel_bench_timing.hpp"
#include "stepcast/core/units.hpp"

namespace {

using namespace stepcast::validate;
namespace unit = stepcast::unit;

constexpr int kSkip = 77;
constexpr int kBadInput = 2;
constexpr const char* kTool = "stepcast-kernel-bench";
constexpr int kSchemaVersion = 2;
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
// Each bandwidth copy moves this much (capped at a quarter of free memory): large enough that
// launch overhead and the L2 (50-60 MB on H100/H200) do not count.
constexpr std::size_t kCopyBytes = std::size_t{1} << 30;
// Empty kernels: enough that the per-kernel figure is stable, few enough to stay inside the
// stream's queue while the spin kernel holds the GPU.
constexpr int kEmptyKernels = 500;
constexpr int kHostLaunches = 2000;
constexpr unsigned long long kEmptySpinNs = 20000000;  // 20 ms: longer than enqueueing 500 launches
/// Without --max-bytes, a memory-bound operator's tensors may take this share of free memory.
constexpr double kBudgetShare = 0.375;
/// --plan-only has no GPU to ask: it plans within this.
constexpr double kPlanOnlyBudget = 16e9;
constexpr const char* kAttentionSkip =
    "skipped: the harness has no FlashAttention kernel (a hand-written one would time itself, not FlashAttention-2/3); "
    "calibrate keeps the cited attention efficiencies";

struct Options {
  std::vector<std::string> lists;
  Settings settings;
  double max_bytes = 0.0;  // 0: kBudgetShare of free memory
  bool plan_only = false;
  std::string output;
};

const char* kUsage =
    "usage: stepcast-kernel-bench --operators LIST.json [--operators ...] [--warmup 2] [--iters 10]\n"
    "                             [--max-seconds-per-operator 0.05] [--max-bytes BYTES] [--quick] [--plan-only]\n"
    "                             [-o|--output FILE]\n"
    "Times every operator of each list (`stepcast operators ... --format json`) on GPU 0: GEMMs through cuBLASLt,\n"
    "memory-bound operators by stand-in kernels that move their bytes; and empty-kernel launch overhead and memory\n"
    "bandwidth. Writes JSON (schema in validate/README.md). --plan-only prints what each operator would run, without\n"
    "a GPU. Exits 77 when no GPU is visible, 2 on bad input.\n";

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n%s", kTool, message.c_str(), kUsage);
  std::exit(kBadInput);
}

double positive(const std::string& flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0.0))
    bad_input(fmt::format("{} needs a positive number, got \"{}\"", flag, text));
  return v;
}

int positive_int(const std::string& flag, const char* text) {
  const double v = positive(flag, text);
  if (v != static_cast<double>(static_cast<int>(v)))
    bad_input(fmt::format("{} needs a whole number, got \"{}\"", flag, text));
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  bool warmup_set = false;
  bool iters_set = false;
  bool seconds_set = false;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad_input(a + " needs a value");
      return argv[++i];
    };
    if (a == "--operators") {
      o.lists.emplace_back(value());
    } else if (a == "--warmup") {
      o.settings.warmup = positive_int(a, value());
      warmup_set = true;
    } else if (a == "--iters") {
      o.settings.iters = positive_int(a, value());
      iters_set = true;
    } else if (a == "--max-seconds-per-operator") {
      o.settings.max_seconds = positive(a, value());
      seconds_set = true;
    } else if (a == "--max-bytes") {
      o.max_bytes = positive(a, value());
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--plan-only") {
      o.plan_only = true;
    } else if (a == "-o" || a == "--output") {
      o.output = value();
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      bad_input(fmt::format("unknown argument \"{}\"", a));
    }
  }
  if (o.lists.empty())
    bad_input("give at least one operator list with --operators (from `stepcast operators ... --format json`)");
  if (quick) {
    if (!warmup_set) o.settings.warmup = 1;
    if (!iters_set) o.settings.iters = kMinIters;
    if (!seconds_set) o.settings.max_seconds = 0.01;
  }
  return o;
}

// What an operator's row says it is, and the key under which identical operators share a timing.
std::string identity(const ListOperator& op) {
  return fmt::format("{}|{}|{}x{}x{}x{}|{}|{}|{}|{}|{}|{}|{}|{}", op.kind, op.precision, op.batch, op.m, op.n, op.k,
                     op.elements, op.kernels, op.pattern, op.row_length, op.reads, op.writes, op.element_bytes,
                     op.mask);
}

/// The result of one operator: its time, or why it was not timed.
struct Outcome {
  Timing timing;
  std::string skipped;
  double fraction = 1.0;
};

// FLOPs as the reader checks them: exact for GEMMs, the list's figure otherwise.
double flops_of(const ListOperator& op) {
  if (!op.is_gemm()) return op.flops;
  return 2.0 * static_cast<double>(op.batch) * static_cast<double>(op.m) * static_cast<double>(op.n) *
         static_cast<double>(op.k);
}

nlohmann::json operator_json(int list, const ListOperator& op, const Outcome& r) {
  nlohmann::json j = {{"list", list},          {"name", op.name},   {"part", op.part},
                      {"pass", op.pass},       {"kind", op.kind},   {"precision", op.precision},
                      {"flops", flops_of(op)}, {"bytes", op.bytes}, {"kernels", op.kernels}};
  if (op.is_memory()) {
    j["shape"] = {{"elements", op.elements}};
    j["kernel"] = {{"pattern", op.pattern},
                   {"row_length", op.row_length > 0 ? nlohmann::json(op.row_length) : nlohmann::json(nullptr)},
                   {"reads", op.reads},
                   {"writes", op.writes},
                   {"element_bytes", op.element_bytes},
                   {"mask", op.mask}};
  } else {
    j["shape"] = {{"batch", op.batch}, {"m", op.m}, {"n", op.n}, {"k", op.k}};
    if (op.is_attention()) j["shape"]["thread_blocks"] = op.elements;
  }
  if (r.skipped.empty()) {
    j["time_s"] = r.timing.time_s;
    j["iters"] = r.timing.iters;
    if (r.fraction < 1.0) j["timed_fraction"] = r.fraction;
  } else {
    j["skipped"] = r.skipped;
  }
  return j;
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

/// Empty kernels: GPU time per kernel back to back (a spin kernel holds the GPU while the host
/// enqueues them, so the host's pace does not count), and host time per launch call.
nlohmann::json time_launches(const Device& d) {
  launch_spin(kEmptySpinNs, d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());
  STEPCAST_CUDA_CHECK(cudaEventRecord(d.start, d.stream));
  for (int i = 0; i < kEmptyKernels; ++i) launch_empty(d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());
  STEPCAST_CUDA_CHECK(cudaEventRecord(d.stop, d.stream));
  STEPCAST_CUDA_CHECK(cudaEventSynchronize(d.stop));
  float ms = 0.0f;
  STEPCAST_CUDA_CHECK(cudaEventElapsedTime(&ms, d.start, d.stop));
  const double gpu_s = static_cast<double>(ms) / unit::kKilo / kEmptyKernels;
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < kHostLaunches; ++i) launch_empty(d.stream);
  const auto end = std::chrono::steady_clock::now();
  STEPCAST_CUDA_CHECK(last_launch_error());
  STEPCAST_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  const double host_s = std::chrono::duration<double>(end - begin).count() / kHostLaunches;
  std::fprintf(stderr, "%s: empty kernel: %.3f us on the GPU back to back, %.3f us per launch call on the host\n",
               kTool, gpu_s * unit::kMega, host_s * unit::kMega);
  return {{"empty_kernel_gpu_s", gpu_s},
          {"empty_kernels", kEmptyKernels},
          {"host_launch_s", host_s},
          {"host_launches", kHostLaunches},
          {"method",
           "GPU: a 20 ms spin kernel, then 500 empty <<<1,1>>> kernels between two events on one stream, the interval "
           "over 500; "
           "host: wall-clock time of 2000 cudaLaunchKernel calls of the empty kernel over 2000"}};
}

nlohmann::json time_bandwidth(const Device& d, const Settings& s) {
  // Each copy reads size and writes size bytes; both are counted, as STREAM's Copy does
  // (McCalpin), so the figure compares with the datasheet's HBM bandwidth.
  std::size_t free_b = 0;
  std::size_t total_b = 0;
  STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t size = kCopyBytes;
  while (size * 4 > free_b && size > (std::size_t{1} << 20)) size /= 2;
  void* src = nullptr;
  void* dst = nullptr;
  STEPCAST_CUDA_CHECK(cudaMalloc(&src, size));
  STEPCAST_CUDA_CHECK(cudaMalloc(&dst, size));
  fill_uniform(src, size / sizeof(float), Elem::kFp32, 3u, d.stream);
  STEPCAST_CUDA_CHECK(last_launch_error());
  const double moved = 2.0 * static_cast<double>(size);
  const double t_memcpy = time_cold(d, s, [&] {
                            STEPCAST_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, d.stream));
                          }).time_s;
  const std::size_t vec_bytes = 16;  // float4
  const double t_kernel = time_cold(d, s, [&] {
                            copy_float4(src, dst, size / vec_bytes, d.stream);
                            STEPCAST_CUDA_CHECK(last_launch_error());
                          }).time_s;
  STEPCAST_CUDA_CHECK(cudaFree(dst));
  STEPCAST_CUDA_CHECK(cudaFree(src));
  auto bw = [&](double t) {
    return nlohmann::json{{"time_s", t}, {"bw_Bps", moved / t}, {"bw_GBps", moved / t / unit::kGiga}};
  };
  std::fprintf(stderr, "%s: memory bandwidth (read + write) cudaMemcpy D2D %.0f GB/s, copy kernel %.0f GB/s\n", kTool,
               moved / t_memcpy / unit::kGiga, moved / t_kernel / unit::kGiga);
  return {{"size_bytes", size},
          {"bytes_per_copy", moved},
          {"counting", "read + write: each copy counts 2 x size_bytes"},
          {"memcpy_d2d", bw(t_memcpy)},
          {"copy_kernel", bw(t_kernel)}};
}

// Prints, for every operator, what the bench would run; no GPU involved.
int plan_only(const Options& o, const std::vector<OperatorList>& lists) {
  const double budget = o.max_bytes > 0.0 ? o.max_bytes : kPlanOnlyBudget;
  for (std::size_t l = 0; l < lists.size(); ++l) {
    std::printf("list %zu: %s (%s)\n", l, lists[l].title.c_str(), lists[l].file.c_str());
    for (const ListOperator& op : lists[l].operators) {
      std::string what;
      if (op.is_gemm()) {
        const GemmPrecision* p = gemm_precision(op.precision);
        what = p == nullptr ? fmt::format("skipped: no GEMM precision \"{}\"", op.precision)
                            : fmt::format("cuBLASLt {} GEMM {} x ({} x {} x {}), operands {:.4g} MB", p->name, op.batch,
                                          op.m, op.n, op.k, gemm_operand_bytes(*p, op.batch, op.m, op.n, op.k) / 1e6);
      } else if (op.is_attention()) {
        what = kAttentionSkip;
      } else {
        what = describe(plan_memory(op, budget));
      }
      std::printf("  %-32s %-16s %s\n", op.name.c_str(), op.pass.c_str(), what.c_str());
    }
  }
  return 0;
}

Outcome run_operator(const Device& d, const Settings& s, const ListOperator& op, double budget) {
  Outcome r;
  if (op.is_attention()) {
    r.skipped = kAttentionSkip;
  } else if (op.is_gemm()) {
    const GemmPrecision* p = gemm_precision(op.precision);
    if (p == nullptr) {
      r.skipped = fmt::format("skipped: no GEMM precision \"{}\"", op.precision);
    } else {
      const GemmResult g = time_gemm(d, s, *p, op.batch, op.m, op.n, op.k);
      r.timing = g.timing;
      r.skipped = g.skipped;
    }
  } else {
    const MemoryPlan plan = plan_memory(op, budget);
    r.skipped = plan.skipped;
    r.fraction = plan.fraction;
    if (r.skipped.empty()) r.timing = time_memory(d, s, plan);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<OperatorList> lists;
  for (const std::string& file : o.lists) lists.push_back(read_operator_list(file));
  if (o.plan_only) return plan_only(o, lists);

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
  int driver = 0;
  int runtime = 0;
  int cublas_major = 0;
  int cublas_minor = 0;
  int cublas_patch = 0;
  STEPCAST_CUDA_CHECK(cudaDriverGetVersion(&driver));
  STEPCAST_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  cublasGetProperty(MAJOR_VERSION, &cublas_major);
  cublasGetProperty(MINOR_VERSION, &cublas_minor);
  cublasGetProperty(PATCH_LEVEL, &cublas_patch);

  Device d;
  d.sm_count = prop.multiProcessorCount;
  d.compute_capability = prop.major * 10 + prop.minor;
  STEPCAST_CUDA_CHECK(cudaStreamCreate(&d.stream));
  STEPCAST_CUDA_CHECK(cudaEventCreate(&d.start));
  STEPCAST_CUDA_CHECK(cudaEventCreate(&d.stop));
  if (cublasLtCreate(&d.lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cublasLtCreate failed\n", kTool);
    return 1;
  }
  STEPCAST_CUDA_CHECK(cudaMalloc(&d.workspace, kWorkspaceBytes));
  // Twice the L2, at least 64 MiB: every line of the L2 is overwritten before a timed run.
  d.flush_bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(prop.l2CacheSize), std::size_t{64} << 20);
  STEPCAST_CUDA_CHECK(cudaMalloc(&d.flush, d.flush_bytes));

  nlohmann::json j;
  j["tool"] = kTool;
  j["version"] = STEPCAST_VERSION;
  j["schema_version"] = kSchemaVersion;
  j["gpu"] = {{"index", 0},
              {"name", prop.name},
              {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
              {"memory_bytes", prop.totalGlobalMem},
              {"multiprocessors", prop.multiProcessorCount},
              {"l2_bytes", prop.l2CacheSize}};
  j["driver_version"] = version_text(driver);
  j["cuda_runtime_version"] = version_text(runtime);
  j["cublas_version"] = fmt::format("{}.{}.{}", cublas_major, cublas_minor, cublas_patch);
  j["cublaslt_version"] = std::to_string(cublasLtGetVersion());
  j["warmup_iters"] = o.settings.warmup;
  j["iters"] = o.settings.iters;
  j["max_seconds_per_operator"] = o.settings.max_seconds;
  j["timing"] =
      "per operator: warmup runs, then timed runs (at most iters, stopping near max_seconds_per_operator, at least 3), "
      "each after a "
      "memset of twice the L2 and a 100 us spin kernel, between its own CUDA events; time_s is their median. Operators "
      "with the same "
      "kind, precision, shape and stand-in are timed once; later rows repeat the time.";
  j["gemm_layout"] = kGemmLayout;
  j["launch"] = time_launches(d);

  std::size_t free_b = 0;
  std::size_t total_b = 0;
  STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double budget = o.max_bytes > 0.0 ? o.max_bytes : kBudgetShare * static_cast<double>(free_b);
  nlohmann::json list_json = nlohmann::json::array();
  nlohmann::json operators = nlohmann::json::array();
  std::map<std::string, Outcome> seen;
  for (std::size_t l = 0; l < lists.size(); ++l) {
    list_json.push_back({{"file", lists[l].file}, {"title", lists[l].title}, {"notes", lists[l].notes}});
    for (const ListOperator& op : lists[l].operators) {
      const std::string key = identity(op);
      auto it = seen.find(key);
      if (it == seen.end()) it = seen.emplace(key, run_operator(d, o.settings, op, budget)).first;
      const Outcome& r = it->second;
      if (r.skipped.empty()) {
        const double t = r.timing.time_s;
        std::fprintf(stderr, "%s: [%zu] %-32s %-16s %-5s %12.2f us  %8.1f TFLOP/s %8.0f GB/s\n", kTool, l,
                     op.name.c_str(), op.pass.c_str(), op.precision.c_str(), t * unit::kMega,
                     flops_of(op) / t / unit::kTera, op.bytes / t / unit::kGiga);
      } else {
        std::fprintf(stderr, "%s: [%zu] %-32s %-16s %s\n", kTool, l, op.name.c_str(), op.pass.c_str(),
                     r.skipped.c_str());
      }
      operators.push_back(operator_json(static_cast<int>(l), op, r));
    }
  }
  j["lists"] = list_json;
  j["operators"] = operators;
  j["memory_bandwidth"] = time_bandwidth(d, o.settings);

  STEPCAST_CUDA_CHECK(cudaFree(d.flush));
  STEPCAST_CUDA_CHECK(cudaFree(d.workspace));
  cublasLtDestroy(d.lt);
  STEPCAST_CUDA_CHECK(cudaEventDestroy(d.stop));
  STEPCAST_CUDA_CHECK(cudaEventDestroy(d.start));
  STEPCAST_CUDA_CHECK(cudaStreamDestroy(d.stream));
  write_output(j, o.output);
  return 0;
}
