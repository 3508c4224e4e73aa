// The report of `stepcast search`: the fastest fitting plans with their figures, and how many
// candidates were rejected for each reason.
#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/units.hpp"
#include "stepcast/report/plan_reports.hpp"

namespace stepcast::report {

Report search_report(const planner::SearchResult& result, const SearchContext& c, std::size_t top) {
  Report r;
  r.title = fmt::format("Plan search: {} on {} ({} x {})", c.workload, c.topology, c.gpus, c.gpu);
  r.notes.push_back("command: " + c.command);
  r.notes.push_back(fmt::format("global batch {} sequences of {} tokens", c.global_batch, c.seq_len));
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
  std::vector<Column> columns = {
      {"rank", "rank", "", -1}, {"plan", "plan", "", -1}, {"step_time_s", "step time", "s", 4}};
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
                                    {"same_as", "same as", "", -1}};
  columns.insert(columns.end(), rest.begin(), rest.end());
  Table plans("plans",
              fmt::format("Fastest {} of {} fitting plans{}", shown, result.ranked.size(),
                          refined ? " (simulated on the event engine and re-ranked by it)" : ""),
              std::move(columns));
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& p = result.ranked[i];
    const auto& m = p.metrics;
    std::vector<Cell> row = {Cell::of_integer(static_cast<std::int64_t>(i + 1)), Cell::of_text(plan_summary(p.plan)),
                             Cell::of_number(m.step_time.value())};
    if (refined && p.simulated_step_time) {
      // The same tokens and model FLOPs per step over the engine's step time.
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
    std::string same_as;
    for (const plan::Plan& e : p.equivalents) same_as += (same_as.empty() ? "" : "; ") + plan_summary(e);
    row.push_back(Cell::of_text(same_as));
    plans.add_row(std::move(row));
  }
  r.tables.push_back(std::move(plans));

  // The code is what programs filter on (plan/verdict.hpp); the reason and example are for people.
  Table rejections("rejections", "Rejected candidates by reason (each counted under the first rule it breaks)",
                   {{"reason", "reason", "", -1},
                    {"count", "count", "", -1},
                    {"example", "first example", "", -1},
                    {"code", "code", "", -1}});
  for (const auto& rej : result.rejections) {
    rejections.add_row({Cell::of_text(std::string(plan::rule_summary(rej.rule))),
                        Cell::of_integer(static_cast<std::int64_t>(rej.count)),
                        Cell::of_text(plan::describe(rej.example)),
                        Cell::of_text(std::string(plan::rule_code(rej.rule)))});
  }
  r.tables.push_back(std::move(rejections));
  return r;
}

}  // namespace stepcast::report
