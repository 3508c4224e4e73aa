// What a search's ranking rests on: the step-time terms by which the best plan leads the fastest
// plan of another layout, and (`search --compare PLAN`) where a named plan stands and the terms
// it loses by. The terms are the analytical model's, so a lead that rests on one term, such as
// communication the model counts as hidden behind compute, is named where the user reads it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/graph/predict.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/report/table.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// The inputs a comparison re-predicts plans with: those of the search.
struct ComparisonInputs {
  const workload::Workload* workload = nullptr;
  const topology::Topology* topology = nullptr;
  const planner::SearchSpace* space = nullptr;
  const graph::StepOptions* step = nullptr;
};

/// The plan `text` (compact form) as the search would have spelled it: the search's global batch,
/// sequence length, precision and fused attention unless the text gives them, resolved on the
/// search's GPUs. A gbs= or seq= other than the search's throws InputError (one batch is compared).
plan::Plan compared_plan(std::string_view text, const ComparisonInputs& in);

/// One line on the best plan's lead over the fastest plan whose degrees (dp, tp, pp, cp, ep)
/// differ: by how much, the terms it wins by (largest first), and the communication it counts on
/// hiding behind compute. Empty when no other layout fits.
std::string lead_note(const planner::SearchResult& result, const ComparisonInputs& in);

/// `--compare`: what became of `named`, the `index`-th compared plan (from 1): its rank; the rule
/// it breaks; its memory shortfall; or a fitting plan outside the searched space. When it fits,
/// table "compare" (the first) or "compare-<index>": each step-time term of the best plan beside
/// the named plan's.
struct PlanComparison {
  std::vector<std::string> notes;
  std::optional<Table> terms;
};
PlanComparison compare_with_best(const planner::SearchResult& result, const plan::Plan& named,
                                 const ComparisonInputs& in, std::size_t index = 1);

}  // namespace stepcast::report
