// `stepcast memory`: the options; report::memory_command makes the output.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "commands.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "stepcast/report/memory_command.hpp"

namespace stepcast::cli {

void add_memory_command(CLI::App& app) {
  auto command = std::make_shared<CommandOptions<report::MemoryRequest>>();
  CLI::App* sub = app.add_subcommand(
      "memory",
      "Memory per GPU of a plan, every term separate (exit 3 if --topology is given and it does not fit); without "
      "--plan, a table of DDP, FSDP and FSDP with recompute in bf16 and fp32, as `accelerate estimate-memory` answers");
  add_plan_options(*sub, command->request.plan, false);
  sub->add_flag("--json", command->request.json, "One JSON object instead of the table");
  sub->add_flag("--explain", command->request.explain, "Show each term's formula and inputs");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { finish(report::memory_command(command->request), command->output); });
}

}  // namespace stepcast::cli
