// The exit code and message of every error class (STYLE.md B4).
#include "failure.hpp"

#include <fmt/format.h>

#include "ranks.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::cli {

namespace {

int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace

Failure describe_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ranks::Failed& e) {
    return {e.exit_code, e.message};
  } catch (const InputError& e) {
    return {to_int(ExitCode::kInput), fmt::format("stepcast: error: {}\n", e.what())};
  } catch (const InfeasibleError& e) {
    return {to_int(ExitCode::kInfeasible), fmt::format("stepcast: infeasible: {}\n", e.what())};
  } catch (const InternalError& e) {
    return {to_int(ExitCode::kBug), fmt::format("stepcast: {}\n", e.what())};
  } catch (const std::exception& e) {
    return {to_int(ExitCode::kBug), fmt::format("stepcast: internal error: {}\n", e.what())};
  } catch (...) {
    return {to_int(ExitCode::kBug), "stepcast: internal error: unknown exception\n"};
  }
}

}  // namespace stepcast::cli
