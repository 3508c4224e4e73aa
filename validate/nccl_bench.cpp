// stepcast-nccl-bench: times NCCL collectives over every visible GPU (one process,
// ncclCommInitAll and group calls, as nccl-tests' -g mode) and writes JSON (validate/README.md).
// With no GPU it exits 77, the skip code CTest is told about.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "stepcast/core/units.hpp"

namespace {

constexpr int kSkip = 77;

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
constexpr Op kOps[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                       Op::kReduce,    Op::kAllToAll,  Op::kSendRecv};

const char* name_of(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all-reduce";
    case Op::kAllGather:
      return "all-gather";
    case Op::kReduceScatter:
      return "reduce-scatter";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kReduce:
      return "reduce";
    case Op::kAllToAll:
      return "all-to-all";
    case Op::kSendRecv:
      return "send-recv";
  }
  return "?";
}

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x this factor.
double bus_factor(Op op, int n) {
  const double d = static_cast<double>(n);
  switch (op) {
    case Op::kAllReduce:
      return 2.0 * (d - 1.0) / d;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return (d - 1.0) / d;
    default:
      return 1.0;
  }
}

struct Buffers {
  float* send = nullptr;
  float* recv = nullptr;
  cudaStream_t stream{};
  cudaEvent_t start{};
  cudaEvent_t stop{};
};

// One operation on every rank, in one group (nccl-tests' single-process mode). `bytes` is
// nccl-tests' S for the collective; all counts are in floats.
void launch(Op op, std::size_t bytes, const std::vector<ncclComm_t>& comms, const std::vector<Buffers>& b) {
  const int n = static_cast<int>(comms.size());
  const std::size_t count = bytes / sizeof(float);
  const std::size_t chunk = count / static_cast<std::size_t>(n);
  STEPCAST_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    switch (op) {
      case Op::kAllReduce:
        STEPCAST_NCCL_CHECK(ncclAllReduce(b[ur].send, b[ur].recv, count, ncclFloat, ncclSum, comms[ur], b[ur].stream));
        break;
      case Op::kAllGather:
        STEPCAST_NCCL_CHECK(ncclAllGather(b[ur].send, b[ur].recv, chunk, ncclFloat, comms[ur], b[ur].stream));
        break;
      case Op::kReduceScatter:
        STEPCAST_NCCL_CHECK(
            ncclReduceScatter(b[ur].send, b[ur].recv, chunk, ncclFloat, ncclSum, comms[ur], b[ur].stream));
        break;
      case Op::kBroadcast:
        STEPCAST_NCCL_CHECK(ncclBroadcast(b[ur].send, b[ur].recv, count, ncclFloat, 0, comms[ur], b[ur].stream));
        break;
      case Op::kReduce:
        STEPCAST_NCCL_CHECK(ncclReduce(b[ur].send, b[ur].recv, count, ncclFloat, ncclSum, 0, comms[ur], b[ur].stream));
        break;
      case Op::kAllToAll:
        for (int p = 0; p < n; ++p) {
          const auto up = static_cast<std::size_t>(p);
          STEPCAST_NCCL_CHECK(ncclSend(b[ur].send + up * chunk, chunk, ncclFloat, p, comms[ur], b[ur].stream));
          STEPCAST_NCCL_CHECK(ncclRecv(b[ur].recv + up * chunk, chunk, ncclFloat, p, comms[ur], b[ur].stream));
        }
        break;
      case Op::kSendRecv:
        STEPCAST_NCCL_CHECK(ncclSend(b[ur].send, count, ncclFloat, (r + 1) % n, comms[ur], b[ur].stream));
        STEPCAST_NCCL_CHECK(ncclRecv(b[ur].recv, count, ncclFloat, (r + n - 1) % n, comms[ur], b[ur].stream));
        break;
    }
  }
  STEPCAST_NCCL_CHECK(ncclGroupEnd());
}

// The value rank r's send buffer holds, and what each element of a result must then be: small
// integers, exact in float, so any wrong element is a real error.
float value_of(int rank) { return static_cast<float>(rank + 1); }

