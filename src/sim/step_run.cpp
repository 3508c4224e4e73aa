// Running a step's graph: tasks layer by layer and slice by slice on each rank's compute stream,
// sends between stages, and each stage's comm stream running collectives in issue order once
// every simulated replica has issued them.
#include "step_run.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

StepResult StepRun::run() {
  for (int k = 0; k < rank_count(); ++k) {
    Rank& rk = rank(k);
    for (const std::uint32_t schedule : stage_of(rk).forward_gathers) {
      const std::int64_t i = issue(k, RequestKind::kUpdatedGather, schedule, -1);
      if (rk.first_bucket_gather < 0) rk.first_bucket_gather = i;
      rk.last_bucket_gather = i;
    }
  }
  for (int k = 0; k < rank_count(); ++k) try_start(k, -1);
  engine_.run();
  return result();
}

void StepRun::on_timer(des::Tick now, std::uint64_t payload) {
  const int k = owner_of(payload);
  switch (kind_of(payload)) {
    case Kind::kSliceDone:
      slice_done(k);
      break;
    case Kind::kBucketReady: {
      Rank& rk = rank(k);
      ++rk.buckets_issued;
      issue(k, RequestKind::kBucket, stage_of(rk).buckets[index_of(payload)].schedule);
      break;
    }
    case Kind::kOptimizerDone:
      optimizer_done(k, now);
      break;
    case Kind::kOverlapTail:
      slice_end(k);
      break;
    default:
      STEPCAST_UNREACHABLE("unknown timer kind");
  }
}

void StepRun::on_transfer_done(des::Tick now, std::uint64_t t) {
  if (kind_of(t) != Kind::kSend) {
    runner_.on_transfer_done(now, t);
    return;
  }
  // index = destination virtual stage * 2m + (backward ? m : 0) + micro-batch
  const std::uint32_t i = index_of(t);
  const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
  const auto vs = static_cast<int>(i / (2 * m));
  const bool forward = ((i / m) % 2) == 0;
  const auto mb = static_cast<int>(i % m);
  const int replica = rank(owner_of(t)).replica;
  const std::size_t cell = ready_index(replica, vs, mb);
  (forward ? fwd_ready_ : bwd_ready_)[cell] = 1;
  const std::int64_t send = (forward ? fwd_send_ : bwd_send_)[cell];
  PathNode& node = nodes_[static_cast<std::size_t>(send)];
  node.end = now;
  if (trace_) {
    span(send_track(rank_index(node.replica, node.stage)), node.start, now,
         fmt::format("send {} to stage {}", task_name(node.op), node.to_stage));
  }
  try_start(rank_index(replica, vs % spec_->pp), send);
  Rank& sender = rank(owner_of(t));
  if (sender.send_wait == send) {
    sender.send_wait = -1;
    go_on(owner_of(t), send);
  }
}

void StepRun::on_collective_done(des::Tick now, std::uint64_t t) {
  if (kind_of(t) == Kind::kTensorDone) {
    tensor_done(owner_of(t), now);
  } else if (kind_of(t) == Kind::kContextDone) {
    context_done(owner_of(t), now);
  } else if (kind_of(t) == Kind::kExpertDone) {
    expert_done(owner_of(t), now);
  } else {
    stream_done(owner_of(t), index_of(t), now);
  }
}

bool StepRun::parameters_here(const Rank& rk) const {
  const std::int64_t needed = rk.next == 0 ? rk.first_bucket_gather : rk.last_bucket_gather;
  return needed < 0 || stages_[static_cast<std::size_t>(rk.stage)].requests[static_cast<std::size_t>(needed)].done;
}

