// stepcast: predicts step time and per-GPU memory of distributed training plans.
// The one main(): builds the subcommands and maps every error class to its exit code.
#include <CLI/CLI.hpp>
#include <exception>
#include <fmt/format.h>

#include "commands.hpp"
#include "suggest.hpp"
#include "stepcast/core/errors.hpp"

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
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) stepcast::cli::run_default_report();
    return to_int(ExitCode::kOk);
  } catch (const CLI::ExtrasError& e) {
    fmt::print(stderr, "stepcast: error: {}\n", stepcast::cli::unexpected_argument_message(app, argc, argv, e.what()));
    return to_int(ExitCode::kInput);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the parse error
    return code == 0 ? to_int(ExitCode::kOk) : to_int(ExitCode::kInput);
  } catch (const stepcast::InputError& e) {
    fmt::print(stderr, "stepcast: error: {}\n", e.what());
    return to_int(ExitCode::kInput);
  } catch (const stepcast::InfeasibleError& e) {
    fmt::print(stderr, "stepcast: infeasible: {}\n", e.what());
    return to_int(ExitCode::kInfeasible);
  } catch (const stepcast::InternalError& e) {
    fmt::print(stderr, "stepcast: {}\n", e.what());
    return to_int(ExitCode::kBug);
  } catch (const std::exception& e) {
    fmt::print(stderr, "stepcast: internal error: {}\n", e.what());
    return to_int(ExitCode::kBug);
  }
}
