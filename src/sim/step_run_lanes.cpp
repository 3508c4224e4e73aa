// A rank's call lanes: the calls a layer pass runs before its compute, beside its first slice or
// beside all of it, and after or beside each slice. A call several simulated ranks reach (its
// groups span their replicas) starts when the last of them reaches it.
#include <fmt/format.h>

#include "step_run.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

void StepRun::start_lane(int k, Lane lane, const std::vector<std::uint32_t>& slots, bool compute_waits) {
  LaneState& l = rank(k).lanes[lane];
  l.slots = &slots;
  l.next = 0;
  l.running = !slots.empty();
  l.compute_waiting = compute_waits && l.running;
  l.start = engine_.now();
  l.wait_start = l.start;
  if (l.running) start_call(k, lane);
}

void StepRun::start_call(int k, Lane lane) {
  Rank& rk = rank(k);
  LaneState& l = rk.lanes[lane];
  l.call_start = engine_.now();
  const std::uint32_t slot = (*l.slots)[l.next];
  const std::uint32_t schedule = rk.schedule_of[slot];
  const int expected = rk.expected[slot];
  hold(k, blocks_of(rk.stage, slot));
  std::uint32_t id = 0;
  const std::uint64_t key = (static_cast<std::uint64_t>(schedule) << 32) | rk.occurrences[slot]++;
  const auto open = expected > 1 ? open_rendezvous_.find(key) : open_rendezvous_.end();
  if (open != open_rendezvous_.end()) {
    id = open->second;
  } else {
    if (free_rendezvous_.empty()) {
      rendezvous_.emplace_back();
      free_rendezvous_.push_back(static_cast<std::uint32_t>(rendezvous_.size() - 1));
    }
    id = free_rendezvous_.back();
    free_rendezvous_.pop_back();
    rendezvous_[id] = Rendezvous{schedule, expected, {}};
    if (expected > 1) open_rendezvous_.emplace(key, id);
  }
  Rendezvous& r = rendezvous_[id];
  r.waiters.emplace_back(k, lane);
  if (static_cast<int>(r.waiters.size()) < r.expected) return;
  if (expected > 1) open_rendezvous_.erase(key);
  runner_.start(schedules_[schedule], tag(Kind::kCallDone, 0, id));
}

void StepRun::charge(Rank& rk, std::uint32_t slot, des::Tick ticks) {
  rk.waits[stage_of(rk).slots[slot].node] += ticks;
}

void StepRun::call_done(int k, Lane lane, des::Tick now) {
  Rank& rk = rank(k);
  LaneState& l = rk.lanes[lane];
  const std::uint32_t slot = (*l.slots)[l.next];
  hold(k, -blocks_of(rk.stage, slot));
  // A lane the compute waits on from the start charges each call to its group.
  if (l.compute_waiting && (lane == kBlockingLane || lane == kSliceLane)) charge(rk, slot, now - l.call_start);
  if (trace_) span(lane_track(k), l.call_start, now, node_of(stage_of(rk), slot).name);
  if (++l.next < l.slots->size()) {
    start_call(k, lane);
    return;
  }
  lane_done(k, lane, now);
}

void StepRun::lane_done(int k, Lane lane, des::Tick now) {
  Rank& rk = rank(k);
  LaneState& l = rk.lanes[lane];
  l.running = false;
  l.end = now;
  const bool waited = l.compute_waiting;
  l.compute_waiting = false;
  switch (lane) {
    case kBlockingLane:
      start_slice(k);
      return;
    case kFirstSliceLane:
    case kLayerEndLane:
      if (!waited) return;
      charge(rk, l.slots->back(), now - l.wait_start);
      if (lane == kFirstSliceLane) {
        slice_done(k);
      } else {
        slice_end(k);
      }
      return;
    case kSliceLane:
      if (!rk.overlapping) {
        slice_end(k);
      } else if (rk.slice_compute_done) {
        overlap_tail(k, now);
      }
      return;
    case kLanes:
      break;
  }
  STEPCAST_UNREACHABLE("unknown lane");
}

// Both halves of an overlapped slice are done: what the calls outlasted the compute by, and the
// tail nothing hides, are exposed; the slice goes on after the tail.
void StepRun::overlap_tail(int k, des::Tick now) {
  Rank& rk = rank(k);
  const LaneState& l = rk.lanes[kSliceLane];
  const des::Tick comm = l.end - l.start;
  const auto tail = static_cast<des::Tick>(std::llround(static_cast<double>(comm) * stage_of(rk).tail));
  const des::Tick outlasted = l.end > rk.slice_compute_end ? l.end - rk.slice_compute_end : 0;
  charge(rk, l.slots->front(), outlasted + tail);
  rk.overlapping = false;
  timers_.at(now + tail, tag(Kind::kOverlapTail, k, 0));
}

}  // namespace stepcast::sim::detail