bool StepRun::ready(const Rank& rk, const PipelineOp& op) const {
  if (!parameters_here(rk)) return false;
  const int vs = op.chunk * spec_->pp + rk.stage;
  switch (op.kind) {
    case PipelineOp::Kind::kForward:
      return fwd_ready_[ready_index(rk.replica, vs, op.micro_batch)] != 0;
    case PipelineOp::Kind::kBackward:
      // The last virtual stage starts the backward from its own forward (ordered before it).
      return vs + 1 == virtual_stages() || bwd_ready_[ready_index(rk.replica, vs, op.micro_batch)] != 0;
    case PipelineOp::Kind::kWeightGrad:
      return true;
  }
  return false;
}

double StepRun::task_noise() {
  return noise_cv_ > 0.0 ? std::max(kMinFactor, 1.0 + noise_cv_ * standard_normal(rng_)) : 1.0;
}

int StepRun::layers_of(const PipelineOp& op) const {
  const bool split = spec_->tensor_parallel || spec_->sharded || spec_->context_parallel || spec_->expert_parallel;
  return split && op.kind != PipelineOp::Kind::kWeightGrad ? spec_->layers : 1;
}

int StepRun::slices_of(const PipelineOp& op) const {
  if (!spec_->tensor_parallel) return 1;
  switch (op.kind) {
    case PipelineOp::Kind::kForward:
      return spec_->tensor_parallel->forward_slices;
    case PipelineOp::Kind::kBackward:
      return spec_->tensor_parallel->backward_slices;
    case PipelineOp::Kind::kWeightGrad:
      return 1;
  }
  return 1;
}

Seconds StepRun::work_of(const PipelineOp& op, int stage) const {
  const double v = spec_->vp;
  const bool zb = spec_->schedule == plan::Schedule::kZbH1;
  const auto i = static_cast<std::size_t>(stage);
  const Seconds forward = spec_->stage_forward.empty() ? spec_->forward : spec_->stage_forward[i];
  const Seconds backward = spec_->stage_backward.empty() ? spec_->backward : spec_->stage_backward[i];
  switch (op.kind) {
    case PipelineOp::Kind::kForward:
      return forward / v;
    case PipelineOp::Kind::kBackward:
      return backward * (zb ? 1.0 - spec_->weight_grad_share : 1.0) / v;
    case PipelineOp::Kind::kWeightGrad:
      return backward * spec_->weight_grad_share / v;
  }
  return Seconds(0.0);
}

bool StepRun::gathers_before(const PipelineOp& op) const {
  return spec_->sharded && (op.kind == PipelineOp::Kind::kForward ||
                            (op.kind == PipelineOp::Kind::kBackward && spec_->sharded->regather));
}

std::size_t StepRun::variant(const PipelineOp& op, int pos) const {
  const int first = op.kind == PipelineOp::Kind::kForward ? 0 : layers_of(op) - 1;
  return op.chunk == 0 && pos == first ? 1 : 0;
}

int StepRun::expert_blocks_at(int stage, const PipelineOp& op, int pos) const {
  const ShardSchedules& sh = stages_[static_cast<std::size_t>(stage)].shard;
  if (sh.expert_gather < 0) return 0;
  const int layer = op.kind == PipelineOp::Kind::kForward ? pos : layers_of(op) - 1 - pos;
  return stages_[static_cast<std::size_t>(stage)].expert_blocks[static_cast<std::size_t>(layer)];
}

std::int64_t StepRun::issue_layer_gathers(int k, const PipelineOp& op, int pos) {
  const ShardSchedules& sh = stage_of(rank(k)).shard;
  std::int64_t last = issue(k, RequestKind::kGather, sh.gather[variant(op, pos)]);
  for (int b = 0; b < expert_blocks_at(rank(k).stage, op, pos); ++b)
    last = issue(k, RequestKind::kGather, static_cast<std::uint32_t>(sh.expert_gather));
  return last;
}

