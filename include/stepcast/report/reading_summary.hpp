// What `validate` and `calibrate` say about reading their measurement files: per file, the rows
// read, the lines skipped and why, and the rows used.
#pragma once

#include <string>
#include <vector>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/measurement.hpp"

namespace stepcast::report {

/// One line per file: "read FILE: R rows in N runs; skipped S lines (kind: n, ...); used U rows
/// (not used: why: n, ...)",
/// then its notes; with `verbose`, every skipped line with its reason. `use` holds one entry per
/// file (calibrate::select_samples); `holdout_reason` words why rows on the other side of
/// --holdout are not used ("held out by --holdout").
std::string reading_summary(const std::vector<calibrate::Measurements>& files,
                            const std::vector<calibrate::RowUse>& use, const std::string& holdout_reason, bool verbose);

/// The name of a skipped line's kind: "NCCL debug output" and the like.
std::string skipped_kind_name(calibrate::SkippedLine::Kind kind);

}  // namespace stepcast::report
