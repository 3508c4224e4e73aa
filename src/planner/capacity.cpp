// The capacity sweep: one search (or one plan evaluation) per workload, cluster and GPU count,
// and the arithmetic of training time and cost.
#include "stepcast/planner/capacity.hpp"

#include <fmt/format.h>

#include <numeric>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/planner/refine.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::planner {
namespace {

constexpr double kHoursPerDay = 24.0;

SearchSpace cell_space(const topology::Topology& topo, const CapacityRequest& req, int gpus) {
  SearchSpace space;
  space.gpus = gpus;
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = req.global_batch;
  space.seq_len = req.seq_len;
  space.max_micro_batch = req.max_micro_batch;
  space.max_cp = req.max_cp;
  space.base = req.base;
  return space;
}

CapacityCell searched_cell(const workload::Workload& w, const topology::Topology& topo, const CapacityRequest& req,
                           int gpus) {
  CapacityCell cell;
  const SearchSpace space = cell_space(topo, req, gpus);
  SearchOptions options = req.search;
  options.on_progress = nullptr;
  SearchResult result = search(w, topo, space, options);
  if (req.refine > 0) refine_top(result, w, topo, req.refine, options.step, options.threads);
  cell.candidates = result.candidates;
  if (!result.ranked.empty()) {
    cell.plan = result.ranked.front().plan;
    cell.metrics = result.ranked.front().metrics;
    cell.simulated_step_time = result.ranked.front().simulated_step_time;
    cell.plan_id = result.ranked.front().id;
    cell.fits = true;
  } else if (result.least_memory) {
    cell.plan = result.least_memory->plan;
    cell.metrics = result.least_memory->metrics;
    cell.plan_id = result.least_memory->id;
    cell.note = fmt::format("no plan fits; the smallest needs {} per GPU", format_bytes(cell.metrics.memory.total));
  } else {
    cell.note = result.rejections.empty() ? std::string("no candidate plan")
                                          : "no valid plan: " + plan::describe(result.rejections.front().example);
  }
  return cell;
}

CapacityCell family_cell(const workload::Workload& w, const topology::Topology& topo, const CapacityRequest& req,
                         int gpus) {
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
    cell.note = "invalid: " + plan::describe(e.verdict);
    return cell;
  }
  cell.plan = p;
  cell.metrics = e.metrics;
  cell.fits = e.outcome == Evaluation::Outcome::kFits;
  if (!cell.fits) cell.note = "does not fit: " + plan::describe(e.verdict);
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

std::vector<CellSpec> capacity_cells(const CapacityRequest& req) {
  std::vector<CellSpec> specs;
  for (std::size_t w = 0; w < req.workloads.size(); ++w) {
    for (std::size_t t = 0; t < req.topologies.size(); ++t) {
      for (const int gpus : req.gpus) specs.push_back({w, t, gpus});
    }
  }
  return specs;
}

namespace {

struct CellPlace {
  int per_node = 0;
  int nodes = 0;            ///< as --nodes counts them: trays of an NVL72 rack
  bool whole_nodes = true;  ///< false: a count above one node that the node size does not divide
  /// The GPUs of each scale-up domain the cell uses where its count fills no whole domains but
  /// whole trays of several do (the search's placement, topology::partial_domain_gpus); 0: the
  /// request's --gpus-per-domain.
  int per_domain = 0;
};

// A topology of the request as its file, --set edits and --gpus-per-domain (or the cell's own
// part of each domain) describe it.
topology::Topology load(const CapacityRequest& req, std::size_t index, std::optional<int> nodes = std::nullopt,
                        int cell_per_domain = 0) {
  const int d = cell_per_domain > 0 ? cell_per_domain : req.gpus_per_domain;
  return topology::load_topology_with_sets(req.topologies[index], nodes, req.sets,
                                           d > 0 ? std::optional<int>(d) : std::nullopt);
}

/// The parts of each scale-up domain a cell is searched on (0: whole domains, or the request's
/// --gpus-per-domain), as `search` places a GPU count (topology::domain_placements).
std::vector<int> placements(const CapacityRequest& req, const CellSpec& spec) {
  if (req.gpus_per_domain > 0) return {0};
  std::vector<int> out = topology::domain_placements(spec.gpus, load(req, spec.topology));
  if (req.plan) out.resize(1);  // a plan family is priced where the count is placed first
  return out;
}

CellPlace place(const CapacityRequest& req, const CellSpec& spec, int per_domain) {
  STEPCAST_ASSERT(spec.gpus >= 1, "GPU counts are positive");
  CellPlace p;
  // The file's own size tells the node shape; a scale-up domain (NVL72) is one node of the
  // graph made of several nodes (trays) of the file, which --nodes counts.
  const topology::Topology shape = load(req, spec.topology);
  p.per_node = shape.gpus_per_node();
  p.per_domain = per_domain;
  if (p.per_domain > 0) p.per_node = p.per_domain;
  p.nodes = (spec.gpus + p.per_node - 1) / p.per_node * shape.trays_per_node();
  p.whole_nodes = !(spec.gpus > p.per_node && spec.gpus % p.per_node != 0);
  return p;
}

/// "64 of each of 2 NVLink domains' 72 GPUs" where the cell runs on part of each domain.
void note_placement(CapacityCell& cell, const CellPlace& p, const CellSpec& spec, const topology::Topology& topo) {
  cell.per_domain = p.per_domain;
  if (p.per_domain == 0) return;
  const std::string placed = fmt::format("{} of each of {} NVLink domains' {} GPUs", p.per_domain,
                                         spec.gpus / p.per_domain, topo.domain_gpus());
  cell.note = cell.note.empty() ? placed : placed + "; " + cell.note;
}

/// The step a cell ranks by (the engine's where refined); none when nothing fits.
std::optional<Seconds> ranked_step(const CapacityCell& cell) {
  if (!cell.fits || !cell.plan) return std::nullopt;
  return cell.simulated_step_time.value_or(cell.metrics.step_time);
}

void label(const CapacityRequest& req, CapacityCell& cell, const workload::Workload& w, const topology::Topology& topo,
           const CellSpec& spec, int nodes) {
  if (spec.topology < req.prices.size() && req.prices[spec.topology] > 0.0) {
    cell.price = topology::GpuHourPrice{req.prices[spec.topology], "--price"};
  } else {
    cell.price = topo.price();
  }
  cell.workload = w.name;
  cell.topology = topo.name();
  cell.gpu = topo.gpu().name;
  cell.gpus = spec.gpus;
  cell.nodes = nodes;
}

}  // namespace

std::vector<std::size_t> cell_searches(const CapacityRequest& req, const CellSpec& spec) {
  std::vector<std::size_t> out;
  for (const int per_domain : placements(req, spec)) {
    const CellPlace p = place(req, spec, per_domain);
    if (req.plan || !p.whole_nodes) return {1};
    const topology::Topology topo = load(req, spec.topology, p.nodes, p.per_domain);
    out.push_back(count_candidates(cell_space(topo, req, spec.gpus), req.workloads[spec.workload]));
  }
  return out;
}

std::size_t cell_candidates(const CapacityRequest& req, const CellSpec& spec) {
  const std::vector<std::size_t> searches = cell_searches(req, spec);
  return std::accumulate(searches.begin(), searches.end(), std::size_t{0});
}

namespace {

CapacityCell placed_cell(const CapacityRequest& req, const CellSpec& spec, int per_domain) {
  const workload::Workload& w = req.workloads[spec.workload];
  const CellPlace p = place(req, spec, per_domain);
  const topology::Topology topo = load(req, spec.topology, p.nodes, p.per_domain);
  CapacityCell cell;
  if (!p.whole_nodes) {
    cell.note = fmt::format("{} GPUs do not fill whole nodes of {}", spec.gpus, p.per_node);
  } else {
    cell = req.plan ? family_cell(w, topo, req, spec.gpus) : searched_cell(w, topo, req, spec.gpus);
  }
  note_placement(cell, p, spec, topo);
  label(req, cell, w, topo, spec, p.nodes);
  return cell;
}

}  // namespace

CapacityCell capacity_cell(const CapacityRequest& req, const CellSpec& spec) {
  const std::vector<int> options = placements(req, spec);
  CapacityCell best = placed_cell(req, spec, options.front());
  if (options.size() == 1) return best;
  // Searched whole and on part of each domain: the faster fitting cell, with what the other
  // placement's best plan takes.
  CapacityCell other = placed_cell(req, spec, options.back());
  const std::size_t candidates = best.candidates + other.candidates;
  const std::optional<Seconds> whole = ranked_step(best), part = ranked_step(other);
  if (part && (!whole || *part < *whole)) std::swap(best, other);
  best.candidates = candidates;
  const std::string alternative = other.per_domain == 0 ? std::string("on whole NVLink domains")
                                                        : fmt::format("on {} of each of {} NVLink domains",
                                                                      other.per_domain, spec.gpus / other.per_domain);
  const std::optional<Seconds> lost = ranked_step(other);
  const std::string said =
      lost ? fmt::format("{}: {:.3f} s", alternative, lost->value()) : fmt::format("{}: no plan fits", alternative);
  best.note = best.note.empty() ? said : best.note + "; " + said;
  return best;
}

CapacityCell rebuild_cell(const CapacityRequest& req, const CellSpec& spec, const CellChoice& choice) {
  const CellPlace p = place(req, spec, choice.per_domain);
  if (req.plan || !p.whole_nodes) return capacity_cell(req, spec);
  const workload::Workload& w = req.workloads[spec.workload];
  const topology::Topology topo = load(req, spec.topology, p.nodes, p.per_domain);
  CapacityCell cell;
  cell.candidates = choice.candidates;
  cell.fits = choice.fits;
  cell.note = choice.note;
  cell.simulated_step_time = choice.simulated_step_time;
  cell.plan_id = choice.plan_id;
  cell.per_domain = choice.per_domain;
  if (choice.plan_id) {
    const SearchSpace space = cell_space(topo, req, spec.gpus);
    const std::vector<plan::Plan> candidates = enumerate_candidates(space, w);
    STEPCAST_ASSERT(*choice.plan_id < candidates.size(), "a reported plan id lies inside the cell's search space");
    // The figures search() stored for this candidate: the same evaluation of the same plan (with
    // the layers it offloads to fit).
    const Evaluation e = evaluate_candidate(w, topo, candidates[*choice.plan_id], space, req.search.step);
    cell.plan = e.plan_of(candidates[*choice.plan_id]);
    cell.metrics = e.metrics;
  }
  label(req, cell, w, topo, spec, p.nodes);
  return cell;
}

std::vector<CapacityCell> capacity_sweep(const CapacityRequest& req) {
  std::vector<CapacityCell> cells;
  for (const CellSpec& spec : capacity_cells(req)) {
    cells.push_back(capacity_cell(req, spec));
    if (req.on_cell) req.on_cell(cells.size());
  }
  return cells;
}

}  // namespace stepcast::planner
