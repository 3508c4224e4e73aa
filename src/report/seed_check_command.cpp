// `stepcast seed-check`, also the default report: the worked communication check of the seed
// document (7B model, fp16 gradients, ring all-reduce on 400 Gbps links, 8-way FSDP memory),
// computed by the cost model, then the same all-reduce on p4d nodes that share their NICs.
#include "stepcast/report/seed_check_command.hpp"

#include <fmt/format.h>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

namespace {

// The seed's rows: ring all-reduce of the fp16 gradients over N GPUs of the flat machine.
constexpr int kSeedGpuCounts[] = {2, 4, 8, 16};
// The cluster rows: 2 and 4 nodes of the multi-GPU node type.
constexpr int kClusterNodeCounts[] = {2, 4};
// fp16 gradients: 2 bytes per parameter (seed: "7B x 2 / 1024^3 = 13.04 GiB").
constexpr double kGradientBytesPerParameter = 2.0;
// The seed's FSDP example: 8-way, fp16 parameters and gradients, Adam.
constexpr const char* kSeedFsdpPlan = "fsdp=8";
constexpr int kSeedFsdpRanks = 8;

struct Row {
  int nodes = 0;
  int gpus = 0;
  cost::Algorithm algorithm = cost::Algorithm::kRing;
  cost::CollectiveCost cost;
};

// "7e9", "1.4e10": counts as the seed writes them, without printf's "e+09".
std::string short_count(double x) {
  if (x <= 0.0) return fmt::format("{:g}", x);
  const int exponent = static_cast<int>(std::floor(std::log10(x)));
  return fmt::format("{:g}e{}", x / std::pow(10.0, exponent), exponent);
}

Row all_reduce_row(const topology::Topology& topo, cost::Algorithm algorithm, Bytes gradients) {
  const topology::CommTiers tiers = topo.tiers(topo.gpu_count());
  return {tiers.nodes, tiers.ranks, algorithm,
          cost::estimate_collective(cost::CollectiveOp::kAllReduce, algorithm, gradients, tiers)};
}

nlohmann::json row_json(const Row& r) {
  return {{"nodes", r.nodes},
          {"gpus", r.gpus},
          {"algorithm", std::string(cost::to_string(r.algorithm))},
          {"bytes_sent_per_rank", r.cost.bytes_sent_per_rank.value()},
          {"time_s", r.cost.time.value()},
          {"busbw_GBps", r.cost.busbw.value() / unit::kGiga}};
}

}  // namespace

std::string seed_check_command(const SeedCheckRequest& o) {
  const workload::Workload model = workload::load_workload(data_path(o.workload));
  const Bytes gradients(model.parameters * kGradientBytesPerParameter);

  std::vector<Row> seed_rows;
  for (int n : kSeedGpuCounts) {
    seed_rows.push_back(
        all_reduce_row(topology::load_topology(data_path(o.flat), n), cost::Algorithm::kRing, gradients));
  }

  plan::Plan fsdp = plan::parse_plan(kSeedFsdpPlan);
  fsdp.precision = plan::Precision::kFp16;
  fsdp.optimizer = plan::Optimizer::kAdam;
  fsdp = plan::resolve(fsdp, model, kSeedFsdpRanks);
  plan::validate(fsdp, model, kSeedFsdpRanks);
  const cost::ModelState state = cost::model_state(model, fsdp);
  const auto per_param = cost::state_bytes_per_parameter(fsdp.precision, fsdp.optimizer);

  std::vector<Row> cluster_rows;
  std::string cluster_name;
  for (int nodes : kClusterNodeCounts) {
    const topology::Topology topo = topology::load_topology(data_path(o.cluster), nodes);
    cluster_name = topo.name();
    cluster_rows.push_back(all_reduce_row(topo, cost::Algorithm::kRing, gradients));
    cluster_rows.push_back(all_reduce_row(topo, cost::Algorithm::kHierarchical, gradients));
  }

  if (o.json) {
    nlohmann::json j;
    j["workload"] = model.name;
    j["gradient_bytes"] = gradients.value();
    j["flat"] = nlohmann::json::array();
    for (const Row& r : seed_rows) j["flat"].push_back(row_json(r));
    j["fsdp"] = {{"plan", plan::to_string(fsdp)},
                 {"model_state_bytes_per_rank", state.total().value()},
                 {"parameters_bytes", state.parameters.value()},
                 {"gradients_bytes", state.gradients.value()},
                 {"optimizer_state_bytes", state.optimizer_state.value()}};
    j["cluster"] = {{"topology", cluster_name}, {"rows", nlohmann::json::array()}};
    for (const Row& r : cluster_rows) j["cluster"]["rows"].push_back(row_json(r));
    return j.dump(2) + "\n";
  }

  std::string out;
  out += "stepcast seed-check: the seed's worked communication check, computed by the cost model\n\n";
  out += fmt::format("{}: {} parameters x {:g} bytes (fp16 gradients) = {} B = {}\n", model.name,
                     short_count(model.parameters), kGradientBytesPerParameter, short_count(gradients.value()),
                     format_bytes(gradients));
  out += fmt::format("Ring all-reduce on {} (every GPU on its own 400 Gbps link, no latency):\n", o.flat);
  out += fmt::format("  {:>4}  {:>16}  {:>27}\n", "GPUs", "transfer per GPU", "ideal time on 400 Gbps link");
  for (const Row& r : seed_rows) {
    out += fmt::format("  {:>4}  {:>16}  {:>27}\n", r.gpus, format_bytes(r.cost.bytes_sent_per_rank),
                       format_seconds(r.cost.time));
  }
  out +=
      "  transfer per GPU = 2(N-1)/N x S; time = transfer / 50e9 B/s (seed; the bandwidth-optimal ring of Patarasuk "
      "and Yuan 2009)\n\n";
  out += fmt::format(
      "{}-way FSDP, fp16 parameters and gradients, Adam ({:g}+{:g}+{:g} bytes/parameter, ZeRO paper):\n"
      "  model state per rank = {:g} B/param x {} / {} = {}\n\n",
      kSeedFsdpRanks, per_param.parameters, per_param.gradients, per_param.optimizer,
      per_param.parameters + per_param.gradients + per_param.optimizer, short_count(model.parameters), kSeedFsdpRanks,
      format_bytes(state.total()));
  out += fmt::format("The same all-reduce on {} ({}), whose 8 GPUs per node share the node's NICs:\n", cluster_name,
                     o.cluster);
  out += fmt::format("  {:>5}  {:>4}  {:<12}  {:>16}  {:>9}  {:>11}\n", "nodes", "GPUs", "algorithm",
                     "transfer per GPU", "time", "busbw");
  for (const Row& r : cluster_rows) {
    out += fmt::format("  {:>5}  {:>4}  {:<12}  {:>16}  {:>9}  {:>11}\n", r.nodes, r.gpus, cost::to_string(r.algorithm),
                       format_bytes(r.cost.bytes_sent_per_rank), format_seconds(r.cost.time),
                       format_bandwidth(r.cost.busbw));
  }
  out +=
      "  A flat ring crosses every node boundary with a full 2(N-1)/N x S, so the node's shared NICs, not\n"
      "  the GPU count, set its time. The hierarchical all-reduce reduce-scatters over NVLink first, so\n"
      "  each node sends only 2(n-1)/n x S through its NICs: the same 400 Gbps goes further.\n"
      "  (`stepcast collective ... --explain` shows every term.)\n";
  return out;
}

}  // namespace stepcast::report
