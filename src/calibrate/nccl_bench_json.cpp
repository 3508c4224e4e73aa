// Reading stepcast-nccl-bench's JSON output (schema in validate/README.md) into the same
// measurement series as an nccl-tests log, so calibrate and validate take either.
#include "stepcast/calibrate/measurement.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stepcast/core/json_reader.hpp"

namespace stepcast::calibrate {
namespace {

MeasuredPoint read_point(const JsonReader& r) {
  r.check_keys({"size_bytes", "count", "type", "time_s", "algbw_Bps", "busbw_Bps", "wrong", "in_place"});
  MeasuredPoint p;
  p.size = Bytes(static_cast<double>(r.at("size_bytes").integer()));
  if (p.size.value() < 0.0) r.at("size_bytes").fail("a size cannot be negative");
  p.count = r.at("count").integer();
  p.type = r.at("type").string();
  p.out_of_place.time = Seconds(r.at("time_s").positive_number());
  p.out_of_place.algbw = BytesPerSecond(r.at("algbw_Bps").number());
  p.out_of_place.busbw = BytesPerSecond(r.at("busbw_Bps").number());
  p.out_of_place.wrong = static_cast<double>(r.at("wrong").integer());
  if (auto v = r.find("in_place")) {
    v->check_keys({"time_s", "algbw_Bps", "busbw_Bps", "wrong"});
    MeasuredTiming t;
    t.time = Seconds(v->at("time_s").positive_number());
    t.algbw = BytesPerSecond(v->at("algbw_Bps").number());
    t.busbw = BytesPerSecond(v->at("busbw_Bps").number());
    t.wrong = static_cast<double>(v->at("wrong").integer());
    p.in_place = t;
  }
  return p;
}

}  // namespace

Measurements parse_nccl_bench_json(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parse_json_text(text, origin);
  const JsonReader root(j, origin);
  root.check_keys({"tool", "schema_version", "host", "gpus", "driver_version", "cuda_runtime_version", "nccl_version",
                   "warmup_iters", "iters", "results", "notes"});
  if (root.at("tool").string() != "stepcast-nccl-bench") {
    root.at("tool").fail(fmt::format("expected \"stepcast-nccl-bench\", got \"{}\"", root.at("tool").string()));
  }
  std::vector<std::string> gpu_names;
  for (const JsonReader& g : root.at("gpus").elements()) {
    g.check_keys({"index", "name", "memory_bytes", "pci_bus_id"});
    gpu_names.push_back(g.at("name").string());
  }
  Measurements m;
  m.file = origin;
  for (const JsonReader& r : root.at("results").elements()) {
    r.check_keys({"op", "ranks", "points"});
    MeasuredCollective run;
    const auto op = cost::parse_collective_op(r.at("op").string());
    if (!op) r.at("op").fail(fmt::format("unknown collective \"{}\"", r.at("op").string()));
    run.op = *op;
    run.program = "stepcast-nccl-bench";
    run.ranks = static_cast<int>(r.at("ranks").count());
    if (run.ranks > static_cast<int>(gpu_names.size())) r.at("ranks").fail("more ranks than GPUs listed in /gpus");
    run.hosts = 1;
    run.devices.assign(gpu_names.begin(), gpu_names.begin() + run.ranks);
    for (const JsonReader& p : r.at("points").elements()) run.points.push_back(read_point(p));
    if (run.points.empty()) r.at("points").fail("a result without points");
    run.file = origin;
    m.runs.push_back(std::move(run));
  }
  return m;
}

}  // namespace stepcast::calibrate