void StepRun::try_start(int k, std::int64_t trigger) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  if (rk.busy || rk.send_wait >= 0 || rk.next >= st.ops.size()) return;
  const PipelineOp& op = st.ops[rk.next];
  if (!ready(rk, op)) return;
  rk.busy = true;
  rk.layer = 0;
  rk.slice = 0;
  rk.context_started = false;
  rk.expert_started = false;
  rk.task_factor = rk.factor * task_noise();
  rk.task_start = engine_.now();
  rk.task_node = add_node(PathNode::Kind::kTask, rk, trigger);
  nodes_.back().op = op;
  layer_begin(k);
}

std::int64_t StepRun::add_node(PathNode::Kind kind, const Rank& rk, std::int64_t pred) {
  PathNode n;
  n.kind = kind;
  n.start = engine_.now();
  n.end = n.start;
  n.pred = pred;
  n.stage = rk.stage;
  n.replica = rk.replica;
  nodes_.push_back(n);
  return static_cast<std::int64_t>(nodes_.size() - 1);
}

void StepRun::layer_begin(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  if (gathers_before(op)) {
    if (rk.gather < 0) rk.gather = issue_layer_gathers(k, op, rk.layer);
    if (!stage_of(rk).requests[static_cast<std::size_t>(rk.gather)].done) {
      rk.waiting = true;
      rk.wait_start = engine_.now();
      return;
    }
  }
  layer_compute(k);
}

void StepRun::layer_compute(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  if (gathers_before(op) && rk.layer + 1 < layers_of(op)) {
    rk.prefetch = issue_layer_gathers(k, op, rk.layer + 1);
  }
  start_slice(k);
}

void StepRun::start_slice(int k) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  const PipelineOp& op = st.ops[rk.next];
  if (context_due(rk, op)) {
    start_context(k);
    if (!spec_->context_parallel->beside_compute) {
      rk.context_blocking = true;  // the attention needs what the exchange brings
      return;
    }
  }
  if (expert_due(rk, op)) {
    start_expert(k);
    if (!spec_->expert_parallel->beside_compute) {
      rk.expert_blocking = true;  // the experts need the tokens the dispatch brings
      return;
    }
  }
  const int per_layer = slices_of(op);
  const double slices = layers_of(op) * per_layer;
  const des::Tick now = engine_.now();
  const des::Tick compute = des::to_ticks(work_of(op, rk.stage) / slices * rk.task_factor);
  rk.compute += compute;
  timers_.at(now + compute, tag(Kind::kSliceDone, k, 0));
  rk.overlapping = spec_->tensor_parallel && spec_->tensor_parallel->overlap && !rk.tensor_schedules.empty() &&
                   op.kind != PipelineOp::Kind::kWeightGrad;
  if (rk.overlapping) {
    rk.slice_compute_done = false;
    rk.slice_comm_done = false;
    rk.tensor_op = 0;
    rk.tensor_start = now;
    rk.tensor_op_start = now;
    runner_.start(schedules_[rk.tensor_schedules.front()], tag(Kind::kTensorDone, k, 0));
  }
  // Buckets whose bytes this slice of their task completes become ready in proportion through it.
  const double done = rk.layer * per_layer + rk.slice;
  const double f0 = done / slices;
  const double f1 = (done + 1.0) / slices;
  for (std::size_t& j = rk.buckets_timed;
       j < st.buckets.size() && st.buckets[j].grad_op == rk.next && st.buckets[j].ready_fraction <= f1; ++j) {
    const double f = st.buckets[j].ready_fraction;
    const auto at = now + static_cast<des::Tick>(std::llround(static_cast<double>(compute) * (f - f0) / (f1 - f0)));
    timers_.at(at, tag(Kind::kBucketReady, k, static_cast<std::uint32_t>(j)));
  }
}

