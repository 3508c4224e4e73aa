// `stepcast search`: every valid plan of a model on a cluster, pruned by memory, ranked by
// predicted step time, the best few optionally re-timed on the event engine.
#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "ranks.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/planner/refine.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/plan_reports.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/report/step_interval.hpp"
#include "stepcast/report/writers.hpp"
#include "what_if_options.hpp"

namespace stepcast::cli {
namespace {

// The analytical ranking's top few, re-timed on the event engine unless --refine 0: the engine
// sees contention and schedules the closed form does not, and 5 plans take seconds, not minutes.
constexpr int kDefaultRefine = 5;

struct SearchCommand {
  std::string workload;
  std::string topology;
  int nodes = 0;
  int global_batch = 0;
  int seq = 0;
  int top = 10;
  int refine = kDefaultRefine;
  int threads = 0;
  int max_mbs = 16;
  int max_cp = 1;
  std::string precision;
  bool flash = false;
  bool no_flash = false;
  bool json = false;
  bool wide = false;
  std::string format = "text";
  std::string output;
  std::string calibration;
  int gpus = 0;
  std::vector<std::string> sets;
  std::string memory_margin;
};

/// The command line that reproduces the output (the thread count is left out: it changes nothing).
std::string command_line(const SearchCommand& c) {
  std::string s = fmt::format("stepcast search --workload {} --topology {}", c.workload, c.topology);
  if (c.nodes > 0) s += fmt::format(" --nodes {}", c.nodes);
  if (c.gpus > 0) s += fmt::format(" --gpus {}", c.gpus);
  for (const std::string& set : c.sets) s += fmt::format(" --set \"{}\"", set);
  if (!c.memory_margin.empty()) s += fmt::format(" --memory-margin {}", c.memory_margin);
  s += fmt::format(" --global-batch {}", c.global_batch);
  if (c.seq > 0) s += fmt::format(" --seq {}", c.seq);
  if (c.top != 10) s += fmt::format(" --top {}", c.top);
  if (c.refine != kDefaultRefine) s += fmt::format(" --refine {}", c.refine);
  if (c.max_mbs != 16) s += fmt::format(" --max-mbs {}", c.max_mbs);
  if (c.max_cp != 1) s += fmt::format(" --max-cp {}", c.max_cp);
  if (c.wide) s += " --wide";
  if (!c.precision.empty()) s += " --precision " + c.precision;
  if (c.flash) s += " --flash";
  if (c.no_flash) s += " --no-flash";
  if (!c.calibration.empty()) s += " --calibration " + c.calibration;
  return s;
}

/// refine_top with the plans to simulate dealt over the ranks by their analytical step times
/// (the search itself runs on every rank); rank 0 gets the re-ranked result, the others false.
bool shared_refine(planner::SearchResult& result, const workload::Workload& w, const topology::Topology& topo,
                   std::size_t k, const cost::StepOptions& step) {
  const std::size_t n = std::min(k, result.ranked.size());
  std::vector<double> costs;
  for (std::size_t i = 0; i < n; ++i) costs.push_back(result.ranked[i].metrics.step_time.value());
  const std::vector<std::string> times = ranks::share(costs, [&](std::size_t i) {
    return ranks::WireWriter().f64(planner::simulated_step_time(w, topo, result.ranked[i].plan, step).value()).take();
  });
  if (!ranks::is_root()) return false;
  for (std::size_t i = 0; i < n; ++i) result.ranked[i].simulated_step_time = Seconds{ranks::WireReader(times[i]).f64()};
  planner::rank_by_simulation(result, n);
  return true;
}

void run(const SearchCommand& c) {
  ranks::will_share();
  const report::Format format = c.json ? report::Format::kJson : report::parse_format(c.format, "--format");
  const workload::Workload w = workload::load_workload(report::workload_path(c.workload));
  if (!w.has_shape()) {
    throw InputError(
        c.workload, {},
        "plan search needs a workload with a transformer shape (layers, hidden, heads), not a bare parameter count");
  }
  const topology::SelectedTopology selected = topology::load_selected_topology(
      report::topology_path(c.topology), report::topology_request(c.nodes, c.gpus, c.sets));
  const topology::Topology& topo = selected.topology;
  planner::SearchSpace space;
  space.gpus = selected.gpus;
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = c.global_batch;
  space.seq_len = report::sequence_length(w, c.seq);
  space.max_micro_batch = c.max_mbs;
  space.max_cp = c.max_cp;
  if (!c.precision.empty()) space.base.precision = plan::parse_precision(c.precision, "--precision");
  if (c.flash && c.no_flash)
    throw InputError("--no-flash", {}, "--flash and --no-flash contradict each other: give one");
  space.base.flash_attention = c.flash || (!c.no_flash && cost::runs_flash_attention(topo.gpu()));
  cost::check_precision_supported(topo.gpu(), space.base.precision, c.topology);
  const std::size_t total = planner::enumerate_candidates(space, w).size();
  report::Progress progress("plans", total);
  planner::SearchOptions options;
  options.threads = c.threads;
  std::optional<cost::Calibration> calibration;
  if (!c.calibration.empty()) calibration = cost::load_calibration(report::data_path(c.calibration));
  options.step.calibration = calibration ? &*calibration : nullptr;
  options.step.memory.margin = c.memory_margin.empty() ? cost::default_memory_margin()
                                                       : cost::parse_memory_margin(c.memory_margin, "--memory-margin");
  options.on_progress = [&progress](std::size_t n) { progress.advance(n); };
  planner::SearchResult result = planner::search(w, topo, space, options);
  progress.finish();
  const auto refine = static_cast<std::size_t>(c.refine);
  if (ranks::count() > 1) {
    if (!shared_refine(result, w, topo, refine, options.step)) return;
  } else if (refine > 0) {
    report::Progress simulated("simulated plans", std::min(refine, result.ranked.size()));
    planner::refine_top(result, w, topo, refine, options.step, c.threads, [&simulated] { simulated.advance(); });
    simulated.finish();
  }
  if (calibration && !result.ranked.empty()) {
    cost::StepOptions step = options.step;
    step.explain = false;
    report::warn_outside_calibration(
        step.calibration, c.calibration,
        report::outside_calibration(cost::predict_step(w, result.ranked.front().plan, topo, step)));
  }

  report::SearchContext context;
  context.command = command_line(c);
  context.workload = w.name;
  context.topology = topo.name();
  context.gpu = topo.gpu().name;
  context.gpus = selected.gpus;
  context.global_batch = c.global_batch;
  context.seq_len = space.seq_len;
  context.wide = c.wide || format != report::Format::kText;
  if (!result.ranked.empty()) {
    context.scatter = report::error_scatter_for(result.ranked.front().plan, topo.gpu(), options.step.calibration);
  }
  context.margin = report::margin_note(options.step.memory.margin, topo.gpu());
  context.set_echo = report::set_echo_text(report::topology_path(c.topology), c.sets);
  emit(report::render(report::search_report(result, context, static_cast<std::size_t>(c.top)), format), c.output);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto c = std::make_shared<SearchCommand>();
  CLI::App* sub = app.add_subcommand("search",
                                     "Every valid plan of a model on a cluster, pruned by GPU memory, ranked by "
                                     "predicted step time, with rejection counts");
  sub->add_option("--workload", c->workload, "Workload JSON (workloads/*.json) or a Hugging Face config.json")
      ->required();
  sub->add_option("--topology", c->topology, "Topology JSON (topologies/*.json)")->required();
  sub->add_option("--nodes", c->nodes, "Nodes of the topology to use (cluster-form files)")->check(positive_number());
  sub->add_option("--global-batch", c->global_batch, "Sequences per optimizer step")
      ->required()
      ->check(positive_number());
  sub->add_option("--seq", c->seq, "Tokens per sequence (default: the workload's)")->check(positive_number());
  sub->add_option("--top", c->top, "Plans to list (default 10)")->check(positive_number());
  sub->add_option(
         "--refine", c->refine,
         "Simulate the best K plans on the event engine and re-rank them by it (default 5; 0: analytical only)")
      ->check(non_negative_number());
  sub->add_option("--threads", c->threads, "Worker threads (default: all cores); the output does not depend on it")
      ->check(positive_number());
  sub->add_option("--max-mbs", c->max_mbs, "Largest micro-batch size tried (powers of two, default 16)")
      ->check(positive_number());
  sub->add_option("--max-cp", c->max_cp,
                  "Largest context-parallel degree tried (powers of two, with cp-comm p2p and a2a; default 1: none)")
      ->check(positive_number());
  sub->add_option("--precision", c->precision, "fp32, tf32, bf16 (default), fp16, fp8, mxfp8 or nvfp4");
  sub->add_flag(
      "--flash", c->flash,
      "Plans use fused (flash) attention, which never stores the s x s scores (the default where the GPU runs it)");
  sub->add_flag("--no-flash", c->no_flash, "Plans store the s x s attention scores (Korthikanti et al.'s accounting)");
  sub->add_option("--format", c->format, "text (default), markdown, csv (the ranked plans), json or html");
  sub->add_flag("--json", c->json, "Same as --format json");
  sub->add_flag("--wide", c->wide,
                "Text with every column (the analytical and simulated steps, compute, bubble, exposed communication, "
                "equivalent spellings, rejection examples); without it the text fits 120 columns");
  sub->add_option("-o,--output", c->output, "Write to this file (atomically) instead of stdout");
  sub->add_option("--calibration", c->calibration,
                  "Calibration file from `stepcast calibrate`: every plan's collectives and compute priced with it");
  add_what_if_options(*sub, c->gpus, c->sets, c->memory_margin);
  sub->callback([c] { run(*c); });
}

}  // namespace stepcast::cli
