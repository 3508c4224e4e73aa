// Running a step's tasks: each rank's compute stream takes its stage's tasks in schedule order,
// each task layer by layer and slice by slice when calls sit inside the layers; sends between
// stages when a task ends.
#include "step_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

StepResult StepRun::run() {
  for (int k = 0; k < rank_count(); ++k) gather_chunks(k, 1);
  for (int k = 0; k < rank_count(); ++k) try_start(k, -1);
  engine_.run();
  return result();
}

void StepRun::on_timer(des::Tick now, std::uint64_t payload) {
  const int k = owner_of(payload);
  switch (kind_of(payload)) {
    case Kind::kSliceDone: {
      Rank& rk = rank(k);
      rk.slice_running = false;
      rk.compute += now - rk.slice_start;
      slice_done(k);
      break;
    }
    case Kind::kBucketReady: {
      Rank& rk = rank(k);
      ++rk.buckets_issued;
      issue(k, stage_of(rk).buckets[index_of(payload)].slot);
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
  const auto m = static_cast<std::uint32_t>(graph_->micro_batches);
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
  try_start(rank_index(replica, vs % pp()), send);
  Rank& sender = rank(owner_of(t));
  if (sender.send_wait == send) {
    sender.send_wait = -1;
    go_on(owner_of(t), send);
  }
}

void StepRun::on_collective_done(des::Tick now, std::uint64_t t) {
  if (kind_of(t) == Kind::kCallDone) {
    // Copied out: a waiter's next call may reuse the rendezvous.
    const Rendezvous r = rendezvous_[index_of(t)];
    free_rendezvous_.push_back(index_of(t));
    for (const auto& [k, lane] : r.waiters) call_done(k, lane, now);
  } else {
    stream_done(owner_of(t), index_of(t), now);
  }
}

// The step-start gathers as Megatron-Core issues them: the first two model chunks' at the start,
// each later chunk's as the chunk before it starts its first task (schedules.py,
// forward_backward_pipelining_with_interleaving: param_sync_func), each chunk's buckets in order.
void StepRun::gather_chunks(int k, int last_chunk) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  const int chunks = static_cast<int>(st.step_start.size());
  rk.chunk_gather.resize(st.step_start.size(), -1);
  for (; rk.chunks_gathered < chunks && rk.chunks_gathered <= last_chunk; ++rk.chunks_gathered) {
    for (const std::uint32_t slot : st.step_start[static_cast<std::size_t>(rk.chunks_gathered)]) {
      const std::int64_t i = issue(k, slot, -1);
      if (rk.first_bucket_gather < 0) rk.first_bucket_gather = i;
      rk.chunk_gather[static_cast<std::size_t>(rk.chunks_gathered)] = i;
    }
  }
}

bool StepRun::parameters_here(const Rank& rk) const {
  const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
  if (rk.chunk_gather.empty()) return true;
  const std::int64_t needed =
      rk.next == 0 ? rk.first_bucket_gather : rk.chunk_gather[static_cast<std::size_t>(st.ops[rk.next].chunk)];
  return needed < 0 || st.requests[static_cast<std::size_t>(needed)].done;
}

bool StepRun::waits_on_gather(const Rank& rk, std::int64_t request) {
  return rk.first_bucket_gather == request ||
         std::find(rk.chunk_gather.begin(), rk.chunk_gather.end(), request) != rk.chunk_gather.end();
}

bool StepRun::ready(const Rank& rk, const PipelineOp& op) const {
  if (!parameters_here(rk)) return false;
  const int vs = op.chunk * pp() + rk.stage;
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

// Tasks run layer by layer only when something happens between layers or inside them; a
// weight-gradient task (ZB-H1) holds no calls.
int StepRun::layers_of(const Rank& rk, const PipelineOp& op) const {
  if (!has_layer_calls_ || op.kind == PipelineOp::Kind::kWeightGrad) return 1;
  return graph_->stages[static_cast<std::size_t>(rk.stage)].passes(op.chunk);
}

// A slice's calls (tensor parallel's) run in the layers of forward and backward tasks: none in a
// weight-gradient task (ZB-H1) or in a chunk that holds no layer.
bool StepRun::slice_calls(const Rank& rk, const PipelineOp& op) const {
  return op.kind != PipelineOp::Kind::kWeightGrad &&
         graph_->stages[static_cast<std::size_t>(rk.stage)].chunks[static_cast<std::size_t>(op.chunk)].layers > 0;
}

int StepRun::slices_of(const PipelineOp& op) const {
  switch (op.kind) {
    case PipelineOp::Kind::kForward:
      return graph_->forward_slices;
    case PipelineOp::Kind::kBackward:
      return graph_->backward_slices;
    case PipelineOp::Kind::kWeightGrad:
      return 1;
  }
  return 1;
}

Seconds StepRun::work_of(const PipelineOp& op, int stage) const {
  const cost::ChunkCompute& w =
      graph_->stages[static_cast<std::size_t>(stage)].chunks[static_cast<std::size_t>(op.chunk)];
  const bool zb = graph_->schedule == plan::Schedule::kZbH1;
  switch (op.kind) {
    case PipelineOp::Kind::kForward:
      return w.forward;
    case PipelineOp::Kind::kBackward:
      return zb ? w.backward - w.weight_grad : w.backward;
    case PipelineOp::Kind::kWeightGrad:
      return w.weight_grad;
  }
  return Seconds(0.0);
}

// The program of the layer at position `pos` of the task: a backward meets the layers in reverse
// order, and the first layer of the first model chunk carries the root parameters.
const LayerProgram* StepRun::program_at(const Rank& rk, const PipelineOp& op, int pos) const {
  if (op.kind == PipelineOp::Kind::kWeightGrad || !has_layer_calls_) return nullptr;
  const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
  const bool backward = op.kind == PipelineOp::Kind::kBackward;
  const int layers = layers_of(rk, op);
  const int layer = backward ? layers - 1 - pos : pos;
  const auto pass = static_cast<std::size_t>(backward ? 1 : 0);
  const bool alone = !st.alone.empty() && st.alone[rk.next];
  if (st.has_root && op.chunk == 0 && layer == 0) return alone ? &st.root_layer_alone[pass] : &st.root_layer[pass];
  const auto& programs = alone ? st.layers_alone : st.layers;
  return &programs[static_cast<std::size_t>(op.chunk)][pass][static_cast<std::size_t>(layer)];
}

void StepRun::try_start(int k, std::int64_t trigger) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  if (rk.busy || rk.send_wait >= 0 || rk.next >= st.ops.size()) return;
  const PipelineOp& op = st.ops[rk.next];
  gather_chunks(k, op.chunk + 1);
  if (!ready(rk, op)) return;
  rk.busy = true;
  rk.layer = 0;
  rk.slice = 0;
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

// A layer waits for its gathered parameters, then prefetches the next layer's, starts its
// layer-start lanes and, unless a blocking lane brings what it needs, its first slice.
void StepRun::layer_begin(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  rk.program = program_at(rk, op, rk.layer);
  rk.layer_lanes_started = false;
  if (rk.program && !rk.program->gathers.empty()) {
    if (rk.gather < 0) rk.gather = issue_all(k, rk.program->gathers);
    if (!stage_of(rk).requests[static_cast<std::size_t>(rk.gather)].done) {
      rk.gather_waiting = true;
      rk.wait_start = engine_.now();
      return;
    }
  }
  layer_compute(k);
}

void StepRun::layer_compute(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  if (rk.program && !rk.program->gathers.empty() && rk.layer + 1 < layers_of(rk, op)) {
    const LayerProgram* next = program_at(rk, op, rk.layer + 1);
    if (!next->late_gathers) rk.prefetch = issue_all(k, next->gathers);
  }
  if (rk.program) {
    rk.layer_lanes_started = true;
    start_lane(k, kFirstSliceLane, rk.program->lanes[kFirstSliceLane]);
    start_lane(k, kLayerEndLane, rk.program->lanes[kLayerEndLane]);
    if (!rk.program->lanes[kBlockingLane].empty()) {
      // The layer's compute needs what these calls bring.
      start_lane(k, kBlockingLane, rk.program->lanes[kBlockingLane], true);
      return;
    }
  }
  start_slice(k);
}

void StepRun::start_slice(int k) {
  Rank& rk = rank(k);
  const Stage& st = stage_of(rk);
  const PipelineOp& op = st.ops[rk.next];
  const int per_layer = slices_of(op);
  const double slices = layers_of(rk, op) * per_layer;
  const des::Tick now = engine_.now();
  const des::Tick compute = des::to_ticks(work_of(op, rk.stage) / slices * rk.task_factor);
  rk.slice_running = true;
  rk.slice_start = now;
  rk.slice_since = now;
  rk.slice_left = static_cast<double>(compute);
  time_slice_end(k);
  rk.overlapping = !st.beside_slice.empty() && slice_calls(rk, op);
  if (rk.overlapping) {
    rk.slice_compute_done = false;
    start_lane(k, kSliceLane, st.beside_slice);
  }
  // Buckets whose bytes this slice of their task completes become ready in proportion through its
  // work at the full rate (a slice the collectives beside it slow readies them a little early).
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

double StepRun::slice_rate(const Rank& rk) const { return 1.0 - cost::sm_share(rk.held_blocks, sm_count_); }

void StepRun::time_slice_end(int k) {
  Rank& rk = rank(k);
  const auto left = static_cast<des::Tick>(std::llround(rk.slice_left / slice_rate(rk)));
  rk.slice_timer = timers_.at(engine_.now() + left, tag(Kind::kSliceDone, k, 0));
}

void StepRun::hold(int k, int blocks) {
  if (blocks == 0) return;
  Rank& rk = rank(k);
  if (!rk.slice_running) {
    rk.held_blocks += blocks;
    return;
  }
  // The work done at the old rate, then the rest at the new one.
  const des::Tick now = engine_.now();
  rk.slice_left = std::max(0.0, rk.slice_left - static_cast<double>(now - rk.slice_since) * slice_rate(rk));
  rk.slice_since = now;
  rk.held_blocks += blocks;
  timers_.cancel(rk.slice_timer);
  time_slice_end(k);
}

void StepRun::slice_done(int k) {
  Rank& rk = rank(k);
  const des::Tick now = engine_.now();
  LaneState& ring = rk.lanes[kFirstSliceLane];
  if (rk.slice == 0 && ring.running) {
    // The first slice's compute is done; the calls beside it are not.
    ring.compute_waiting = true;
    ring.wait_start = now;
    return;
  }
  if (rk.overlapping) {
    rk.slice_compute_done = true;
    rk.slice_compute_end = now;
    if (!rk.lanes[kSliceLane].running) overlap_tail(k, now);
    return;
  }
  const Stage& st = stage_of(rk);
  if (!st.after_slice.empty() && slice_calls(rk, op_of(rk))) {
    start_lane(k, kSliceLane, st.after_slice, true);
    return;
  }
  slice_end(k);
}

void StepRun::slice_end(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  LaneState& beside = rk.lanes[kLayerEndLane];
  if (rk.slice + 1 == slices_of(op) && beside.running) {
    // The layer's compute is done; the calls beside it are not.
    beside.compute_waiting = true;
    beside.wait_start = engine_.now();
    return;
  }
  if (++rk.slice < slices_of(op)) {
    start_slice(k);
    return;
  }
  layer_end(k);
}

// The layer's gradients are complete: the next layer's late gathers and then its reductions go
// on the stream; then the next layer.
void StepRun::layer_end(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  if (rk.program && !rk.program->gathers.empty() && rk.layer + 1 < layers_of(rk, op)) {
    const LayerProgram* next = program_at(rk, op, rk.layer + 1);
    if (next->late_gathers) rk.prefetch = issue_all(k, next->gathers);
  }
  if (rk.program && op.kind == PipelineOp::Kind::kBackward) {
    for (const std::uint32_t slot : rk.program->reductions) issue(k, slot);
  }
  rk.slice = 0;
  rk.gather = rk.prefetch;
  rk.prefetch = -1;
  if (++rk.layer < layers_of(rk, op)) {
    layer_begin(k);
  } else {
    task_done(k, engine_.now());
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
  const auto m = static_cast<std::uint32_t>(graph_->micro_batches);
  const int vs = op.chunk * pp() + rk.stage;
  const auto ku = static_cast<std::size_t>(k);
  const Bytes bytes = st.has_send ? st.slots[st.send_slot].size : Bytes(0.0);
  std::int64_t sent = -1;
  if (op.kind == PipelineOp::Kind::kForward && vs + 1 < virtual_stages()) {
    const auto dst = static_cast<std::uint32_t>(vs + 1);
    sent = fwd_send_[ready_index(rk.replica, vs + 1, op.micro_batch)] = add_send(rk, op, vs + 1);
    network_.start_with_latency(to_next_[ku], bytes,
                                tag(Kind::kSend, k, dst * 2 * m + static_cast<std::uint32_t>(op.micro_batch)),
                                st.send_delay + to_next_[ku].latency);
  }
  if (op.kind == PipelineOp::Kind::kBackward && vs > 0) {
    const auto dst = static_cast<std::uint32_t>(vs - 1);
    sent = bwd_send_[ready_index(rk.replica, vs - 1, op.micro_batch)] = add_send(rk, op, vs - 1);
    network_.start_with_latency(to_prev_[ku], bytes,
                                tag(Kind::kSend, k, dst * 2 * m + m + static_cast<std::uint32_t>(op.micro_batch)),
                                st.send_delay + to_prev_[ku].latency);
  }
  ++rk.next;
  if (sent >= 0 && st.blocking_send) {
    // The sender waits for its blocking send before going on.
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
  nodes_.back().to_stage = to_virtual_stage % pp();
  return id;
}

}  // namespace stepcast::sim::detail
