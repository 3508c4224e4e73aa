// `stepcast table`: capacity tables over workloads x clusters x GPU counts (the best plan found by
// search, or a plan family), with training days, GPU-hours and cost, in five formats
// (report::table_command); under MPI the cells are dealt over the ranks.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "budget.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "plan_space_options.hpp"
#include "ranks.hpp"
#include "stepcast/planner/capacity.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/table_command.hpp"

namespace stepcast::cli {
namespace {

/// A searched cell's choice in bytes (what rebuild_cell needs), and back.
std::string encode_choice(const planner::CapacityCell& cell) {
  ranks::WireWriter w;
  w.u64(cell.plan_id ? 1 : 0).u64(cell.plan_id.value_or(0)).u64(cell.fits ? 1 : 0).u64(cell.candidates).text(cell.note);
  w.u64(cell.simulated_step_time ? 1 : 0).f64(cell.simulated_step_time.value_or(Seconds{}).value());
  w.u64(static_cast<std::uint64_t>(cell.per_domain));
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
  choice.per_domain = static_cast<int>(r.u64());
  return choice;
}

/// The sweep with its cells dealt over the ranks by their candidate counts (the search's work
/// grows with them, and so does the refinement's with the GPUs simulated); rank 0 rebuilds each
/// cell from its choice. The other ranks get nothing.
std::optional<std::vector<planner::CapacityCell>> shared_sweep(const planner::CapacityRequest& req,
                                                               report::Progress& progress) {
  const std::vector<planner::CellSpec> specs = planner::capacity_cells(req);
  std::vector<double> costs;
  for (const auto& spec : specs) costs.push_back(static_cast<double>(planner::cell_candidates(req, spec)));
  const std::vector<std::string> choices = ranks::share(
      costs, [&](std::size_t i) { return encode_choice(planner::capacity_cell(req, specs[i])); },
      [&progress] { progress.advance(); });
  if (!ranks::is_root()) return std::nullopt;
  std::vector<planner::CapacityCell> cells;
  for (std::size_t i = 0; i < choices.size(); ++i)
    cells.push_back(planner::rebuild_cell(req, specs[i], decode_choice(choices[i])));
  return cells;
}

}  // namespace

void add_table_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::TableRequest>>();
  report::TableRequest* c = &command->request;
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
  sub->add_option(
         "--gpus-per-domain", c->gpus_per_domain,
         "GPUs used of each scale-up (NVLink) domain, whole trays, e.g. 64 of an NVL72 rack's 72: counts above "
         "it run on count / D domains")
      ->check(positive_number());
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
  add_plan_space_options(*sub, *c);
  sub->add_option("--format", c->format, "text (default), markdown, csv, json or html");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  auto budget = std::make_shared<Budget>();
  add_budget_options(*sub, *budget);
  sub->callback([command, budget] {
    command->request.approve_work = [budget](const planner::WorkEstimate& work, std::string_view what,
                                             std::string_view lower) { check_budget(work, *budget, what, lower); };
    ranks::will_share();
    const report::SharedSweep shared = ranks::count() > 1 ? report::SharedSweep(shared_sweep) : nullptr;
    emit(report::table_command(command->request, shared).text, command->output);
  });
}

}  // namespace stepcast::cli
