// `stepcast operators`: the compute model's operator list for one micro-batch of a plan, with
// exact shapes and, for memory-bound operators, the kernel stepcast-kernel-bench runs in their
// place; the bench's input (`--format json`), and a readable table otherwise.
#include <memory>

#include "commands.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "stepcast/report/operators_command.hpp"

namespace stepcast::cli {

void add_operators_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::OperatorsRequest>>();
  CLI::App* sub = app.add_subcommand(
      "operators",
      "The operators the compute model prices for one micro-batch of a plan (embedding, one layer of "
      "each kind,\n"
      "output layer and loss, optimizer), with exact shapes: the list stepcast-kernel-bench "
      "times (--format json)");
  add_plan_options(*sub, command->request.plan, true, false);
  // The list depends on neither: leave out what would be accepted and ignored.
  sub->remove_option(sub->get_option("--calibration"));
  sub->remove_option(sub->get_option("--overhead"));
  sub->add_option("--format", command->request.format, "text (default), markdown, csv or json");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { emit(report::operators_command(command->request), command->output); });
}

}  // namespace stepcast::cli
