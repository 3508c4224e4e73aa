// The capacity sweep: one search (or one plan evaluation) per workload, cluster and GPU count,
// and the arithmetic of training time and cost.
#include "stepcast/planner/capacity.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::planner {
namespace {

constexpr double kHoursPerDay = 24.0;

CapacityCell searched_cell(const workload::Workload& w, const topology::Topology& topo, const CapacityRequest& req,
                           int gpus) {
  CapacityCell cell;
  SearchSpace space;
  space.gpus = gpus;
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = req.global_batch;
  space.seq_len = req.seq_len;
  space.max_micro_batch = req.max_micro_batch;
  space.max_cp = req.max_cp;
  space.base = req.base;
  SearchOptions options = req.search;
  options.on_progress = nullptr;
  const SearchResult result = search(w, topo, space, options);
  cell.candidates = result.candidates;
  if (!result.ranked.empty()) {
    cell.plan = result.ranked.front().plan;
    cell.metrics = result.ranked.front().metrics;
    cell.fits = true;
  } else if (result.least_memory) {
    cell.plan = result.least_memory->plan;
    cell.metrics = result.least_memory->metrics;
    cell.note = fmt::format("no plan fits; the smallest needs {} per GPU", format_bytes(cell.metrics.memory.total));
  } else {
    cell.note = result.rejections.empty() ? std::string("no candidate plan") : "no valid plan: " + result.rejections.front().example;
  }
  return cell;
}

CapacityCell family_cell(const workload::Workload& w, const topology::Topology& topo, const CapacityRequest& req, int gpus) {
  CapacityCell cell;
  cell.candidates = 1;
  plan::Plan p = *req.plan;
  p.dp = 0;
  if (req.global_batch > 0) p.global_batch = req.global_batch;
  if (req.seq_len > 0) p.seq_len = req.seq_len;
  // dp follows the GPU count; a hybrid family keeps its shard group, other shardings span dp.
  if (p.sharding != plan::Sharding::kFsdpHybrid) p.shard_group = 0;
  p = plan::resolve(p, w, gpus);
  SearchSpace space;
  space.gpus = gpus;
  space.gpus_per_node = topo.gpus_per_node();
  space.max_tp_in_node = false;  // the user chose tp
  const Evaluation e = evaluate_plan(w, topo, p, space, req.search.step);
  if (e.outcome == Evaluation::Outcome::kInvalid) {
    cell.note = "invalid: " + e.problem;
    return cell;
  }
  cell.plan = p;
  cell.metrics = e.metrics;
  cell.fits = e.outcome == Evaluation::Outcome::kFits;
  if (!cell.fits) cell.note = "does not fit: " + e.problem;
  return cell;
}

}  // namespace

TrainingCost training_cost(double tokens, int global_batch, int seq_len, Seconds step_time, int gpus,
                           double price_per_gpu_hour) {
  STEPCAST_ASSERT(tokens > 0.0 && global_batch > 0 && seq_len > 0 && gpus > 0, "training cost needs positive inputs");
  TrainingCost c;
  const double tokens_per_step = static_cast<double>(global_batch) * static_cast<double>(seq_len);
  c.time = step_time * (tokens / tokens_per_step);
  const double hours = c.time.value() / unit::kSecondsPerHour;
  c.days = hours / kHoursPerDay;
  c.gpu_hours = hours * gpus;
  c.cost = c.gpu_hours * price_per_gpu_hour;
  return c;
}

std::vector<CapacityCell> capacity_sweep(const CapacityRequest& req) {
  std::vector<CapacityCell> cells;
  std::size_t done = 0;
  for (const auto& w : req.workloads) {
    for (const auto& file : req.topologies) {
      // The file's own size tells the node shape; a scale-up domain (NVL72) is one node of the
      // graph made of several nodes (trays) of the file, which --nodes counts.
      const topology::Topology shape = topology::load_topology(file);
      const int per_node = shape.gpus_per_node();
      for (const int gpus : req.gpus) {
        STEPCAST_ASSERT(gpus >= 1, "GPU counts are positive");
        const int nodes = (gpus + per_node - 1) / per_node;
        const topology::Topology topo = topology::load_topology(file, nodes * shape.trays_per_node());
        CapacityCell cell;
        if (gpus > per_node && gpus % per_node != 0) {
          cell.note = fmt::format("{} GPUs do not fill whole nodes of {}", gpus, per_node);
        } else {
          cell = req.plan ? family_cell(w, topo, req, gpus) : searched_cell(w, topo, req, gpus);
        }
        cell.workload = w.name;
        cell.topology = topo.name();
        cell.gpu = topo.gpu().name;
        cell.gpus = gpus;
        cell.nodes = nodes * shape.trays_per_node();  // as --nodes counts them: trays of an NVL72
        cells.push_back(std::move(cell));
        if (req.on_cell) req.on_cell(++done);
      }
    }
  }
  return cells;
}

}  // namespace stepcast::planner
