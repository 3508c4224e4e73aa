// The subcommands of `stepcast`; each lives in its own cmd_<name>.cpp and registers itself here.
#pragma once

#include <CLI/CLI.hpp>

namespace stepcast::cli {

// One line per subcommand: void add_<name>_command(CLI::App& app);

}  // namespace stepcast::cli
