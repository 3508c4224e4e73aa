// A plan's step graph: each stage's compute from the operator model, then the contributors.
#include <algorithm>
#include <array>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/graph/contributors.hpp"

namespace stepcast::graph {

std::span<const Contributor> default_contributors() {
  // Inside a layer, the context-parallel exchange comes before the MoE block's dispatch.
  static constexpr std::array<Contributor, 5> kAll = {add_tensor_parallel, add_context_parallel, add_pipeline_parallel,
                                                      add_expert_parallel, add_data_parallel};
  return kAll;
}

StepGraph build_step_graph(const GraphContext& context, const cost::ComputeEstimate& compute,
                           std::span<const Contributor> contributors) {
  const plan::Plan& p = context.plan;
  STEPCAST_ASSERT(context.workload.shape.has_value(), "a step graph needs a workload with a shape");
  STEPCAST_ASSERT(static_cast<int>(compute.stages.size()) == p.pp, "one compute estimate per stage");
  StepGraph g;
  g.layout = Layout{p.tp, p.pp, p.gradient_ranks(), p.rank_order == plan::RankOrder::kStagesOutermost};
  g.schedule = p.schedule;
  g.micro_batches = p.micro_batches();
  g.vp = p.schedule == plan::Schedule::kInterleaved ? p.vp : 1;
  for (const cost::StageCompute& st : compute.stages) {
    STEPCAST_ASSERT(static_cast<int>(st.chunks.size()) == g.vp, "one compute estimate per model chunk");
    g.stages.push_back(StageWork{st.forward, st.backward, st.weight_grad, st.chunks});
  }
  g.optimizer = compute.optimizer;
  g.compute = compute;
  for (const Contributor add : contributors) add(context, g);
  return g;
}

}  // namespace stepcast::graph