float expected(Op op, int rank, std::size_t element, std::size_t chunk, int n) {
  const float sum = static_cast<float>(n * (n + 1) / 2);
  switch (op) {
    case Op::kAllReduce:
    case Op::kReduceScatter:
      return sum;
    case Op::kReduce:
      return rank == 0 ? sum : -1.0f;
    case Op::kBroadcast:
      return value_of(0);
    case Op::kAllGather:
    case Op::kAllToAll:
      return value_of(static_cast<int>(element / chunk));
    case Op::kSendRecv:
      return value_of((rank + n - 1) % n);
  }
  return 0.0f;
}

// Counts wrong elements of every rank's result (the root's alone for reduce).
std::int64_t check(Op op, std::size_t bytes, const std::vector<Buffers>& b, int n) {
  const std::size_t count =
      op == Op::kReduceScatter ? bytes / sizeof(float) / static_cast<std::size_t>(n) : bytes / sizeof(float);
  const std::size_t chunk = std::max<std::size_t>(1, bytes / sizeof(float) / static_cast<std::size_t>(n));
  std::int64_t wrong = 0;
  std::vector<float> host(count);
  for (int r = 0; r < n; ++r) {
    if (op == Op::kReduce && r != 0) continue;
    STEPCAST_CUDA_CHECK(cudaSetDevice(r));
    STEPCAST_CUDA_CHECK(
        cudaMemcpy(host.data(), b[static_cast<std::size_t>(r)].recv, count * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i) {
      if (host[i] != expected(op, r, i, chunk, n)) ++wrong;
    }
  }
  return wrong;
}

std::string arg(int argc, char** argv, const std::string& flag, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == flag) return argv[i + 1];
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t probe = cudaGetDeviceCount(&n);
  if (probe != cudaSuccess || n == 0) {
    std::fprintf(stderr, "stepcast-nccl-bench: no CUDA GPU visible (%s); skipping (exit 77)\n",
                 probe != cudaSuccess ? cudaGetErrorString(probe) : "0 devices");
    return kSkip;
  }
  double max_bytes = 0.0;
  double min_bytes = 0.0;
  try {
    max_bytes = stepcast::parse_bytes(arg(argc, argv, "--max-size", "8GiB")).value();
    min_bytes = stepcast::parse_bytes(arg(argc, argv, "--min-size", "8B")).value();
  } catch (const stepcast::UnitError& e) {
    std::fprintf(stderr, "stepcast-nccl-bench: %s\n", e.what());
    return 2;
  }
  const int warmup = std::atoi(arg(argc, argv, "--warmup", "5").c_str());
  const int iters = std::max(1, std::atoi(arg(argc, argv, "--iters", "20").c_str()));
  const std::string out_path = arg(argc, argv, "-o", "");

  nlohmann::json j;
  j["tool"] = "stepcast-nccl-bench";
  j["schema_version"] = 1;
  j["host"] = "";
  int driver = 0, runtime = 0, nccl = 0;
  STEPCAST_CUDA_CHECK(cudaDriverGetVersion(&driver));
  STEPCAST_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  STEPCAST_NCCL_CHECK(ncclGetVersion(&nccl));
  j["driver_version"] = fmt::format("{}.{}", driver / 1000, driver % 1000 / 10);
  j["cuda_runtime_version"] = fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10);
  j["nccl_version"] = std::to_string(nccl);
  j["warmup_iters"] = warmup;
  j["iters"] = iters;
  std::size_t free_min = SIZE_MAX;
  j["gpus"] = nlohmann::json::array();
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    STEPCAST_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    char bus[32] = {};
    STEPCAST_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    j["gpus"].push_back({{"index", d}, {"name", p.name}, {"memory_bytes", p.totalGlobalMem}, {"pci_bus_id", bus}});
    STEPCAST_CUDA_CHECK(cudaSetDevice(d));
    std::size_t free_b = 0, total_b = 0;
    STEPCAST_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    free_min = std::min(free_min, free_b);
  }
  // Two buffers of the largest size per GPU, leaving a quarter of free memory to NCCL and CUDA.
  while (max_bytes * 2.0 > static_cast<double>(free_min) * 0.75) max_bytes /= 2.0;
  const auto max_size = static_cast<std::size_t>(max_bytes);
  j["notes"] = n == 1 ? "one GPU: collectives run over 1 rank (busbw factor 0 for all-reduce etc.); multi-GPU "
                        "collectives need more GPUs, use public nccl-tests logs for them"
                      : "";

  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  STEPCAST_NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
  std::vector<Buffers> b(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    auto& x = b[static_cast<std::size_t>(d)];
    STEPCAST_CUDA_CHECK(cudaSetDevice(d));
    STEPCAST_CUDA_CHECK(cudaMalloc(&x.send, max_size));
    STEPCAST_CUDA_CHECK(cudaMalloc(&x.recv, max_size));
    STEPCAST_CUDA_CHECK(cudaStreamCreate(&x.stream));
    STEPCAST_CUDA_CHECK(cudaEventCreate(&x.start));
    STEPCAST_CUDA_CHECK(cudaEventCreate(&x.stop));
    const std::vector<float> fill(max_size / sizeof(float), value_of(d));
    STEPCAST_CUDA_CHECK(
        cudaMemcpy(x.send, fill.data(), max_size / sizeof(float) * sizeof(float), cudaMemcpyHostToDevice));
  }
  j["results"] = nlohmann::json::array();
  for (Op op : kOps) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t bytes = static_cast<std::size_t>(std::max(8.0, min_bytes)); bytes <= max_size; bytes *= 2) {
      const std::size_t floats = bytes / sizeof(float);
      if (floats % static_cast<std::size_t>(n) != 0) continue;  // chunked collectives need S/n whole floats
      for (auto& x : b) {
        STEPCAST_CUDA_CHECK(cudaSetDevice(static_cast<int>(&x - b.data())));
        STEPCAST_CUDA_CHECK(cudaMemsetAsync(x.recv, 0xff, bytes, x.stream));  // -NaN: a missed write shows
      }
      for (int i = 0; i < warmup; ++i) launch(op, bytes, comms, b);
      for (int d = 0; d < n; ++d)
        STEPCAST_CUDA_CHECK(
            cudaEventRecord(b[static_cast<std::size_t>(d)].start, b[static_cast<std::size_t>(d)].stream));
      for (int i = 0; i < iters; ++i) launch(op, bytes, comms, b);
      float worst_ms = 0.0f;
      for (int d = 0; d < n; ++d) {
        auto& x = b[static_cast<std::size_t>(d)];
        STEPCAST_CUDA_CHECK(cudaEventRecord(x.stop, x.stream));
        STEPCAST_CUDA_CHECK(cudaEventSynchronize(x.stop));
        float ms = 0.0f;
        STEPCAST_CUDA_CHECK(cudaEventElapsedTime(&ms, x.start, x.stop));
        worst_ms = std::max(worst_ms, ms);
      }
      const double t = static_cast<double>(worst_ms) / stepcast::unit::kKilo / iters;
      const double algbw = static_cast<double>(bytes) / t;
      const std::int64_t wrong = check(op, bytes, b, n);
      points.push_back({{"size_bytes", bytes},
                        {"count", floats},
                        {"type", "float"},
                        {"time_s", t},
                        {"algbw_Bps", algbw},
                        {"busbw_Bps", algbw * bus_factor(op, n)},
                        {"wrong", wrong}});
    }
    j["results"].push_back({{"op", name_of(op)}, {"ranks", n}, {"points", points}});
  }
  for (auto& c : comms) STEPCAST_NCCL_CHECK(ncclCommDestroy(c));
  const std::string text = j.dump(2) + "\n";
  if (out_path.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::FILE* f = std::fopen(out_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "stepcast-nccl-bench: cannot write %s\n", out_path.c_str());
      return 2;
    }
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  return 0;
}
