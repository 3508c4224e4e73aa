// Capacity sweeps: workloads x clusters x GPU counts, each cell the best plan found by search
// (or a plan family the user fixes), and what training a number of tokens would take and cost.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::planner {

/// What training `tokens` tokens takes at a step time (all GPUs busy the whole time).
struct TrainingCost {
  Seconds time;  ///< steps x step time, steps = tokens / (global batch x sequence length)
  double days = 0.0;
  double gpu_hours = 0.0;  ///< time in hours x GPUs
  double cost = 0.0;       ///< gpu_hours x price per GPU-hour (0 without a price)
};

/// Training cost; `price_per_gpu_hour` may be 0. Preconditions: tokens, batch, seq > 0.
TrainingCost training_cost(double tokens, int global_batch, int seq_len, Seconds step_time, int gpus,
                           double price_per_gpu_hour);

struct CapacityRequest {
  std::vector<workload::Workload> workloads;
  std::vector<std::filesystem::path> topologies;  ///< cluster-form files; nodes set per GPU count
  std::vector<int> gpus;                          ///< GPU counts, e.g. 8, 16, ..., 1024
  int global_batch = 0;
  int seq_len = 0;  ///< 0 = each workload's
  /// A plan family: fixed fields, dp derived from each GPU count. Absent: search every plan.
  std::optional<plan::Plan> plan;
  plan::Plan base;  ///< precision, optimizer, flash attention of searched plans
  int max_micro_batch = 16;
  int max_cp = 1;        ///< context-parallel degrees searched (SearchSpace::max_cp)
  SearchOptions search;  ///< threads and predictor options; on_progress is not used
  /// Searched cells: simulate the best `refine` plans on the event engine (refine_top) and show
  /// the one fastest there. 0 = the analytical ranking alone.
  std::size_t refine = 0;
  /// --set edits applied to every topology file (topology/overrides.hpp).
  std::vector<std::string> sets;
  /// --gpus-per-domain: the GPUs a cell uses of each scale-up domain (whole trays; 0 = all of it). A
  /// count above it runs on count / gpus_per_domain such domains; a count below it, on part of one.
  int gpus_per_domain = 0;
  /// The price of a GPU-hour per topology (same order as `topologies`), replacing the file's
  /// "price"; empty, or 0 for a topology, keeps the file's.
  std::vector<double> prices;
  /// Called after each cell with the number of cells done (for a progress line).
  std::function<void(std::size_t)> on_cell;
};

/// One cell of the sweep.
struct CapacityCell {
  std::string workload;
  std::string topology;  ///< the topology's name
  std::string gpu;       ///< the GPU's name
  int gpus = 0;
  int nodes = 0;
  /// The plan shown: the fastest fitting one; when none fits, the valid plan needing the least
  /// memory (searched) or the given plan; absent when no plan is valid at all.
  std::optional<plan::Plan> plan;
  bool fits = false;
  PlanMetrics metrics;         ///< of `plan`: step figures only when it fits
  std::string note;            ///< why nothing fits or nothing is valid; empty otherwise
  std::size_t candidates = 0;  ///< plans evaluated for this cell (1 with a plan family)
  /// The event engine's step time of `plan`, for searched cells that fit when the request refines.
  std::optional<Seconds> simulated_step_time;
  /// `plan`'s candidate id in the cell's search space (searched cells): with it a cell computed by
  /// another process is rebuilt exactly from its choice alone (rebuild_cell).
  std::optional<std::size_t> plan_id;
  /// What a GPU-hour of the cluster costs: the request's price, else the topology file's; absent
  /// when neither gives one.
  std::optional<topology::GpuHourPrice> price;
  /// The GPUs used of each scale-up domain where the cell runs on part of each (0: whole domains,
  /// or the request's --gpus-per-domain).
  int per_domain = 0;
};

/// Where one cell sits in a request: indices into its workloads and topologies, and a GPU count.
struct CellSpec {
  std::size_t workload = 0;
  std::size_t topology = 0;
  int gpus = 0;
};

/// The cells of a sweep in capacity_sweep's order (workload, topology, GPU count).
std::vector<CellSpec> capacity_cells(const CapacityRequest& request);

/// The plans each of a cell's searches evaluates, one search per placement it is tried on (a
/// single 1 for a plan family or a skipped cell): a measure of its work, known before it runs.
/// The searches run one after another.
std::vector<std::size_t> cell_searches(const CapacityRequest& request, const CellSpec& spec);

/// The plans a cell evaluates in all: the sum of cell_searches.
std::size_t cell_candidates(const CapacityRequest& request, const CellSpec& spec);

/// Runs one cell as capacity_sweep does.
CapacityCell capacity_cell(const CapacityRequest& request, const CellSpec& spec);

/// What a searched cell chose, as another process reports it.
struct CellChoice {
  int per_domain = 0;  ///< the placement the plan was chosen on (CapacityCell::per_domain)
  std::optional<std::size_t> plan_id;
  bool fits = false;
  std::size_t candidates = 0;
  std::string note;
  std::optional<Seconds> simulated_step_time;
};

/// The cell that capacity_cell(request, spec) returns when it chose `choice`: the plan is taken
/// from the candidates by id and its figures predicted again (one plan, not the whole search);
/// family and skipped cells are simply run again.
CapacityCell rebuild_cell(const CapacityRequest& request, const CellSpec& spec, const CellChoice& choice);

/// Runs every cell, in workload, topology, GPU-count order. GPU counts that the topology's node
/// size does not divide (above one node) are skipped as cells with a note. Topology files are
/// loaded with nodes = ceil(gpus / gpus per node).
std::vector<CapacityCell> capacity_sweep(const CapacityRequest& request);

}  // namespace stepcast::planner
