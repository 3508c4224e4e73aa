// `stepcast table`: capacity tables over workloads x clusters x GPU counts (the best plan found by
// search, or a plan family), with training days, GPU-hours and cost, in five formats.
#include <fmt/format.h>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "ranks.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/planner/capacity.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/plan_reports.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/report/writers.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cli {
namespace {

struct TableCommand {
  std::vector<std::string> workloads;
  std::vector<std::string> topologies;
  std::vector<int> gpus;
  int global_batch = 0;
  int seq = 0;
  double tokens = 0.0;
  std::vector<double> prices;
  std::string plan;
  int threads = 0;
  int refine = 0;
  int max_mbs = 16;
  int max_cp = 1;
  std::string precision;
  bool flash = false;
  bool no_flash = false;
  std::string format = "text";
  std::string output;
  std::string calibration;
  std::vector<std::string> sets;
  std::string memory_margin;
};

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ",") + item;
  return s;
}

std::string command_line(const TableCommand& c) {
  std::string gpus;
  for (const int g : c.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", g);
  std::string s = fmt::format("stepcast table --workloads {} --topologies {} --gpus {} --global-batch {}",
                              join(c.workloads), join(c.topologies), gpus, c.global_batch);
  if (c.seq > 0) s += fmt::format(" --seq {}", c.seq);
  if (!c.plan.empty()) s += fmt::format(" --plan {}", c.plan);
  if (c.tokens > 0.0) s += " --tokens " + report::format_number(c.tokens);
  for (std::size_t i = 0; i < c.prices.size(); ++i)
    s += (i == 0 ? " --price " : ",") + report::format_number(c.prices[i]);
  for (const std::string& set : c.sets) s += fmt::format(" --set \"{}\"", set);
  if (!c.memory_margin.empty()) s += " --memory-margin " + c.memory_margin;
  if (c.refine > 0) s += fmt::format(" --refine {}", c.refine);
  if (c.max_mbs != 16) s += fmt::format(" --max-mbs {}", c.max_mbs);
  if (c.max_cp != 1) s += fmt::format(" --max-cp {}", c.max_cp);
  if (!c.precision.empty()) s += " --precision " + c.precision;
  if (c.flash) s += " --flash";
  if (c.no_flash) s += " --no-flash";
  if (!c.calibration.empty()) s += " --calibration " + c.calibration;
  s += " --format " + std::string(report::to_string(report::parse_format(c.format, "--format")));
  return s;
}

/// A searched cell's choice in bytes (what rebuild_cell needs), and back.
std::string encode_choice(const planner::CapacityCell& cell) {
  ranks::WireWriter w;
  w.u64(cell.plan_id ? 1 : 0).u64(cell.plan_id.value_or(0)).u64(cell.fits ? 1 : 0).u64(cell.candidates).text(cell.note);
  w.u64(cell.simulated_step_time ? 1 : 0).f64(cell.simulated_step_time.value_or(Seconds{}).value());
  return w.take();
}

planner::CellChoice decode_choice(const std::string& bytes) {
  ranks::WireReader r(bytes);
  planner::CellChoice choice;
  const bool has_plan = r.u64() != 0;
  const std::uint64_t id = r.u64();
  if (has_plan) choice.plan_id = id;
  choice.fits = r.u64() != 0;
  choice.candidates = r.u64();
  choice.note = r.text();
  const bool simulated = r.u64() != 0;
  const double step = r.f64();
  if (simulated) choice.simulated_step_time = Seconds{step};
  return choice;
}

/// The sweep with its cells dealt over the ranks by their candidate counts (the search's work
/// grows with them, and so does the refinement's with the GPUs simulated); rank 0 rebuilds each
/// cell from its choice. The other ranks get no cells.
std::vector<planner::CapacityCell> shared_sweep(const planner::CapacityRequest& req, report::Progress& progress) {
  const std::vector<planner::CellSpec> specs = planner::capacity_cells(req);
  std::vector<double> costs;
  for (const auto& spec : specs) costs.push_back(static_cast<double>(planner::cell_candidates(req, spec)));
  const std::vector<std::string> choices = ranks::share(
      costs, [&](std::size_t i) { return encode_choice(planner::capacity_cell(req, specs[i])); },
      [&progress] { progress.advance(); });
  std::vector<planner::CapacityCell> cells;
  for (std::size_t i = 0; i < choices.size(); ++i)
    cells.push_back(planner::rebuild_cell(req, specs[i], decode_choice(choices[i])));
  return cells;
}

void run(const TableCommand& c) {
  ranks::will_share();
  const report::Format format = report::parse_format(c.format, "--format");
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
    req.workloads.push_back(workload::load_workload(report::workload_path(w)));
    if (!req.workloads.back().has_shape()) {
      throw InputError(w, {},
                       "capacity tables need a workload with a transformer shape (layers, hidden, heads), not a bare "
                       "parameter count");
    }
    (void)report::sequence_length(req.workloads.back(), c.seq);  // a config states no training length
  }
  for (const auto& t : c.topologies) req.topologies.push_back(report::topology_path(t));
  req.gpus = c.gpus;
  req.sets = c.sets;
  req.prices = c.prices.size() == 1 ? std::vector<double>(c.topologies.size(), c.prices.front()) : c.prices;
  req.search.step.memory.margin = c.memory_margin.empty()
                                      ? cost::default_memory_margin()
                                      : cost::parse_memory_margin(c.memory_margin, "--memory-margin");
  req.global_batch = c.global_batch;
  req.seq_len = c.seq;
  req.max_micro_batch = c.max_mbs;
  req.max_cp = c.max_cp;
  if (!c.precision.empty()) req.base.precision = plan::parse_precision(c.precision, "--precision");
  if (c.flash && c.no_flash)
    throw InputError("--no-flash", {}, "--flash and --no-flash contradict each other: give one");
  // Fused attention unless asked not to, where every cluster's GPU runs it.
  bool every_gpu_runs_flash = true;
  for (const auto& path : req.topologies) {
    every_gpu_runs_flash =
        every_gpu_runs_flash &&
        cost::runs_flash_attention(topology::load_topology_with_sets(path, std::nullopt, c.sets).gpu());
  }
  req.base.flash_attention = c.flash || (!c.no_flash && every_gpu_runs_flash);
  if (!c.plan.empty()) {
    plan::Plan family = plan::parse_plan(c.plan, "--plan");
    if (!c.precision.empty()) family.precision = req.base.precision;
    if (!family.flash_given) family.flash_attention = req.base.flash_attention;
    if (c.flash) family.flash_attention = true;
    req.plan = family;
  }
  // Every table's GPU must run the precision, or its cells could not be priced.
  const plan::Precision precision = req.plan ? req.plan->precision : req.base.precision;
  for (std::size_t i = 0; i < c.topologies.size(); ++i) {
    cost::check_precision_supported(topology::load_topology_with_sets(req.topologies[i], std::nullopt, req.sets).gpu(),
                                    precision, c.topologies[i]);
  }
  req.search.threads = c.threads;
  req.refine = static_cast<std::size_t>(c.refine);
  std::optional<cost::Calibration> calibration;
  if (!c.calibration.empty()) calibration = cost::load_calibration(report::data_path(c.calibration));
  req.search.step.calibration = calibration ? &*calibration : nullptr;
  report::Progress progress("cells", req.workloads.size() * req.topologies.size() * req.gpus.size());
  req.on_cell = [&progress](std::size_t) { progress.advance(); };
  const auto cells = ranks::count() > 1 ? shared_sweep(req, progress) : planner::capacity_sweep(req);
  progress.finish();
  if (!ranks::is_root()) return;
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
          cost::StepOptions step = req.search.step;
          step.explain = false;
          for (const std::string& o :
               report::outside_calibration(cost::predict_step(req.workloads[i], *cell.plan, topo, step))) {
            outside.push_back(fmt::format("{} on {} GPUs: {}", cell.workload, cell.gpus, o));
          }
        }
      }
    }
    report::warn_outside_calibration(&*calibration, c.calibration, outside);
  }
  report::CostSettings cost{c.tokens};
  report::Report r = report::capacity_report(cells, command_line(c), c.global_batch, c.seq, cost);
  // What the margin and each --set made of every cluster, under the command line.
  std::vector<std::string> said = {report::margin_note(req.search.step.memory.margin)};
  for (const auto& path : req.topologies) {
    const std::string echo = report::set_echo_text(path, c.sets);
    for (std::size_t at = 0; at < echo.size();) {
      const std::size_t end = echo.find('\n', at);
      said.push_back(path.filename().string() + ": " + echo.substr(at, end - at));
      at = end == std::string::npos ? echo.size() : end + 1;
    }
  }
  r.notes.insert(r.notes.begin() + std::min<std::ptrdiff_t>(1, std::ssize(r.notes)), said.begin(), said.end());
  emit(report::render(r, format), c.output);
}

}  // namespace

