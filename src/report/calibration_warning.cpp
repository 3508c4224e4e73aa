// Warning on calibrations used beyond what they were fitted on: the figures still apply (a
// measured correction is usually closer than none), but the user is told they are extrapolated.
#include "stepcast/report/calibration_warning.hpp"

#include <fmt/format.h>
#include <cstdio>

namespace stepcast::report {

void warn_outside_calibration(const cost::Calibration* calibration, const std::string& file,
                              const std::vector<std::string>& what) {
  if (!calibration || !calibration->range || what.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < what.size() && i < 3; ++i) list += (i ? ", " : "") + what[i];
  if (what.size() > 3) list += fmt::format(" and {} more", what.size() - 3);
  fmt::print(stderr, "stepcast: warning: {} was fitted on {}; extrapolated to {}\n", file,
             cost::to_string(*calibration->range), list);
}

std::vector<std::string> outside_calibration(const graph::StepPrediction& prediction) {
  std::vector<std::string> out;
  for (const graph::CommTerm& t : prediction.communication) {
    if (t.outside_calibration)
      out.push_back(fmt::format("{} ({} over {} ranks)", t.name, format_bytes(t.size), t.ranks));
  }
  return out;
}

}  // namespace stepcast::report
