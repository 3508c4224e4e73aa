// The expert groups of a stage as Megatron-Core folds its GPUs.
#include "expert_groups.hpp"

namespace stepcast::graph::detail {

GroupSets ExpertFold::groups(const Layout& layout, int stage, bool expert_tp) const {
  const int gpus = layout.tp * layout.replicas;
  const int fold = etp * ep;
  GroupSets out;
  for (int base = 0; base < gpus; base += fold) {
    const int outer = expert_tp ? ep : etp;
    for (int o = 0; o < outer; ++o) {
      std::vector<int> g;
      if (expert_tp) {
        for (int t = 0; t < etp; ++t) g.push_back(gpu(layout, stage, base + o * etp + t));
      } else {
        for (int q = 0; q < ep; ++q) g.push_back(gpu(layout, stage, base + q * etp + o));
      }
      out.push_back(std::move(g));
    }
  }
  return out;
}

GroupSets ExpertFold::data_groups(const Layout& layout, int stage) const {
  const int fold = etp * ep;
  const int edp = layout.tp * layout.replicas / fold;
  GroupSets out;
  for (int i = 0; i < fold; ++i) {
    std::vector<int> g;
    for (int d = 0; d < edp; ++d) g.push_back(gpu(layout, stage, d * fold + i));
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace stepcast::graph::detail
