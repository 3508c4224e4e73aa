// Megatron-Core's folding of a stage's GPUs into expert groups (private to graph/): the stage's
// GPUs in dense order, j = replica x tp + tensor rank, fold as etp x ep x edp with etp innermost
// (Megatron-Core's RankGenerator): j's expert-TP rank is j mod etp, its expert-parallel rank
// (j / etp) mod ep, its expert data-parallel rank j / (etp x ep).
#pragma once

#include "stepcast/graph/step_graph.hpp"

namespace stepcast::graph::detail {

struct ExpertFold {
  int etp = 1;
  int ep = 1;
  /// The stage's GPUs in dense order j (replicas x tp of them).
  [[nodiscard]] int gpu(const Layout& layout, int stage, int j) const {
    return layout.gpu(j / layout.tp, stage, j % layout.tp);
  }
  /// Expert-parallel groups (vary the middle index) or expert-TP groups (the inner one).
  [[nodiscard]] GroupSets groups(const Layout& layout, int stage, bool expert_tp) const;
  /// The same expert-TP and expert-parallel position in every block of etp x ep GPUs.
  [[nodiscard]] GroupSets data_groups(const Layout& layout, int stage) const;
};

}  // namespace stepcast::graph::detail
