// Step graphs stated by hand for the simulator's tests: uniform stages of given compute, and the
// groups and nodes a test places, so every expected time can be derived in the test's comments.
#pragma once

#include <string>
#include <utility>

#include "stepcast/graph/step_graph.hpp"

namespace stepcast::sim::test {

/// `pp` uniform stages, `m` micro-batches, each stage's forward and backward of one micro-batch
/// (all `vp` chunks), its weight-gradient half under ZB-H1, `layers` layers per model chunk; the
/// ranks laid out tensor rank, then stage, then replica.
inline graph::StepGraph hand_step(int pp, int m, plan::Schedule schedule, int vp, Seconds forward, Seconds backward,
                                  int replicas = 1, int tp = 1, int layers = 1) {
  graph::StepGraph g;
  // Stages inside each replica (order=tp-pp-cp-ep-dp), as the hand derivations place them.
  g.layout = graph::Layout{tp, pp, replicas, false};
  g.schedule = schedule;
  g.micro_batches = m;
  g.vp = vp;
  const cost::ChunkCompute chunk{forward / vp, backward / vp, backward * 0.5 / vp, layers, 0.0};
  for (int s = 0; s < pp; ++s) {
    g.stages.push_back(graph::StageWork{forward, backward, backward * 0.5,
                                        std::vector<cost::ChunkCompute>(static_cast<std::size_t>(vp), chunk)});
  }
  return g;
}

/// One stage's groups of `size` consecutive replicas, one per tensor rank and block (the data
/// parallel groups with size = replicas, context-parallel ones with size = cp).
inline std::size_t replica_group(graph::StepGraph& g, std::string role, int size,
                                 graph::Representation representation = graph::Representation::kEveryGroup) {
  const graph::Layout layout = g.layout;
  graph::GroupSpec spec;
  spec.role = std::move(role);
  spec.ranks = size;
  spec.stride = layout.replica_stride();
  spec.representation = representation;
  spec.members = [layout, size](int stage) {
    graph::GroupSets groups;
    for (int first = 0; first < layout.replicas; first += size) {
      for (int t = 0; t < layout.tp; ++t) {
        std::vector<int> group;
        for (int r = first; r < first + size; ++r) group.push_back(layout.gpu(r, stage, t));
        groups.push_back(std::move(group));
      }
    }
    return groups;
  };
  return g.add_group(std::move(spec));
}

/// Each replica's tensor-parallel ranks of a stage.
inline std::size_t tensor_group(graph::StepGraph& g) {
  const graph::Layout layout = g.layout;
  graph::GroupSpec spec;
  spec.role = "tensor";
  spec.ranks = layout.tp;
  spec.members = [layout](int stage) {
    graph::GroupSets groups;
    for (int r = 0; r < layout.replicas; ++r) {
      std::vector<int> group;
      for (int t = 0; t < layout.tp; ++t) group.push_back(layout.gpu(r, stage, t));
      groups.push_back(std::move(group));
    }
    return groups;
  };
  return g.add_group(std::move(spec));
}

/// Each GPU with its peer on the next stage (the sends' pairs).
inline std::size_t stage_pairs(graph::StepGraph& g) {
  const graph::Layout layout = g.layout;
  graph::GroupSpec spec;
  spec.role = "pipeline";
  spec.ranks = 2;
  spec.stride = layout.stage_stride();
  spec.members = [layout](int stage) {
    graph::GroupSets pairs;
    for (int r = 0; r < layout.replicas; ++r) {
      for (int t = 0; t < layout.tp; ++t) {
        pairs.push_back({layout.gpu(r, stage, t), layout.gpu(r, (stage + 1) % layout.pp, t)});
      }
    }
    return pairs;
  };
  return g.add_group(std::move(spec));
}

/// A node of `op` and size `size` on `group` at `anchor`; the caller sets the anchor's fields.
inline graph::CommNode hand_node(std::string name, std::size_t group, cost::CollectiveOp op, Bytes size,
                                 graph::Anchor anchor) {
  graph::CommNode n;
  n.name = std::move(name);
  n.group = group;
  n.op = op;
  n.size = size;
  n.anchor = anchor;
  return n;
}

}  // namespace stepcast::sim::test
