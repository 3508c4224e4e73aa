// A stage's data-parallel stream: its collectives run in issue order, each once every simulated
// replica has issued it (gathers a layer ahead, reductions behind, buckets as the gradients come,
// the updated parameters' gathers at the step's ends); the optimizer waits for what its rank issued.
#include <fmt/format.h>

#include "step_run.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

std::int64_t StepRun::issue(int k, std::uint32_t slot, std::int64_t trigger) {
  Rank& rk = rank(k);
  Stage& st = stage_of(rk);
  const std::size_t i = rk.issued++;
  if (i == st.requests.size()) st.requests.push_back(Request{slot});
  Request& req = st.requests[i];
  STEPCAST_ASSERT(req.slot == slot, "every replica issues the same collectives in the same order");
  ++req.issued;
  pump(rk.stage, trigger);
  return static_cast<std::int64_t>(i);
}

std::int64_t StepRun::issue_all(int k, const std::vector<std::uint32_t>& slots) {
  std::int64_t last = -1;
  for (const std::uint32_t slot : slots) last = issue(k, slot);
  return last;
}

void StepRun::pump(int s, std::int64_t trigger) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  if (st.comm_busy || st.next_request >= st.requests.size()) return;
  Request& req = st.requests[st.next_request];
  if (req.issued < replicas_) return;
  st.comm_busy = true;
  st.comm_start = engine_.now();
  for (int r = 0; r < replicas_; ++r) hold(rank_index(r, s), blocks_of(s, req.slot));
  req.node = add_node(PathNode::Kind::kRequest, rank(rank_index(0, s)), trigger);
  nodes_.back().comm = st.slots[req.slot].node;
  // Every rank of the stage resolves a stream slot to the same schedule (the stage's groups).
  runner_.start(schedules_[rank(rank_index(0, s)).schedule_of[req.slot]],
                tag(Kind::kStreamDone, s, static_cast<std::uint32_t>(st.next_request)));
  ++st.next_request;
}

void StepRun::stream_done(int s, std::uint32_t i, des::Tick now) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  // Copied out: resuming a task below issues requests, which may reallocate st.requests.
  const Request req = st.requests[i];
  st.requests[i].done = true;
  st.comm_busy = false;
  for (int r = 0; r < replicas_; ++r) hold(rank_index(r, s), -blocks_of(s, req.slot));
  nodes_[static_cast<std::size_t>(req.node)].end = now;
  if (trace_) {
    const std::uint32_t schedule = rank(rank_index(0, s)).schedule_of[req.slot];
    span(stream_track(s), st.comm_start, now, node_of(st, req.slot).name);
    span(tier_track(schedules_[schedule].top_tier), st.comm_start, now,
         fmt::format("stage {} {}", s, node_of(st, req.slot).name));
  }
  for (int r = 0; r < replicas_; ++r) {
    const int k = rank_index(r, s);
    Rank& rk = rank(k);
    if (rk.gather_waiting && rk.gather == static_cast<std::int64_t>(i)) {
      // The task goes on as a new node that the gather let start.
      rk.gather_waiting = false;
      charge(rk, req.slot, now - rk.wait_start);
      nodes_[static_cast<std::size_t>(rk.task_node)].end = rk.wait_start;
      const PipelineOp op = nodes_[static_cast<std::size_t>(rk.task_node)].op;
      rk.task_node = add_node(PathNode::Kind::kTask, rk, req.node);
      nodes_.back().op = op;
      layer_compute(k);
    }
    if (rk.last_updated_gather == static_cast<std::int64_t>(i)) finish(k, now, req.node);
    if (waits_on_gather(rk, static_cast<std::int64_t>(i))) try_start(k, req.node);
    maybe_start_optimizer(k, req.node);
  }
  pump(s, req.node);
}

// The optimizer runs once the rank's tasks are done and every collective it issued (and every
// bucket it will issue) has completed.
void StepRun::maybe_start_optimizer(int k, std::int64_t trigger) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  if (rk.optimizer_started || rk.send_wait >= 0 || rk.next < st.ops.size() || rk.buckets_issued < st.buckets.size())
    return;
  if (rk.issued > 0 && !st.requests[rk.issued - 1].done) return;
  const des::Tick now = engine_.now();
  rk.optimizer_start = now;
  rk.optimizer_started = true;
  rk.optimizer_node = add_node(PathNode::Kind::kOptimizer, rk, trigger);
  const des::Tick opt = des::to_ticks(graph_->optimizer * rk.factor);
  if (trace_) span(k, now, now + opt, "optimizer");
  timers_.at(now + opt, tag(Kind::kOptimizerDone, k, 0));
}

// The rank's step ends with the optimizer, or with the gathers it then issues (each rank updated
// only its shard of the parameters).
void StepRun::optimizer_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  nodes_[static_cast<std::size_t>(rk.optimizer_node)].end = now;
  const Stage& st = stage_of(rk);
  if (st.after_optimizer.empty()) {
    finish(k, now, rk.optimizer_node);
    return;
  }
  for (const std::uint32_t slot : st.after_optimizer) rk.last_updated_gather = issue(k, slot, rk.optimizer_node);
}

void StepRun::finish(int k, des::Tick now, std::int64_t node) {
  rank(k).finish = now;
  rank(k).end_node = node;
}

void StepRun::span(int track, des::Tick start, des::Tick end, std::string name) {
  spans_.push_back(TraceSpan{track, des::to_seconds(start).value(), des::to_seconds(end).value(), std::move(name)});
}

}  // namespace stepcast::sim::detail
