// `stepcast search`: loads the workload and topology, enumerates and ranks every plan, refines the
// best few on the event engine and renders the report.
#include "stepcast/report/search_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "plan_space_arguments.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/planner/refine.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/plan_reports.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/search_compare.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/report/step_interval.hpp"
#include "stepcast/report/writers.hpp"
#include "stepcast/topology/overrides.hpp"

namespace stepcast::report {
namespace {

/// The command line that reproduces the output (the thread count is left out: it changes nothing).
std::string command_line(const SearchRequest& c) {
  std::string s = fmt::format("stepcast search --workload {} --topology {}", c.workload, c.topology);
  if (c.nodes > 0) s += fmt::format(" --nodes {}", c.nodes);
  if (c.gpus > 0) s += fmt::format(" --gpus {}", c.gpus);
  if (c.gpus_per_domain > 0) s += fmt::format(" --gpus-per-domain {}", c.gpus_per_domain);
  for (const std::string& set : c.sets) s += fmt::format(" --set \"{}\"", set);
  if (!c.memory_margin.empty()) s += fmt::format(" --memory-margin {}", c.memory_margin);
  s += fmt::format(" --global-batch {}", c.global_batch);
  if (c.seq > 0) s += fmt::format(" --seq {}", c.seq);
  if (c.wide) s += " --wide";
  if (c.top != 10) s += fmt::format(" --top {}", c.top);
  if (c.refine != kDefaultSearchRefine) s += fmt::format(" --refine {}", c.refine);
  s += plan_space_arguments(c);
  for (const std::string& plan : c.compare) s += fmt::format(" --compare \"{}\"", plan);
  return s;
}

/// The parts of each scale-up domain to search on (0: whole domains): the request's, or where it
/// gives only --gpus, every placement a scheduler's segments give the count (64 of each rack's 72:
/// NVIDIA's Slurm segment of 16 trays). Both are searched where both exist (576: 8 x 72 or 9 x 64),
/// since power-of-two groups (ep=64) fit a 64-GPU domain and straddle 72-GPU ones.
std::vector<int> placements_to_search(const SearchRequest& c) {
  if (c.gpus_per_domain > 0 || c.gpus == 0 || c.nodes > 0) return {c.gpus_per_domain};
  return topology::domain_placements(
      c.gpus, topology::load_topology_with_sets(topology_path(c.topology), std::nullopt, c.sets));
}

planner::SearchOptions search_options(const SearchRequest& c, const cost::Calibration* calibration) {
  planner::SearchOptions options;
  options.threads = c.threads;
  options.step.calibration = calibration;
  options.step.memory.margin = c.memory_margin.empty() ? cost::default_memory_margin()
                                                       : cost::parse_memory_margin(c.memory_margin, "--memory-margin");
  return options;
}

/// One placement's analytical search: its GPUs, the space searched on them and the ranking.
struct PlacedSearch {
  topology::SelectedTopology selected;
  planner::SearchSpace space;
  planner::SearchResult result;
  int per_domain = 0;   ///< GPUs used of each domain (0: all of it)
  int domain_gpus = 0;  ///< of a whole domain