void StepRun::slice_done(int k) {
  Rank& rk = rank(k);
  if (rk.context_running) {
    // The ring is still passing chunks: the layer goes on when the last has arrived.
    rk.context_waiting = true;
    rk.context_wait_start = engine_.now();
    return;
  }
  if (rk.overlapping) {
    rk.slice_compute_done = true;
    rk.slice_compute_end = engine_.now();
    if (rk.slice_comm_done) overlap_tail(k, engine_.now());
    return;
  }
  if (!rk.tensor_schedules.empty() && op_of(rk).kind != PipelineOp::Kind::kWeightGrad) {
    rk.tensor_op = 0;
    rk.tensor_start = engine_.now();
    rk.tensor_op_start = rk.tensor_start;
    runner_.start(schedules_[rk.tensor_schedules.front()], tag(Kind::kTensorDone, k, 0));
    return;
  }
  slice_end(k);
}

void StepRun::tensor_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  if (trace_) {
    const cost::CollectiveOp op = spec_->tensor_parallel->ops[rk.tensor_op];
    span(tensor_track(k), rk.tensor_op_start, now, fmt::format("TP {}", cost::to_string(op)));
    rk.tensor_op_start = now;
  }
  if (++rk.tensor_op < rk.tensor_schedules.size()) {
    runner_.start(schedules_[rk.tensor_schedules[rk.tensor_op]], tag(Kind::kTensorDone, k, 0));
    return;
  }
  if (rk.overlapping) {
    rk.slice_comm_done = true;
    rk.tensor_op_start = now;  // the collectives' end, for the tail
    if (rk.slice_compute_done) overlap_tail(k, now);
    return;
  }
  rk.tensor += now - rk.tensor_start;
  slice_end(k);
}

void StepRun::overlap_tail(int k, des::Tick now) {
  Rank& rk = rank(k);
  const des::Tick comm = rk.tensor_op_start - rk.tensor_start;
  const des::Tick tail = comm / static_cast<des::Tick>(spec_->tensor_parallel->tp);
  // Exposed: what the collectives outlasted the compute by, and the tail.
  rk.tensor += (rk.tensor_op_start > rk.slice_compute_end ? rk.tensor_op_start - rk.slice_compute_end : 0) + tail;
  rk.overlapping = false;
  timers_.at(now + tail, tag(Kind::kOverlapTail, k, 0));
}

void StepRun::slice_end(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  if (rk.expert_running && rk.slice + 1 == slices_of(op)) {
    // moe-overlap: the layer's compute is done, its dispatch and combine are not.
    rk.expert_waiting = true;
    rk.expert_wait_start = engine_.now();
    return;
  }
  if (++rk.slice < slices_of(op)) {
    start_slice(k);
    return;
  }
  if (spec_->sharded && op.kind == PipelineOp::Kind::kBackward) {
    // The layer's gradients are complete: reduce-scatter them (and all-reduce over replicas).
    const ShardSchedules& sh = stage_of(rk).shard;
    const std::size_t v = variant(op, rk.layer);
    issue(k, RequestKind::kReduceScatter, sh.reduce_scatter[v]);
    for (int b = 0; b < expert_blocks_at(rk.stage, op, rk.layer); ++b)
      issue(k, RequestKind::kReduceScatter, static_cast<std::uint32_t>(sh.expert_reduce_scatter));
    if (spec_->sharded->replica_all_reduce.value() > 0.0)
      issue(k, RequestKind::kReplicaAllReduce, sh.replica_all_reduce[v]);
  }
  rk.slice = 0;
  rk.context_started = false;
  rk.expert_started = false;
  rk.gather = rk.prefetch;
  rk.prefetch = -1;
  if (++rk.layer < layers_of(op)) {
    layer_begin(k);
  } else {
    task_done(k, engine_.now());
  }
}

bool StepRun::context_due(const Rank& rk, const PipelineOp& op) const {
  if (!spec_->context_parallel || rk.slice != 0 || rk.context_started) return false;
  if (op.kind == PipelineOp::Kind::kWeightGrad) return false;
  return !(op.kind == PipelineOp::Kind::kForward ? rk.context_forward : rk.context_backward).empty();
}

