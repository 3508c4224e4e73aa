// The reproducing command line's options on the plans search and table try (their requests name
// them alike): each one given, in the order both commands print them.
#pragma once

#include <fmt/format.h>

#include <string>

#include "stepcast/report/fine_tuning.hpp"

namespace stepcast::report {

/// " --max-mbs 8 --precision fp8 ... --calibration FILE" ("" where every one has its default).
template <typename Request>
std::string plan_space_arguments(const Request& c) {
  const Request defaults{};
  std::string s;
  if (c.max_mbs != defaults.max_mbs) s += fmt::format(" --max-mbs {}", c.max_mbs);
  if (c.max_cp != defaults.max_cp) s += fmt::format(" --max-cp {}", c.max_cp);
  if (!c.precision.empty()) s += " --precision " + c.precision;
  if (!c.optimizer.empty()) s += " --optimizer " + c.optimizer;
  if (c.flash) s += " --flash";
  if (c.no_flash) s += " --no-flash";
  if (c.doc_len > 0) s += fmt::format(" --doc-len {}", c.doc_len);
  s += fine_tuning_arguments(c.fine_tuning);
  if (!c.calibration.empty()) s += " --calibration " + c.calibration;
  return s;
}

}  // namespace stepcast::report
