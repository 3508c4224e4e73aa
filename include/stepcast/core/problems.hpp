// Collecting the problems of independent checks so that a file's mistakes are reported together
// (STYLE.md: validation collects every problem, up to 20, before throwing).
#pragma once

#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast {

/// Several problems found in one input, thrown as one InputError (exit code 2) whose text lists
/// each problem on its own line with its file and JSON pointer.
class InputProblems : public InputError {
 public:
  explicit InputProblems(std::vector<InputError> problems, int not_listed);
  [[nodiscard]] const std::vector<InputError>& problems() const { return problems_; }
  [[nodiscard]] int not_listed() const { return not_listed_; }

 private:
  std::vector<InputError> problems_;
  int not_listed_;
};

class ProblemList {
 public:
  static constexpr int kMaxListed = 20;

  /// Runs `check`; an InputError it throws is kept instead of propagating (InputProblems are
  /// taken apart into their problems). Other exceptions propagate.
  template <class F>
  void check(F&& check) {
    try {
      check();
    } catch (const InputError& e) {
      add(e);
    }
  }

  void add(const InputError& problem);
  [[nodiscard]] bool empty() const { return problems_.empty(); }

  /// Throws what was collected: one problem as it was, several as InputProblems.
  void throw_if_any() const;

 private:
  std::vector<InputError> problems_;
  int not_listed_ = 0;
};

}  // namespace stepcast
