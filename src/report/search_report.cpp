// The report of `stepcast search`: the fastest fitting plans with their figures, which of them
// the model's own error cannot rank apart, and how many candidates were rejected for each reason.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/units.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/plan_reports.hpp"

namespace stepcast::report {

namespace {

/// The width of a terminal's search report without --wide.
constexpr std::size_t kNarrowWidth = 120;

/// The plan as `--plan` reads it, without the settings that are the defaults (zero=0, mbs=1,
/// recompute=none, tp=1, pp=1, schedule=1f1b), so a row fits a terminal.
std::string short_plan(const plan::Plan& p) {
  std::string full = plan_summary(p) + ",";
  for (const std::string_view drop :
       {",zero=0,", ",mbs=1,", ",recompute=none,", ",schedule=1f1b,", ",tp=1,", ",pp=1,"}) {
    const auto at = full.find(drop);
    if (at != std::string::npos) full.erase(at, drop.size() - 1);
  }
  full.pop_back();
  return full;
}

/// Whether `t` is within the model's error scatter of the fastest step `best`.
bool is_tie(Seconds t, Seconds best, const std::optional<ErrorScatter>& scatter) {
  return scatter && std::log(t / best) <= std::log1p(scatter->relative);
}

/// The plans table's columns: --wide's every figure (the engine's beside the closed form's when
/// refined), or the narrow report's few.
std::vector<Column> plan_columns(bool wide, bool refined) {
  std::vector<Column> columns;
  if (wide) {
    columns = {{"rank", "rank", "", -1}, {"plan", "plan", "", -1}, {"step_time_s", "step time", "s", 4}};
    if (refined) {
      columns.push_back({"simulated_step_time_s", "simulated step", "s", 4});
      columns.push_back({"simulated_tokens_per_s", "sim tokens/s", "", 0});
      columns.push_back({"simulated_mfu", "sim MFU", "%", 1, 0.01});
    }
    const std::vector<Column> rest = {{"tokens_per_s", "tokens/s", "", 0},
                                      {"mfu", "MFU", "%", 1, 0.01},
                                      {"memory_bytes", "memory/GPU", "GiB", 2, unit::kGibi},
                                      {"compute_s", "compute", "s", 4},
                                      {"bubble_s", "bubble", "s", 4},
                                      {"exposed_communication_s", "exposed comm", "s", 4},
                                      {"interval_low_s", "90% low", "s", 4},
                                      {"interval_high_s", "90% high", "s", 4},
                                      {"tie", "tie", "", -1},
                                      {"same_as", "same as", "", -1}};
    columns.insert(columns.end(), rest.begin(), rest.end());
  } else {
    // Tokens/s is the step time's inverse here (every plan runs the same batch): --wide has it.
    columns = {{"rank", "#", "", -1},
               {"plan", "plan", "", -1},
               {"step_time_s", "step", "s", 3},
               {"mfu", "MFU", "%", 1, 0.01},
               {"memory_bytes", "memory", "GiB", 1, unit::kGibi},
               {"interval", "90% interval", "s", -1},
               {"tie", "tie", "", -1}};
  }
  return columns;
}

/// Rejected candidates by rule, each counted under the first rule it breaks.
Table rejections_table(const planner::SearchResult& result, bool wide) {
  // The code is what programs filter on (plan/verdict.hpp); the reason is for people, and the examples,
  // long sentences, are the wide report's.
  std::vector<Column> reasons = {{"reason", "reason", "", -1}, {"count", "count", "", -1}};
  if (wide) reasons.push_back({"example", "first example", "", -1});
  reasons.push_back({"code", "code", "", -1});
  Table rejections("rejections", "Rejected candidates by reason (each counted under the first rule it breaks)",
                   std::move(reasons));
  for (const auto& rej : result.rejections) {
    std::vector<Cell> row = {Cell::of_text(std::string(plan::rule_summary(rej.rule))),
                             Cell::of_integer(static_cast<std::int64_t>(rej.count))};
    if (wide) row.push_back(Cell::of_text(plan::describe(rej.example)));
    row.push_back(Cell::of_text(std::string(plan::rule_code(rej.rule))));
    rejections.add_row(std::move(row));
  }
  return rejections;
}

}  // namespace

Report search_report(const planner::SearchResult& result, const SearchContext& c, std::size_t top) {
  Report r;
  r.title = fmt::format("Plan search: {} on {} ({} x {})", c.workload, c.topology, c.gpus, c.gpu);
  r.notes.push_back("command: " + c.command);
  for (std::size_t at = 0; at < c.set_echo.size();) {
    const std::size_t end = c.set_echo.find('\n', at);
    r.notes.push_back(c.set_echo.substr(at, end - at));
    at = end == std::string::npos ? c.set_echo.size() : end + 1;
  }
  if (!c.placement.empty()) r.notes.push_back(c.placement);
  r.notes.push_back(fmt::format("global batch {} sequences of {} tokens", c.global_batch, c.seq_len));
  if (c.doc_len > 0) r.notes.push_back(packed_documents_note(c.doc_len));
  if (!c.fine_tuning.empty()) r.notes.push_back(c.fine_tuning);
  if (!c.margin.empty()) r.notes.push_back(c.margin);
  r.notes.push_back(fmt::format("{} candidates: {} break a plan rule, {} do not fit in memory, {} fit",
                                result.candidates, result.invalid, result.not_fitting,
                                result.ranked.size() + result.merged));
  if (result.merged > 0) {
    r.notes.push_back(
        fmt::format("{} distinct plans: {} spellings the model prices identically (zero=3 and fsdp=full, ...) are "
                    "listed under \"same as\" in the row of the plan they spell",
                    result.ranked.size(), result.merged));
  }

  const std::size_t shown = std::min(top, result.ranked.size());
  const bool refined = shown > 0 && result.ranked.front().simulated_step_time.has_value();
  // The step a plan is ranked by: the engine's when refined (the re-ranked rows), else the closed form's.
  const auto ranked_step = [&](const planner::RankedPlan& p) {
    return refined && p.simulated_step_time ? *p.simulated_step_time : p.metrics.step_time;
  };
  if (shown > 0) {
    if (c.scatter) {
      r.notes.push_back(fmt::format(
          "tie: a step within {:.1f}% of the fastest, the scatter of the model's errors on {} measured runs like it "
          "({}); the model cannot rank ties apart",
          100.0 * c.scatter->relative, c.scatter->runs, c.scatter->run_class));
    } else {
      r.notes.push_back("ties unmarked: too few measured runs like these plans to know the model's error on them");
    }
    if (std::any_of(c.intervals.begin(), c.intervals.end(), [](const auto& i) { return i.has_value(); })) {
      r.notes.push_back(
          "90% interval: where each plan's step lands by the model's errors on measured runs of its class (each "
          "source's runs predicted by the defaults fitted without it, or by --calibration's), widened by how far the "
          "sources' median errors lie apart; blank where too few runs are like it");
    }
    if (!c.lead.empty()) r.notes.push_back(c.lead);
  }
  r.notes.insert(r.notes.end(), c.comparison_notes.begin(), c.comparison_notes.end());
  std::vector<Column> columns = plan_columns(c.wide, refined);
  Table plans("plans",
              fmt::format("Fastest {} of {} fitting plans{}", shown, result.ranked.size(),
                          refined ? " (simulated on the event engine and re-ranked by it)" : ""),
              std::move(columns));
  const Seconds best = shown > 0 ? ranked_step(result.ranked.front()) : Seconds{0.0};
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& p = result.ranked[i];
    const auto& m = p.metrics;
    const Cell tie = Cell::of_text(i > 0 && is_tie(ranked_step(p), best, c.scatter) ? "tie" : "");
    const auto& interval = i < c.intervals.size() ? c.intervals[i] : std::optional<calibrate::StepInterval>{};
    std::vector<Cell> row = {Cell::of_integer(static_cast<std::int64_t>(i + 1))};
    if (!c.wide) {
      // The engine's figures where it re-timed the plan: the same tokens and FLOPs over its step.
      const double speedup = m.step_time / ranked_step(p);
      row.push_back(Cell::of_text(short_plan(p.plan)));
      for (const double v : {ranked_step(p).value(), m.mfu * speedup, m.memory.total.value()})
        row.push_back(Cell::of_number(v));
      row.push_back(interval
                        ? Cell::of_text(fmt::format("{:.3f}-{:.3f}", interval->low.value(), interval->high.value()))
                        : Cell::empty());
      row.push_back(tie);
      plans.add_row(std::move(row));
      continue;
    }
    row.push_back(Cell::of_text(plan_summary(p.plan)));
    row.push_back(Cell::of_number(m.step_time.value()));
    if (refined && p.simulated_step_time) {
      const double speedup = m.step_time / *p.simulated_step_time;
      row.push_back(Cell::of_number(p.simulated_step_time->value()));
      row.push_back(Cell::of_number(m.tokens_per_s * speedup));
      row.push_back(Cell::of_number(m.mfu * speedup));
    } else if (refined) {
      row.insert(row.end(), 3, Cell::empty());
    }
    for (const double v : {m.tokens_per_s, m.mfu, m.memory.total.value(), m.compute.value(), m.bubble.value(),
                           m.exposed_communication.value()}) {
      row.push_back(Cell::of_number(v));
    }
    row.push_back(interval ? Cell::of_number(interval->low.value()) : Cell::empty());
    row.push_back(interval ? Cell::of_number(interval->high.value()) : Cell::empty());
    row.push_back(tie);
    std::string same_as;
    for (const plan::Plan& e : p.equivalents) same_as += (same_as.empty() ? "" : "; ") + plan_summary(e);
    row.push_back(Cell::of_text(same_as));
    plans.add_row(std::move(row));
  }
  r.tables.push_back(std::move(plans));
  r.tables.insert(r.tables.end(), c.comparisons.begin(), c.comparisons.end());

  r.tables.push_back(rejections_table(result, c.wide));
  if (!c.wide) r.text_width = kNarrowWidth;
  return r;
}

}  // namespace stepcast::report
