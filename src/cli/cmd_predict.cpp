// `stepcast predict`: step time, tokens/s, MFU and memory per GPU of a plan on a topology, with
// a breakdown that sums to the totals. A plan that does not fit still prints, then exits 3.
#include <CLI/CLI.hpp>
#include <memory>

#include "commands.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "step_interval.hpp"
#include "stepcast/report/predict_command.hpp"

namespace stepcast::cli {

void add_predict_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::PredictRequest>>();
  CLI::App* sub = app.add_subcommand("predict",
                                     "Step time, tokens/s, MFU and memory per GPU of a plan on a topology (exit 3 when "
                                     "it does not fit in GPU memory)");
  add_plan_options(*sub, command->request.plan, true);
  add_interval_options(*sub, command->request.interval);
  sub->add_option("--achieved-fraction", command->request.achieved_fraction,
                  "Price compute as hardware FLOPs / (peak x this fraction) instead of the per-operator model")
      ->check(CLI::Range(0.0, 1.0).description("in (0, 1]"));
  sub->add_flag("--json", command->request.json, "One JSON object instead of the table");
  sub->add_flag("--explain", command->request.explain, "Show each formula with its inputs");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { finish(report::predict_command(command->request), command->output); });
}

}  // namespace stepcast::cli
