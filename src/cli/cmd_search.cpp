// `stepcast search`: every valid plan of a model on a cluster, pruned by memory, ranked by
// predicted step time, the best few optionally re-timed on the event engine (report::search_command);
// under MPI the re-timing is dealt over the ranks.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "budget.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "plan_space_options.hpp"
#include "ranks.hpp"
#include "stepcast/planner/refine.hpp"
#include "stepcast/report/search_command.hpp"
#include "what_if_options.hpp"

namespace stepcast::cli {
namespace {

/// refine_top with the plans to simulate dealt over the ranks by their analytical step times
/// (the search itself runs on every rank); rank 0 gets the re-ranked result, the others false.
bool shared_refine(planner::SearchResult& result, const workload::Workload& w, const topology::Topology& topo,
                   std::size_t k, const graph::StepOptions& step) {
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

}  // namespace

void add_search_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::SearchRequest>>();
  report::SearchRequest* c = &command->request;
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
  add_plan_space_options(*sub, *c);
  sub->add_flag("--wide", c->wide,
                "Text with every column (the analytical and simulated steps, compute, bubble, exposed communication, "
                "equivalent spellings, rejection examples); without it the text fits 120 columns");
  sub->add_option("--format", c->format, "text (default), markdown, csv (the ranked plans), json or html");
  sub->add_flag("--json", c->json, "Same as --format json");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->add_option("--compare", c->compare,
                  "A plan (compact form, as --plan) to set beside the best: its rank, or the rule it breaks or the "
                  "memory it lacks, and the step-time terms it loses by (repeatable: one comparison per plan)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_what_if_options(*sub, c->gpus, c->gpus_per_domain, c->sets, c->memory_margin);
  auto budget = std::make_shared<Budget>();
  add_budget_options(*sub, *budget);
  sub->callback([command, budget] {
    command->request.approve_work = [budget](const planner::WorkEstimate& work, std::string_view what,
                                             std::string_view lower) { check_budget(work, *budget, what, lower); };
    ranks::will_share();
    const report::SharedRefine shared = ranks::count() > 1 ? report::SharedRefine(shared_refine) : nullptr;
    emit(report::search_command(command->request, shared).text, command->output);
  });
}

}  // namespace stepcast::cli
