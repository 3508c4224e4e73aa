// The training step as a task graph. Each rank's compute stream runs its stage's schedule in
// order, each task waiting for the activation (forward) or gradient (backward) it consumes. A task
// runs layer by layer, slice by slice: tensor-parallel collectives between slices, FSDP gathers
// before layers and reduce-scatters after them. Sends, gradient buckets and every collective are
// flows on the network, so they contend where they share links.
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
  r.breakdown.tp_comm = des::to_seconds(rk.tensor);
  r.breakdown.gather_wait = des::to_seconds(rk.gather_wait);
  r.breakdown.cp_comm = des::to_seconds(rk.context);
  r.breakdown.moe_comm = des::to_seconds(rk.expert);
  r.breakdown.bubble =
      des::to_seconds(rk.last_compute_end - rk.compute - rk.tensor - rk.gather_wait - rk.context - rk.expert);
  r.breakdown.dp_exposed = des::to_seconds(rk.optimizer_start - rk.last_compute_end);
  r.breakdown.optimizer = des::to_seconds(rk.finish - rk.optimizer_start);
  r.critical_path = critical_path(nodes_, rk.end_node, replicas_ > 1);
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

StepResult simulate_step(const topology::Topology& topo, const StepSpec& spec, const Perturbation& perturbation,
                         bool record_trace) {
  STEPCAST_ASSERT(
      spec.pp >= 1 && spec.tp >= 1 && spec.dp >= 1 && spec.vp >= 1 && spec.micro_batches >= 1 && spec.layers >= 1,
      "a step needs positive degrees, micro-batches and layers");
  STEPCAST_ASSERT(!spec.tensor_parallel ||
                      (spec.tensor_parallel->forward_slices >= 1 && spec.tensor_parallel->backward_slices >= 1),
                  "a layer has at least one slice");
  STEPCAST_ASSERT(spec.pp * spec.tp * spec.dp <= topo.gpu_count(), "the plan must fit the topology");
  detail::StepRun run(topo, spec, perturbation, record_trace);
  StepResult r = run.run();
  const bool perturbed = perturbation.slowdown != 1.0 || perturbation.noise_cv > 0.0 || perturbation.step_cv > 0.0;
  if (perturbed) {
    detail::StepRun calm(topo, spec, Perturbation{}, false);
    r.breakdown.straggler_wait = r.step_time - calm.run().step_time;
  }
  return r;
}

}  // namespace stepcast::sim
