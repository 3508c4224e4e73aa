// Error classes tied to exit codes (STYLE.md B4): bad input, infeasible requests and bugs are
// different things and leave the program differently.
#pragma once

#include <stdexcept>
#include <string>

namespace stepcast {

/// Exit codes of the `stepcast` executable; one table, used by the one catch in main.
enum class ExitCode : int { kOk = 0, kInput = 2, kInfeasible = 3, kBug = 70 };

/// Bad input: a file, JSON path or command-line value that breaks a rule. Exit code 2.
/// what() reads "file:/json/pointer: message" (parts that are empty are left out).
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string message);
  explicit InputError(std::string message) : InputError({}, {}, std::move(message)) {}

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

/// A well-formed request that cannot be satisfied (a plan that does not fit). Exit code 3.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A broken invariant inside stepcast: a bug, never the user's fault. Exit code 70.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws InternalError for a failed STEPCAST_ASSERT. (File and line come from the macro:
/// clang 14 with libstdc++ 12 has no std::source_location.)
[[noreturn]] void assertion_failed(const char* condition, const std::string& why, const char* file, int line);

}  // namespace stepcast

/// Checks an invariant; on failure throws InternalError with the condition, reason and location.
#define STEPCAST_ASSERT(cond, why)                                               \
  do {                                                                           \
    if (!(cond)) ::stepcast::assertion_failed(#cond, (why), __FILE__, __LINE__); \
  } while (false)

/// Marks a branch that cannot be reached if the code is right.
#define STEPCAST_UNREACHABLE(why) ::stepcast::assertion_failed("unreachable", (why), __FILE__, __LINE__)
