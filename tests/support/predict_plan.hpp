// A plan string resolved and validated for a workload and topology, then priced without --explain:
// the start of every test that compares the simulator with the analytical step; its step graph;
// and one of its communication terms by name.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::test {

inline graph::StepPrediction predict_plan(const workload::Workload& w, const std::string& plan_text,
                                          const topology::Topology& topo, plan::Plan& p) {
  p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  return graph::predict_step(w, p, topo, options);
}

/// The same plan's step graph, as both engines evaluate it (p is the resolved plan predict_plan set).
inline graph::StepGraph plan_graph(const workload::Workload& w, const plan::Plan& p, const topology::Topology& topo) {
  graph::StepOptions options;
  options.explain = false;
  return graph::plan_step_graph(w, p, topo, options);
}

/// The step's communication term whose name starts with `prefix` (a test failure when none does).
inline const graph::CommTerm& comm_term(const graph::StepPrediction& p, const std::string& prefix) {
  for (const graph::CommTerm& t : p.communication) {
    if (t.name.starts_with(prefix)) return t;
  }
  FAIL("no communication term starting with " << prefix);
  return p.communication.front();
}

}  // namespace stepcast::test
