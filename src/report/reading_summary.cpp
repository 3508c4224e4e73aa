// The reading summary of the measurement commands.
#include "stepcast/report/reading_summary.hpp"

#include <fmt/format.h>
#include <array>
#include <string_view>
#include <utility>

namespace stepcast::report {
namespace {

using calibrate::SkippedLine;

constexpr std::array<SkippedLine::Kind, 3> kKinds{SkippedLine::Kind::kResultRow, SkippedLine::Kind::kNcclDebug,
                                                  SkippedLine::Kind::kOther};

// "what: n, other: m" of the counts that are not zero.
std::string nonzero_list(const std::vector<std::pair<int, std::string>>& counts) {
  std::string out;
  for (const auto& [n, what] : counts) {
    if (n > 0) out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", what, n);
  }
  return out;
}

// "1 row", "2 rows".
std::string counted(std::size_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

int rows_of(const calibrate::Measurements& m) {
  int rows = 0;
  for (const auto& run : m.runs) rows += static_cast<int>(run.points.size());
  return rows;
}

}  // namespace

std::string skipped_kind_name(SkippedLine::Kind kind) {
  switch (kind) {
    case SkippedLine::Kind::kResultRow:
      return "unreadable or cut-off rows";
    case SkippedLine::Kind::kNcclDebug:
      return "NCCL debug output";
    case SkippedLine::Kind::kOther:
      return "other text";
  }
  return "lines";
}

std::string reading_summary(const std::vector<calibrate::Measurements>& files,
                            const std::vector<calibrate::RowUse>& use, const std::string& holdout_reason,
                            bool verbose) {
  std::string out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const calibrate::Measurements& m = files[i];
    const calibrate::RowUse u = i < use.size() ? use[i] : calibrate::RowUse{};
    std::vector<std::pair<int, std::string>> skipped;
    for (SkippedLine::Kind kind : kKinds) {
      int n = 0;
      for (const SkippedLine& s : m.skipped) n += s.kind == kind ? 1 : 0;
      skipped.emplace_back(n, skipped_kind_name(kind));
    }
    const std::string why_skipped = nonzero_list(skipped);
    const std::string why_unused = nonzero_list({{u.empty, "0 bytes or no time"},
                                                 {u.outside_sizes, "outside --min-size/--max-size"},
                                                 {u.holdout, holdout_reason},
                                                 {u.single_rank, "one-rank runs"}});
    out += fmt::format("read {}: {} in {}; skipped {}{}; used {}{}\n", m.file,
                       counted(static_cast<std::size_t>(rows_of(m)), "row"), counted(m.runs.size(), "run"),
                       counted(m.skipped.size(), "line"), why_skipped.empty() ? "" : " (" + why_skipped + ")",
                       counted(static_cast<std::size_t>(u.used), "row"),
                       why_unused.empty() ? "" : " (not used: " + why_unused + ")");
    for (const calibrate::ReadingNote& n : m.notes) out += fmt::format("  note: {}:{}: {}\n", m.file, n.line, n.text);
    if (!verbose) continue;
    for (const SkippedLine& s : m.skipped) out += fmt::format("  skipped: {}:{}: {}\n", m.file, s.line, s.why);
  }
  return out;
}

}  // namespace stepcast::report
