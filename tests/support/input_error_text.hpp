// Shared by the test suites: the full text of the InputError a call throws, so tests can assert
// the whole message (file, JSON pointer and rule), or "no error" when it throws none.
#pragma once

#include <string>
#include <utility>

#include "stepcast/core/errors.hpp"

namespace stepcast::test {

template <class F>
std::string input_error_text(F&& call) {
  try {
    std::forward<F>(call)();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace stepcast::test
