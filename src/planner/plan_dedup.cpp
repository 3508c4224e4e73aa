// Merging the spellings of one plan in a search's ranking (plan_dedup.hpp says which and why).
#include "stepcast/planner/plan_dedup.hpp"

#include <map>
#include <utility>
#include <vector>

namespace stepcast::planner {

std::string equivalence_key(const plan::Plan& plan) {
  plan::Plan p = plan;
  if (p.sharding == plan::Sharding::kFsdpFull) p.sharding = plan::Sharding::kZero3;
  if (p.tp == 1) p.sequence_parallel = false;
  if (p.pp == 1) {
    p.schedule = plan::Schedule::k1F1B;
    p.vp = 1;
  }
  if (p.cp == 1) p.cp_comm = plan::ContextComm::kP2p;
  p.rank_order = plan::RankOrder::kStagesOutermost;
  return plan::to_string(p);
}

namespace {

bool priced_alike(const PlanMetrics& a, const PlanMetrics& b) {
  return a.step_time == b.step_time && a.memory.total == b.memory.total && a.tokens_per_s == b.tokens_per_s &&
         a.mfu == b.mfu;
}

}  // namespace

void merge_equivalent_plans(SearchResult& result) {
  std::vector<RankedPlan> kept;
  std::map<std::string, std::vector<std::size_t>> by_key;  // key -> indices into `kept`
  for (RankedPlan& candidate : result.ranked) {
    std::vector<std::size_t>& same_key = by_key[equivalence_key(candidate.plan)];
    bool merged = false;
    for (const std::size_t k : same_key) {
      if (!priced_alike(kept[k].metrics, candidate.metrics)) continue;
      kept[k].equivalents.push_back(candidate.plan);
      ++result.merged;
      merged = true;
      break;
    }
    if (merged) continue;
    same_key.push_back(kept.size());
    kept.push_back(std::move(candidate));
  }
  result.ranked = std::move(kept);
}

}  // namespace stepcast::planner
