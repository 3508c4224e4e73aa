// `stepcast simulate`: one training step of a plan run on the discrete-event engine (flows that
// share links, the pipeline schedule's task order, stragglers), beside the analytical figure.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "budget.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "ranks.hpp"
#include "step_interval.hpp"
#include "stepcast/report/simulate_command.hpp"

namespace stepcast::cli {

void add_simulate_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::SimulateRequest>>();
  auto budget = std::make_shared<Budget>();
  CLI::App* sub = app.add_subcommand("simulate",
                                     "Run one training step of a plan on the discrete-event engine (contention, "
                                     "pipeline schedule, stragglers; exit 3 when it does not fit in GPU memory)");
  add_plan_options(*sub, command->request.plan, true);
  add_interval_options(*sub, command->request.interval);
  sub->add_option("--seed", command->request.seed, "Seed of the random variation (default 1)");
  sub->add_option("--seeds", command->request.seeds,
                  "Simulate this many seeds (--seed, --seed + 1, ...) and give the step time's mean, p50, p90 and max "
                  "over them; under mpirun the seeds are shared out over the ranks")
      ->check(positive_number());
  sub->add_option("--straggler", command->request.straggler,
                  "Slow GPU, node or noise: \"gpu=3,slowdown=1.5\", \"node=1,slowdown=2\", \"cv=0.05\" (each task's "
                  "compute varies), \"step-cv=0.05\" (each GPU draws one factor per step; every data-parallel "
                  "replica is simulated)");
  sub->add_option("--trace", command->request.trace, "Write a Chrome/Perfetto trace (JSON) to this file");
  sub->add_flag("--no-contention", command->request.no_contention,
                "Give every collective and send the analytical engine's price on links of its own: the two engines "
                "then differ only in how they overlap calls with compute (scripts/compare-engines)");
  sub->add_flag("--explain", command->request.explain,
                "Compare, node by node of the step graph, the time each engine leaves exposed on the critical rank");
  sub->add_option("--chakra", command->request.chakra,
                  "Write the step as Chakra execution traces into this folder: <folder>/stepcast.<gpu>.et per GPU "
                  "and stepcast.comm_groups.json, as ASTRA-sim reads them");
  sub->add_flag("--json", command->request.json, "One JSON object instead of the table");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  add_budget_options(*sub, *budget);
  sub->callback([command, budget] {
    command->request.approve_work = [budget](const planner::WorkEstimate& work, std::string_view what,
                                             std::string_view lower) { check_budget(work, *budget, what, lower); };
    if (command->request.seeds > 1) ranks::will_share();
    const auto deal = [](const std::vector<double>& costs, const std::function<std::string(std::size_t)>& work) {
      return ranks::share(costs, work);
    };
    finish(report::simulate_command(command->request, deal), command->output);
  });
}

}  // namespace stepcast::cli
