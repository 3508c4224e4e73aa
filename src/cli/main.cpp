// stepcast: predicts step time and per-GPU memory of distributed training plans.
// The one main(): builds the subcommands, starts the MPI ranks where a launcher started this
// process, and turns every error into its exit code (failure.cpp) and one message.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <exception>

#include "commands.hpp"
#include "failure.hpp"
#include "output.hpp"
#include "ranks.hpp"
#include "stepcast/core/errors.hpp"
#include "suggest.hpp"

namespace {

int to_int(stepcast::ExitCode code) { return static_cast<int>(code); }

}  // namespace

int main(int argc, char** argv) {
  using stepcast::ExitCode;
  CLI::App app{
      "stepcast predicts how long one training step of a parallelism plan takes on a cluster, how much\n"
      "memory each GPU needs, and where the time goes. With no subcommand it prints the seed's worked\n"
      "communication check."};
  app.set_version_flag("--version", std::string("stepcast ") + STEPCAST_VERSION);
  app.require_subcommand(0, 1);
  app.footer("Exit codes: 0 ok, 2 bad input, 3 infeasible request, 70 internal error.");
  // One line per subcommand (declared in commands.hpp).
  stepcast::cli::add_seed_check_command(app);
  stepcast::cli::add_memory_command(app);
  stepcast::cli::add_predict_command(app);
  stepcast::cli::add_operators_command(app);
  stepcast::cli::add_collective_command(app);
  stepcast::cli::add_topology_command(app);
  stepcast::cli::add_resilience_command(app);
  stepcast::cli::add_simulate_command(app);
  stepcast::cli::add_calibrate_command(app);
  stepcast::cli::add_validate_command(app);
  stepcast::cli::add_search_command(app);
  stepcast::cli::add_table_command(app);
  // Before any command's work: its output paths can be written, and none names one of its inputs.
  app.parse_complete_callback([&app] {
    for (const CLI::App* command : app.get_subcommands()) stepcast::cli::check_outputs(*command);
  });
  stepcast::cli::ranks::start(argc, argv);
  int code = to_int(ExitCode::kOk);
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) stepcast::cli::run_default_report();
  } catch (const CLI::ExtrasError& e) {
    // An unknown subcommand or option, with the nearest known one; rank 0 alone prints it.
    if (stepcast::cli::ranks::is_root()) {
      fmt::print(stderr, "stepcast: error: {}\n",
                 stepcast::cli::unexpected_argument_message(app, argc, argv, e.what()));
    }
    code = to_int(ExitCode::kInput);
  } catch (const CLI::ParseError& e) {
    // Every rank parsed the same arguments: rank 0 prints help, version or the parse error.
    code = stepcast::cli::ranks::is_root() ? app.exit(e) : e.get_exit_code();
    if (code != 0) code = to_int(ExitCode::kInput);
  } catch (...) {
    const stepcast::cli::Failure failure = stepcast::cli::describe_failure(std::current_exception());
    const stepcast::cli::ranks::Verdict verdict = stepcast::cli::ranks::on_failure(failure.exit_code);
    if (verdict.print) fmt::print(stderr, "{}", failure.message);
    code = verdict.exit_code;
  }
  stepcast::cli::ranks::stop();
  return code;
}
