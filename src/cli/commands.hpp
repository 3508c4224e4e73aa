// The subcommands of `stepcast`; each lives in its own cmd_<name>.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

namespace stepcast::cli {

// One line per subcommand: void add_<name>_command(CLI::App& app);
void add_seed_check_command(CLI::App& app);
void add_memory_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_operators_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_topology_command(CLI::App& app);
void add_resilience_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_table_command(CLI::App& app);

/// What `stepcast` with no subcommand prints: the seed's worked communication check.
void run_default_report();

}  // namespace stepcast::cli