void StepRun::start_context(int k) {
  Rank& rk = rank(k);
  rk.context_started = true;
  rk.context_running = true;
  rk.context_op = 0;
  rk.context_start = engine_.now();
  const auto& chain = op_of(rk).kind == PipelineOp::Kind::kForward ? rk.context_forward : rk.context_backward;
  runner_.start(schedules_[chain.front()], tag(Kind::kContextDone, k, 0));
}

void StepRun::context_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  const auto& chain = op_of(rk).kind == PipelineOp::Kind::kForward ? rk.context_forward : rk.context_backward;
  if (++rk.context_op < chain.size()) {
    runner_.start(schedules_[chain[rk.context_op]], tag(Kind::kContextDone, k, 0));
    return;
  }
  rk.context_running = false;
  if (trace_) span(tensor_track(k), rk.context_start, now, "CP exchange");
  if (rk.context_blocking) {
    rk.context_blocking = false;
    rk.context += now - rk.context_start;
    start_slice(k);
  } else if (rk.context_waiting) {
    rk.context_waiting = false;
    rk.context += now - rk.context_wait_start;
    slice_done(k);
  }
}

void StepRun::task_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  const PipelineOp op = st.ops[rk.next];
  rk.busy = false;
  rk.last_compute_end = now;
  nodes_[static_cast<std::size_t>(rk.task_node)].end = now;
  if (trace_) span(k, rk.task_start, now, task_name(op));
  const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
  const int vs = op.chunk * spec_->pp + rk.stage;
  const auto ku = static_cast<std::size_t>(k);
  std::int64_t sent = -1;
  if (op.kind == PipelineOp::Kind::kForward && vs + 1 < virtual_stages()) {
    const auto dst = static_cast<std::uint32_t>(vs + 1);
    sent = fwd_send_[ready_index(rk.replica, vs + 1, op.micro_batch)] = add_send(rk, op, vs + 1);
    network_.start(to_next_[ku], spec_->p2p_bytes,
                   tag(Kind::kSend, k, dst * 2 * m + static_cast<std::uint32_t>(op.micro_batch)));
  }
  if (op.kind == PipelineOp::Kind::kBackward && vs > 0) {
    const auto dst = static_cast<std::uint32_t>(vs - 1);
    sent = bwd_send_[ready_index(rk.replica, vs - 1, op.micro_batch)] = add_send(rk, op, vs - 1);
    network_.start(to_prev_[ku], spec_->p2p_bytes,
                   tag(Kind::kSend, k, dst * 2 * m + m + static_cast<std::uint32_t>(op.micro_batch)));
  }
  ++rk.next;
  if (sent >= 0 && spec_->schedule != plan::Schedule::kInterleaved) {
    // Megatron-LM's non-interleaved schedules wait for each send before going on (their p2p
    // calls block); the interleaved one overlaps it with the next chunk (schedules.py).
    rk.send_wait = sent;
    return;
  }
  go_on(k, rk.task_node);
}

void StepRun::go_on(int k, std::int64_t trigger) {
  Rank& rk = rank(k);
  if (rk.next < stage_of(rk).ops.size()) {
    try_start(k, trigger);
  } else {
    maybe_start_optimizer(k, trigger);
  }
}

std::int64_t StepRun::add_send(const Rank& rk, const PipelineOp& op, int to_virtual_stage) {
  const std::int64_t id = add_node(PathNode::Kind::kSend, rk, rk.task_node);
  nodes_.back().op = op;
  nodes_.back().to_stage = to_virtual_stage % spec_->pp;
  return id;
}

std::int64_t StepRun::issue(int k, RequestKind kind, std::uint32_t schedule, std::int64_t trigger) {
  Rank& rk = rank(k);
  Stage& st = stage_of(rk);
  const std::size_t i = rk.issued++;
  if (i == st.requests.size()) st.requests.push_back(Request{schedule, kind});
  Request& req = st.requests[i];
  STEPCAST_ASSERT(req.schedule == schedule, "every replica issues the same collectives in the same order");
  ++req.issued;
  pump(rk.stage, trigger);
  return static_cast<std::int64_t>(i);
}