  [[nodiscard]] std::string where() const {
    return per_domain == 0 ? fmt::format("{} whole domains", selected.gpus / domain_gpus)
                           : fmt::format("{} of each of {} domains", per_domain, selected.gpus / per_domain);
  }
  [[nodiscard]] std::string summary() const {
    if (result.ranked.empty()) return fmt::format("no plan fits on {}", where());
    return fmt::format("{:.3f} s on {}", result.ranked.front().metrics.step_time.value(), where());
  }
  [[nodiscard]] bool faster_than(const PlacedSearch& other) const {
    if (result.ranked.empty()) return false;
    return other.result.ranked.empty() ||
           result.ranked.front().metrics.step_time < other.result.ranked.front().metrics.step_time;
  }
};

PlacedSearch search_placed(const SearchRequest& c, const workload::Workload& w, const cost::Calibration* calibration,
                           int per_domain, bool several) {
  PlacedSearch placed{topology::load_selected_topology(topology_path(c.topology),
                                                       topology_request(c.nodes, c.gpus, c.sets, per_domain)),
                      {},
                      {},
                      per_domain,
                      0};
  const topology::Topology& topo = placed.selected.topology;
  placed.domain_gpus = topo.domain_gpus();
  planner::SearchSpace& space = placed.space;
  space.gpus = placed.selected.gpus;
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = c.global_batch;
  space.seq_len = sequence_length(w, c.seq);
  space.max_micro_batch = c.max_mbs;
  space.max_cp = c.max_cp;
  if (!c.precision.empty()) space.base.precision = plan::parse_precision(c.precision, "--precision");
  if (!c.optimizer.empty()) space.base.optimizer = plan::parse_optimizer(c.optimizer, "--optimizer");
  if (c.flash && c.no_flash)
    throw InputError("--no-flash", {}, "--flash and --no-flash contradict each other: give one");
  space.base.flash_attention = c.flash || (!c.no_flash && cost::runs_flash_attention(topo.gpu()));
  space.base.doc_len = packed_documents(c.doc_len, space.seq_len, space.base.flash_attention, c.max_cp);
  set_fine_tuning(space.base, c.fine_tuning, &w);
  cost::check_precision_supported(topo.gpu(), space.base.precision, c.topology);
  planner::SearchOptions options = search_options(c, calibration);
  // Read before the search, so a mistyped plan fails at once.
  const ComparisonInputs inputs{&w, &topo, &space, &options.step};
  for (const std::string& text : c.compare) static_cast<void>(compared_plan(text, inputs));
  const std::size_t total = planner::count_candidates(space, w);
  const std::string on = several ? " on " + placed.where() : std::string{};
  if (c.approve_work) {
    c.approve_work(planner::search_work(total), fmt::format("searching {} candidate plans{}", total, on),
                   "lower --max-mbs or --max-cp, or search fewer GPUs");
  }
  Progress progress("plans" + on, total);
  options.on_progress = [&progress](std::size_t n) { progress.advance(n); };
  placed.result = planner::search(w, topo, space, options);
  progress.finish();
  return placed;
}

}  // namespace

CommandOutput search_command(const SearchRequest& c, const SharedRefine& shared_refine) {
  const Format format = c.json ? Format::kJson : parse_format(c.format, "--format");
  const workload::Workload w = workload::load_workload(workload_path(c.workload));
  if (!w.has_shape()) {
    throw InputError(
        c.workload, {},
        "plan search needs a workload with a transformer shape (layers, hidden, heads), not a bare parameter count");
  }
  std::optional<cost::Calibration> calibration;
  if (!c.calibration.empty()) calibration = cost::load_calibration(data_path(c.calibration));
  const cost::Calibration* calibrated = calibration ? &*calibration : nullptr;
  const std::vector<int> placements = placements_to_search(c);
  std::optional<PlacedSearch> best;
  std::string placement;
  for (const int per_domain : placements) {
    PlacedSearch placed = search_placed(c, w, calibrated, per_domain, placements.size() > 1);
    if (placements.size() > 1) placement += (placement.empty() ? "" : ", ") + placed.summary();
    if (!best || placed.faster_than(*best)) best = std::move(placed);
  }
  if (placements.size() > 1) {
    placement = fmt::format(
        "placement: {} GPUs fill {} whole {}-GPU NVLink domains, or {} of each of {} in whole trays; the search "
        "ranked both (best plan {}) and shows the faster (--gpus-per-domain sets one)",
        c.gpus, c.gpus / best->domain_gpus, best->domain_gpus, placements.back(), c.gpus / placements.back(),
        placement);
  } else if (placements.front() > 0 && c.gpus_per_domain == 0) {
    placement = fmt::format(
        "placement: {} GPUs fill no whole number of {}-GPU NVLink domains: the search runs them on {} of each of {} "
        "domains, whole trays (--gpus-per-domain sets another)",
        c.gpus, best->domain_gpus, placements.front(), c.gpus / placements.front());
  }
  const topology::SelectedTopology& selected = best->selected;
  const topology::Topology& topo = selected.topology;
  const planner::SearchSpace& space = best->space;
  planner::SearchResult& result = best->result;
  planner::SearchOptions options = search_options(c, calibrated);
  const ComparisonInputs compare_inputs{&w, &topo, &space, &options.step};
  std::vector<plan::Plan> compared;
  for (const std::string& text : c.compare) compared.push_back(compared_plan(text, compare_inputs));
  const auto refine = static_cast<std::size_t>(c.refine);
  if (c.approve_work && refine > 0) {
    planner::WorkEstimate work;
    const std::size_t n = std::min(refine, result.ranked.size());
    for (std::size_t i = 0; i < n; ++i) work += planner::simulation_work(w, result.ranked[i].plan, false, false);
    c.approve_work(work, fmt::format("simulating the best {} plans (--refine {})", n, refine),
                   "lower --refine (0: the analytical ranking alone) or --global-batch");
  }
  if (shared_refine) {
    if (!shared_refine(result, w, topo, refine, options.step)) return {};
  } else if (refine > 0) {
    Progress simulated("simulated plans", std::min(refine, result.ranked.size()));
    planner::refine_top(result, w, topo, refine, options.step, c.threads, [&simulated] { simulated.advance(); });
    simulated.finish();
  }
  if (calibration && !result.ranked.empty()) {
    graph::StepOptions step = options.step;
    step.explain = false;
    warn_outside_calibration(step.calibration, c.calibration,
                             outside_calibration(graph::predict_step(w, result.ranked.front().plan, topo, step)));
  }

  SearchContext context;
  context.command = command_line(c);
  context.workload = w.name;
  context.topology = topo.name();
  context.gpu = topo.gpu().name;
  context.gpus = selected.gpus;
  context.global_batch = c.global_batch;
  context.seq_len = space.seq_len;
  context.doc_len = space.base.doc_len;
  context.fine_tuning = fine_tuning_note(space.base);
  context.wide = c.wide || format != Format::kText;
  if (!result.ranked.empty()) {
    const calibrate::ResidualSet residuals = shipped_residuals(options.step.calibration);
    context.scatter = error_scatter_for(residuals, w, result.ranked.front().plan, topo.gpu());
    // Each shown plan's 90% interval around the step it is ranked by (the engine's when refined).
    for (std::size_t i = 0; i < std::min(static_cast<std::size_t>(c.top), result.ranked.size()); ++i) {
      const planner::RankedPlan& p = result.ranked[i];
      const Seconds step = p.simulated_step_time.value_or(p.metrics.step_time);
      context.intervals.push_back(calibrate::step_interval(residuals, w, p.plan, topo.gpu(), step));
    }
  }
  context.margin = margin_note(options.step.memory.margin, topo.gpu());
  context.placement = placement;
  context.set_echo = set_echo_text(topology_path(c.topology), c.sets);
  context.lead = lead_note(result, compare_inputs);
  for (std::size_t i = 0; i < compared.size(); ++i) {
    PlanComparison comparison = compare_with_best(result, compared[i], compare_inputs, i + 1);
    context.comparison_notes.insert(context.comparison_notes.end(), comparison.notes.begin(), comparison.notes.end());
    if (comparison.terms) context.comparisons.push_back(std::move(*comparison.terms));
  }
  CommandOutput out;
  out.text = render(search_report(result, context, static_cast<std::size_t>(c.top)), format);
  return out;
}

}  // namespace stepcast::report
