// Shared by the test suites: runs the real `stepcast` executable from the source tree, as a user
// would, and returns what it printed (stdout and stderr together).
#pragma once

#include <sys/wait.h>

#include <doctest/doctest.h>
#include <array>
#include <cstdio>
#include <string>

namespace stepcast::test {

struct CommandResult {
  std::string output;
  int exit_code = -1;
};

/// Runs `stepcast ARGS` in `folder` (default: the source tree, where shipped files are).
inline CommandResult run_stepcast_with_status(const std::string& args,
                                              const std::string& folder = STEPCAST_SOURCE_DIR) {
  const std::string command = "cd '" + folder + "' && '" + STEPCAST_BINARY + "' " + args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  CommandResult r;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) r.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// The output of a run that must succeed (exit code 0).
inline std::string run_stepcast(const std::string& args) {
  CommandResult r = run_stepcast_with_status(args);
  CHECK_MESSAGE(r.exit_code == 0, "stepcast " << args << "\n" << r.output);
  return r.output;
}

}  // namespace stepcast::test
