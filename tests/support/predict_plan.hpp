// A plan string resolved and validated for a workload and topology, then priced without --explain:
// the start of every test that compares the simulator with the analytical step.
#pragma once

#include <string>

#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::test {

inline cost::StepPrediction predict_plan(const workload::Workload& w, const std::string& plan_text,
                                         const topology::Topology& topo, plan::Plan& p) {
  p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  cost::StepOptions options;
  options.explain = false;
  return cost::predict_step(w, p, topo, options);
}

}  // namespace stepcast::test
