// `stepcast operators`: the compute model's operator list for one micro-batch of a plan, with
// exact shapes and, for memory-bound operators, the kernel stepcast-kernel-bench runs in their
// place; the bench's input (`--format json`), and a readable table otherwise.
#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "stepcast/calibrate/bench_operators.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/report/operator_table.hpp"
#include "stepcast/report/writers.hpp"

namespace stepcast::cli {

namespace {

struct OperatorsCommand {
  PlanOptions plan;
  std::string format = "text";
  std::string output;
};

void run(const OperatorsCommand& c) {
  const report::Format format = report::parse_format(c.format, "--format");
  const PlanInputs in = report::load_plan_inputs(c.plan);
  if (!in.workload.shape) {
    throw InputError(c.plan.workload, {},
                     "operators needs the model's shape (layers, hidden, heads, ...), not only a parameter count");
  }
  const auto operators = calibrate::bench_operators(in.workload, in.plan);
  emit(report::render(report::operator_report(in.workload, in.plan, in.topology->gpu().name, operators), format),
       c.output);
}

}  // namespace

void add_operators_command(CLI::App& app) {
  auto command = std::make_shared<OperatorsCommand>();
  CLI::App* sub =
      app.add_subcommand("operators",
                         "The operators the compute model prices for one micro-batch of a plan (embedding, one layer, "
                         "output layer and loss,\n"
                         "optimizer), with exact shapes: the list stepcast-kernel-bench times (--format json)");
  add_plan_options(*sub, command->plan, true, false);
  // The list depends on neither: leave out what would be accepted and ignored.
  sub->remove_option(sub->get_option("--calibration"));
  sub->remove_option(sub->get_option("--overhead"));
  sub->add_option("--format", command->format, "text (default), markdown, csv or json");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { run(*command); });
}

}  // namespace stepcast::cli