void StepRun::pump(int s, std::int64_t trigger) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  if (st.comm_busy || st.next_request >= st.requests.size()) return;
  Request& req = st.requests[st.next_request];
  if (req.issued < replicas_) return;
  st.comm_busy = true;
  st.comm_start = engine_.now();
  req.node = add_node(PathNode::Kind::kRequest, rank(rank_index(0, s)), trigger);
  nodes_.back().request = req.kind;
  runner_.start(schedules_[req.schedule], tag(Kind::kStreamDone, s, static_cast<std::uint32_t>(st.next_request)));
  ++st.next_request;
}

void StepRun::stream_done(int s, std::uint32_t i, des::Tick now) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  // Copied out: resuming a task below issues requests, which may reallocate st.requests.
  const Request req = st.requests[i];
  st.requests[i].done = true;
  st.comm_busy = false;
  nodes_[static_cast<std::size_t>(req.node)].end = now;
  if (trace_) {
    span(stream_track(s), st.comm_start, now, std::string(to_string(req.kind)));
    span(tier_track(schedules_[req.schedule].top_tier), st.comm_start, now,
         fmt::format("stage {} {}", s, to_string(req.kind)));
  }
  for (int r = 0; r < replicas_; ++r) {
    const int k = rank_index(r, s);
    Rank& rk = rank(k);
    if (rk.waiting && rk.gather == static_cast<std::int64_t>(i)) {
      // The task goes on as a new node that the gather let start.
      rk.waiting = false;
      rk.gather_wait += now - rk.wait_start;
      nodes_[static_cast<std::size_t>(rk.task_node)].end = rk.wait_start;
      const PipelineOp op = nodes_[static_cast<std::size_t>(rk.task_node)].op;
      rk.task_node = add_node(PathNode::Kind::kTask, rk, req.node);
      nodes_.back().op = op;
      layer_compute(k);
    }
    if (rk.updated_gather == static_cast<std::int64_t>(i)) finish(k, now, req.node);
    if (rk.first_bucket_gather == static_cast<std::int64_t>(i) ||
        rk.last_bucket_gather == static_cast<std::int64_t>(i)) {
      try_start(k, req.node);
    }
    maybe_start_optimizer(k, req.node);
  }
  pump(s, req.node);
}

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
  const des::Tick opt = des::to_ticks(spec_->optimizer * rk.factor);
  if (trace_) span(k, now, now + opt, "optimizer");
  timers_.at(now + opt, tag(Kind::kOptimizerDone, k, 0));
}

void StepRun::optimizer_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  nodes_[static_cast<std::size_t>(rk.optimizer_node)].end = now;
  const Stage& st = stage_of(rk);
  if (st.updated_gather < 0 && st.expert_updated_gather < 0) {
    finish(k, now, rk.optimizer_node);
    return;
  }
  // ZeRO-1/2: each rank updated only its shard; the step ends once all are gathered (the dense
  // parameters over dp, then an MoE plan's experts over edp, on the same stream in that order).
  for (const std::int64_t schedule : {st.updated_gather, st.expert_updated_gather}) {
    if (schedule >= 0)
      rk.updated_gather =
          issue(k, RequestKind::kUpdatedGather, static_cast<std::uint32_t>(schedule), rk.optimizer_node);
  }
}

void StepRun::finish(int k, des::Tick now, std::int64_t node) {
  rank(k).finish = now;
  rank(k).end_node = node;
}

void StepRun::span(int track, des::Tick start, des::Tick end, std::string name) {
  spans_.push_back(TraceSpan{track, des::to_seconds(start).value(), des::to_seconds(end).value(), std::move(name)});
}

}  // namespace stepcast::sim::detail
