// What a command makes: its text (table or JSON) and, when the plan does not fit in GPU memory,
// the refusal the command raises after the text is written (exit 3, STYLE.md A3).
#pragma once

#include <optional>
#include <string>

#include "stepcast/core/errors.hpp"

namespace stepcast::report {

struct CommandOutput {
  std::string text;
  std::optional<InfeasibleError> refusal;
};

}  // namespace stepcast::report
