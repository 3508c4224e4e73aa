// `stepcast table`: reads the workloads and clusters, runs the capacity sweep (a search per cell,
// or a plan family) and renders the capacity report.
#include "stepcast/report/table_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan_space_arguments.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/plan_reports.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/report/step_interval.hpp"
#include "stepcast/report/writers.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {
namespace {

// The cells' searches, estimated from their candidate counts before any runs, the largest cells
// first so that a request far over the budget is refused after counting a few. The cells, and a
// cell's searches on two placements, run one after another: their times add up, their memory does
// not. (The plans a --refine simulates are known only once each cell is searched.)
void approve_cells(const planner::CapacityRequest& req, const WorkApproval& approve) {
  std::vector<planner::CellSpec> specs = planner::capacity_cells(req);
  std::stable_sort(specs.begin(), specs.end(),
                   [](const planner::CellSpec& a, const planner::CellSpec& b) { return a.gpus > b.gpus; });
  planner::WorkEstimate work;
  std::size_t candidates = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    for (const std::size_t n : planner::cell_searches(req, specs[i])) {
      const planner::WorkEstimate search = planner::search_work(n);
      candidates += n;
      work.time = work.time + search.time;
      work.memory = std::max(work.memory, search.memory);
    }
    const bool last = i + 1 == specs.size();
    const std::string what = last ? fmt::format("searching {} candidate plans in {} cells", candidates, specs.size())
                                  : fmt::format("searching at least {} candidate plans (in the {} largest of {} cells)",
                                                candidates, i + 1, specs.size());
    approve(work, what, "give fewer workloads, topologies or GPU counts, or lower --max-mbs or --max-cp");
  }
}

// Each cluster's name and GPU, in --topologies order, read once for the fused-attention default,
// the precision check and the cells' intervals.
using ClusterGpus = std::vector<std::pair<std::string, topology::GpuSpec>>;
ClusterGpus cluster_gpus(const planner::CapacityRequest& req) {
  ClusterGpus out;
  for (const auto& path : req.topologies) {
    const topology::Topology topo = topology::load_topology_with_sets(path, std::nullopt, req.sets);
    out.emplace_back(topo.name(), topo.gpu());
  }
  return out;
}

// Each cell's 90% interval around the step it shows (the event engine's where refined), from the
// model's errors on the shipped runs like its plan, on its cluster's GPU.
std::vector<std::optional<calibrate::StepInterval>> cell_intervals(const std::vector<planner::CapacityCell>& cells,
                                                                   const std::vector<workload::Workload>& workloads,
                                                                   const ClusterGpus& gpus,
                                                                   const cost::Calibration* calibration) {
  const calibrate::ResidualSet residuals = shipped_residuals(calibration);
  std::vector<std::optional<calibrate::StepInterval>> intervals;
  for (const planner::CapacityCell& cell : cells) {
    const auto gpu =
        std::find_if(gpus.begin(), gpus.end(), [&cell](const auto& g) { return g.first == cell.topology; });
    const auto w = std::find_if(workloads.begin(), workloads.end(),
                                [&cell](const workload::Workload& x) { return x.name == cell.workload; });
    if (!cell.fits || !cell.plan || gpu == gpus.end() || w == workloads.end()) {
      intervals.emplace_back();
      continue;
    }
    const Seconds step = cell.simulated_step_time.value_or(cell.metrics.step_time);
    intervals.push_back(calibrate::step_interval(residuals, *w, *cell.plan, gpu->second, step));
  }
  return intervals;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ",") + item;
  return s;
}

std::string command_line(const TableRequest& c) {
  std::string gpus;
  for (const int g : c.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", g);
  std::string s = fmt::format("stepcast table --workloads {} --topologies {} --gpus {} --global-batch {}",
                              join(c.workloads), join(c.topologies), gpus, c.global_batch);
  if (c.gpus_per_domain > 0) s += fmt::format(" --gpus-per-domain {}", c.gpus_per_domain);
  if (c.seq > 0) s += fmt::format(" --seq {}", c.seq);
  if (!c.plan.empty()) s += fmt::format(" --plan {}", c.plan);
  if (c.tokens > 0.0) s += " --tokens " + format_number(c.tokens);
  for (std::size_t i = 0; i < c.prices.size(); ++i) s += (i == 0 ? " --price " : ",") + format_number(c.prices[i]);
  for (const std::string& set : c.sets) s += fmt::format(" --set \"{}\"", set);
  if (!c.memory_margin.empty()) s += " --memory-margin " + c.memory_margin;
  if (c.refine > 0) s += fmt::format(" --refine {}", c.refine);
  s += plan_space_arguments(c);
  s += " --format " + std::string(to_string(parse_format(c.format, "--format")));
  return s;
}

}  // namespace

