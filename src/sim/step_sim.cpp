// Running a step graph on the event engine and summing up its critical rank.
#include "stepcast/sim/step_sim.hpp"

#include "step_run.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::sim {

namespace detail {

StepResult StepRun::result() {
  StepResult r;
  int critical = 0;
  for (int k = 0; k < rank_count(); ++k) {
    if (rank(k).finish > rank(critical).finish) critical = k;
    r.rank_compute.push_back(des::to_seconds(rank(k).compute));
  }
  const Rank& rk = rank(critical);
  r.step_time = des::to_seconds(rk.finish);
  r.critical_stage = rk.stage;
  r.breakdown.compute = des::to_seconds(rk.compute);
  des::Tick waited = 0;
  for (std::size_t n = 0; n < rk.waits.size(); ++n) {
    r.breakdown.node_waits.push_back(des::to_seconds(rk.waits[n]));
    if (rk.waits[n] == 0) continue;
    waited += rk.waits[n];
    r.breakdown.waits[graph_->groups[graph_->comm[n].group].role] += des::to_seconds(rk.waits[n]);
  }
  r.breakdown.bubble = des::to_seconds(rk.last_compute_end - rk.compute - waited);
  r.breakdown.dp_exposed = des::to_seconds(rk.optimizer_start - rk.last_compute_end);
  r.breakdown.optimizer = des::to_seconds(rk.finish - rk.optimizer_start);
  r.critical_path = critical_path(nodes_, rk.end_node, replicas_ > 1, *graph_);
  const TierTraffic& t = network_.traffic();
  for (std::size_t i = 0; i < t.bytes.size(); ++i) {
    const double cap = t.capacity[i] * r.step_time.value();
    r.tier_utilization.push_back(cap > 0.0 ? t.bytes[i] / cap : 0.0);
  }
  r.tracks = tracks_;
  r.spans = std::move(spans_);
  r.events = timers_.fired() + engine_.activations();
  r.simulated_ranks = rank_count();
  return r;
}

}  // namespace detail

StepResult simulate_step(const topology::Topology& topo, const graph::StepGraph& graph, const SimOptions& options) {
  const graph::Layout& layout = graph.layout;
  STEPCAST_ASSERT(layout.tp >= 1 && layout.pp >= 1 && layout.replicas >= 1 && graph.vp >= 1 &&
                      graph.micro_batches >= 1 && static_cast<int>(graph.stages.size()) == layout.pp,
                  "a step needs positive degrees, micro-batches and one compute per stage");
  STEPCAST_ASSERT(graph.forward_slices >= 1 && graph.backward_slices >= 1, "a layer has at least one slice");
  STEPCAST_ASSERT(layout.gpus() <= topo.gpu_count(), "the plan must fit the topology");
  const Perturbation& perturbation = options.perturbation;
  detail::StepRun run(topo, graph, options, perturbation, options.record_trace);
  StepResult r = run.run();
  const bool perturbed = perturbation.slowdown != 1.0 || perturbation.noise_cv > 0.0 || perturbation.step_cv > 0.0;
  if (perturbed) {
    detail::StepRun calm(topo, graph, options, Perturbation{}, false);
    r.breakdown.straggler_wait = r.step_time - calm.run().step_time;
  }
  return r;
}

}  // namespace stepcast::sim
