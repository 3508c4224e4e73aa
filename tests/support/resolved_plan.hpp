// A plan string resolved for a workload on a GPU count and checked against the plan rules: the
// start of every test that prices a plan's parts (its memory, its tokens) without a topology.
#pragma once

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::test {

inline plan::Plan resolved(const workload::Workload& w, const std::string& text, int gpus) {
  plan::Plan p = plan::resolve(plan::parse_plan(text), w, gpus);
  plan::validate(p, w, gpus);
  return p;
}

}  // namespace stepcast::test