CommandOutput table_command(const TableRequest& c, const SharedSweep& shared_sweep) {
  const Format format = parse_format(c.format, "--format");
  if (!c.prices.empty() && !(c.tokens > 0.0)) throw InputError("--price", {}, "needs --tokens (the tokens to train)");
  if (c.prices.size() > 1 && c.prices.size() != c.topologies.size()) {
    throw InputError("--price", {},
                     fmt::format("give one price for every cluster or one per cluster, in the order of --topologies: "
                                 "{} prices for {} topologies",
                                 c.prices.size(), c.topologies.size()));
  }
  if (c.refine > 0 && !c.plan.empty()) {
    throw InputError("--refine", {}, "re-times the best plans of a search; a --plan family has one plan per cell");
  }
  planner::CapacityRequest req;
  for (const auto& w : c.workloads) {
    req.workloads.push_back(workload::load_workload(workload_path(w)));
    (void)sequence_length(req.workloads.back(), c.seq);  // a config states no training length
    if (!req.workloads.back().has_shape()) {
      throw InputError(w, {},
                       "capacity tables need a workload with a transformer shape (layers, hidden, heads), not a bare "
                       "parameter count");
    }
  }
  for (const auto& t : c.topologies) req.topologies.push_back(topology_path(t));
  req.gpus = c.gpus;
  req.sets = c.sets;
  req.gpus_per_domain = c.gpus_per_domain;
  req.prices = c.prices.size() == 1 ? std::vector<double>(c.topologies.size(), c.prices.front()) : c.prices;
  req.search.step.memory.margin = c.memory_margin.empty()
                                      ? cost::default_memory_margin()
                                      : cost::parse_memory_margin(c.memory_margin, "--memory-margin");
  req.global_batch = c.global_batch;
  req.seq_len = c.seq;
  req.max_micro_batch = c.max_mbs;
  req.max_cp = c.max_cp;
  if (!c.precision.empty()) req.base.precision = plan::parse_precision(c.precision, "--precision");
  if (!c.optimizer.empty()) req.base.optimizer = plan::parse_optimizer(c.optimizer, "--optimizer");
  if (c.flash && c.no_flash)
    throw InputError("--no-flash", {}, "--flash and --no-flash contradict each other: give one");
  // Fused attention unless asked not to, where every cluster's GPU runs it.
  const ClusterGpus gpus = cluster_gpus(req);
  const bool every_gpu_runs_flash =
      std::all_of(gpus.begin(), gpus.end(), [](const auto& g) { return cost::runs_flash_attention(g.second); });
  req.base.flash_attention = c.flash || (!c.no_flash && every_gpu_runs_flash);
  // Each workload's own training length where --seq is not given: the cells refuse longer documents.
  req.base.doc_len = packed_documents(c.doc_len, c.seq, req.base.flash_attention, c.max_cp);
  set_fine_tuning(req.base, c.fine_tuning);
  if (!c.plan.empty()) {
    plan::Plan family = plan::parse_plan(c.plan, "--plan");
    if (!c.precision.empty()) family.precision = req.base.precision;
    if (!c.optimizer.empty()) family.optimizer = req.base.optimizer;
    if (!family.flash_given) family.flash_attention = req.base.flash_attention;
    if (c.flash) family.flash_attention = true;
    if (family.doc_len == 0) family.doc_len = req.base.doc_len;
    inherit_fine_tuning(family, req.base);
    req.plan = family;
  }
  // Every table's GPU must run the precision, or its cells could not be priced.
  const plan::Precision precision = req.plan ? req.plan->precision : req.base.precision;
  for (std::size_t i = 0; i < c.topologies.size(); ++i)
    cost::check_precision_supported(gpus[i].second, precision, c.topologies[i]);
  req.search.threads = c.threads;
  req.refine = static_cast<std::size_t>(c.refine);
  std::optional<cost::Calibration> calibration;
  if (!c.calibration.empty()) calibration = cost::load_calibration(data_path(c.calibration));
  req.search.step.calibration = calibration ? &*calibration : nullptr;
  if (c.approve_work) approve_cells(req, c.approve_work);
  Progress progress("cells", req.workloads.size() * req.topologies.size() * req.gpus.size());
  req.on_cell = [&progress](std::size_t) { progress.advance(); };
  std::vector<planner::CapacityCell> cells;
  if (shared_sweep) {
    std::optional<std::vector<planner::CapacityCell>> shared = shared_sweep(req, progress);
    progress.finish();
    if (!shared) return {};
    cells = std::move(*shared);
  } else {
    cells = planner::capacity_sweep(req);
    progress.finish();
  }
  if (calibration) {
    // Each shown plan, priced again to name its collectives outside the fitted range.
    std::vector<std::string> outside;
    for (const planner::CapacityCell& cell : cells) {
      if (!cell.fits || !cell.plan) continue;
      for (std::size_t i = 0; i < req.workloads.size(); ++i) {
        if (req.workloads[i].name != cell.workload) continue;
        for (const auto& path : req.topologies) {
          const topology::Topology topo = topology::load_topology_with_sets(path, cell.nodes, req.sets);
          if (topo.name() != cell.topology) continue;
          graph::StepOptions step = req.search.step;
          step.explain = false;
          for (const std::string& o :
               outside_calibration(graph::predict_step(req.workloads[i], *cell.plan, topo, step))) {
            outside.push_back(fmt::format("{} on {} GPUs: {}", cell.workload, cell.gpus, o));
          }
        }
      }
    }
    warn_outside_calibration(&*calibration, c.calibration, outside);
  }
  CostSettings cost{c.tokens};
  Report r = capacity_report(cells, cell_intervals(cells, req.workloads, gpus, calibration ? &*calibration : nullptr),
                             command_line(c), c.global_batch, c.seq, cost);
  // What the margin and each --set made of every cluster, under the command line.
  std::vector<std::string> said = {margin_note(req.search.step.memory.margin)};
  if (req.base.doc_len > 0) said.insert(said.begin(), packed_documents_note(req.base.doc_len));
  if (req.base.peft == plan::Peft::kLora) said.insert(said.begin(), fine_tuning_note(req.base));
  for (const auto& path : req.topologies) {
    const std::string echo = set_echo_text(path, c.sets);
    for (std::size_t at = 0; at < echo.size();) {
      const std::size_t end = echo.find('\n', at);
      said.push_back(path.filename().string() + ": " + echo.substr(at, end - at));
      at = end == std::string::npos ? echo.size() : end + 1;
    }
  }
  r.notes.insert(r.notes.begin() + std::min<std::ptrdiff_t>(1, std::ssize(r.notes)), said.begin(), said.end());
  CommandOutput out;
  out.text = render(r, format);
  return out;
}

}  // namespace stepcast::report
