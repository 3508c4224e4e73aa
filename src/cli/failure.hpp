// What an error means for the process: its exit code and the line stepcast prints for it. One
// place, so that main and a rank reporting a unit's error to rank 0 say exactly the same.
#pragma once

#include <exception>
#include <string>

namespace stepcast::cli {

struct Failure {
  int exit_code = 0;
  std::string message;  ///< the whole stderr text, newline included; empty: print nothing
};

/// Classifies a caught exception (InputError -> 2, InfeasibleError -> 3, InternalError and any
/// other exception -> 70, a ranks::Failed -> its code with nothing to print).
Failure describe_failure(const std::exception_ptr& error);

}  // namespace stepcast::cli
