// Reports of the planner: ranked plans with rejection counts (`stepcast search`) and capacity
// tables with their charts (`stepcast table`), as Report values every writer can render.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/planner/capacity.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/report/step_interval.hpp"
#include "stepcast/report/table.hpp"

namespace stepcast::report {

/// What a search report says about its inputs, above the tables.
struct SearchContext {
  std::string command;  ///< the command line that reproduces the report
  std::string workload;
  std::string topology;
  std::string gpu;
  int gpus = 0;
  int global_batch = 0;
  int seq_len = 0;
  int doc_len = 0;          ///< --doc-len (0: the sequence is one document)
  std::string fine_tuning;  ///< the note of --peft lora (empty: every weight trains)
  /// Every column (markdown, HTML, CSV, JSON and `--wide` text); otherwise the columns that fit
  /// 120 characters: rank, plan, step time, MFU, memory, 90% interval, tie.
  bool wide = true;
  /// The model's error scatter on runs like the best plan: plans within it of the best are ties.
  std::optional<ErrorScatter> scatter;
  /// The shown plans' 90% step-time intervals, in rank order (none: too few runs like the plan).
  std::vector<std::optional<calibrate::StepInterval>> intervals;
  std::string margin;     ///< the memory margin kept, in words
  std::string placement;  ///< how the GPUs sit in scale-up domains the search chose; empty: as asked
  std::string set_echo;   ///< what --set changed (set_echo.hpp), one line per edit
  std::string lead;       ///< what the best plan's lead rests on (search_compare.hpp); empty: none
  /// --compare: where each named plan stands, and the step-time terms of those that fit beside
  /// the best plan's.
  std::vector<std::string> comparison_notes;
  std::vector<Table> comparisons;
};

/// Tables "plans" (the `top` fastest fitting plans, ranked), "compare" (then "compare-2", ...) for
/// each fitting --compare plan, and
/// "rejections" (count per reason).
Report search_report(const planner::SearchResult& result, const SearchContext& context, std::size_t top);

/// Training-cost settings of a capacity table; tokens = 0 leaves the cost columns out. The price
/// of a GPU-hour is each cell's (CapacityCell::price); the cost column shows when any cell has one.
struct CostSettings {
  double tokens = 0.0;
};

/// Table "capacity" (one row per cell) and four charts: tokens/s and MFU against GPU count (one
/// line per workload and cluster), memory per GPU by term and step time by part (one bar per cell).
/// `intervals` holds each cell's 90% step-time interval around the step it shows (the simulated
/// one where refined), in cell order; none where too few measured runs are like its plan.
Report capacity_report(const std::vector<planner::CapacityCell>& cells,
                       const std::vector<std::optional<calibrate::StepInterval>>& intervals, const std::string& command,
                       int global_batch, int seq_len, const CostSettings& cost);

/// The searched fields of a plan in short form: "dp=8 tp=2 pp=4 vp=2 zero-1 mbs=1 rc=selective
/// sp 1f1b"; the fields every candidate shares (batch, precision, ...) are left out.
std::string plan_summary(const plan::Plan& plan);

}  // namespace stepcast::report