void add_table_command(CLI::App& app) {
  auto c = std::make_shared<TableCommand>();
  CLI::App* sub = app.add_subcommand("table",
                                     "Capacity tables over workloads x clusters x GPU counts: best plan, step time, "
                                     "tokens/s, MFU, memory, cost to train");
  sub->add_option("--workloads", c->workloads, "Workload files, comma-separated")->required()->delimiter(',');
  sub->add_option("--topologies", c->topologies, "Topology files (cluster form), comma-separated")
      ->required()
      ->delimiter(',');
  sub->add_option("--gpus", c->gpus, "GPU counts, comma-separated, e.g. 8,16,32,64")
      ->required()
      ->delimiter(',')
      ->check(positive_number());
  sub->add_option("--global-batch", c->global_batch, "Sequences per optimizer step")
      ->required()
      ->check(positive_number());
  sub->add_option("--seq", c->seq, "Tokens per sequence (default: each workload's)")->check(positive_number());
  sub->add_option("--tokens", c->tokens, "Tokens to train, e.g. 1e12: adds days and GPU-hours")
      ->check(positive_number());
  sub->add_option("--price,--price-per-gpu-hour", c->prices,
                  "Price of one GPU-hour in USD replacing the topology files' (p4d, p4de, p5 state AWS's on-demand "
                  "price): one for "
                  "every cluster, or one per cluster in --topologies order, e.g. 4.10,12.29")
      ->delimiter(',')
      ->check(positive_number());
  sub->add_option("--set", c->sets,
                  "Change a figure of every topology without editing the files, e.g. --set nics.bandwidth=\"200 Gbps\"")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--memory-margin", c->memory_margin,
                  "Keep this much of each GPU's memory free, e.g. \"5%\" or \"2 GiB\"");
  sub->add_option("--plan", c->plan,
                  "A plan family in compact form (e.g. \"tp=8,pp=2,zero=1\"); dp follows each GPU count. "
                  "Default: search every plan");
  sub->add_option("--threads", c->threads, "Worker threads (default: all cores); the output does not depend on it")
      ->check(positive_number());
  sub->add_option("--refine", c->refine,
                  "Simulate each searched cell's best K plans on the event engine and show the fastest there")
      ->check(non_negative_number());
  sub->add_option("--max-mbs", c->max_mbs, "Largest micro-batch size tried (powers of two, default 16)")
      ->check(positive_number());
  sub->add_option("--max-cp", c->max_cp,
                  "Largest context-parallel degree tried (powers of two, with cp-comm p2p and a2a; default 1: none)")
      ->check(positive_number());
  sub->add_option("--precision", c->precision, "fp32, tf32, bf16 (default), fp16, fp8, mxfp8 or nvfp4");
  sub->add_flag("--flash", c->flash,
                "Plans use fused (flash) attention (the default where every cluster's GPU runs it)");
  sub->add_flag("--no-flash", c->no_flash, "Plans store the s x s attention scores (Korthikanti et al.'s accounting)");
  sub->add_option("--format", c->format, "text (default), markdown, csv, json or html");
  sub->add_option("-o,--output", c->output, "Write to this file (atomically) instead of stdout");
  sub->add_option("--calibration", c->calibration,
                  "Calibration file from `stepcast calibrate`: every plan's collectives and compute priced with it");
  sub->callback([c] { run(*c); });
}

}  // namespace stepcast::cli
