// Binary min-heap over (tick, seq) entries with a slot pool for payloads and cancellation.
#include "stepcast/des/event_queue.hpp"

#include <utility>

#include "stepcast/core/errors.hpp"

namespace stepcast::des {

EventHandle EventQueue::schedule(Tick tick, std::uint64_t payload) {
  STEPCAST_ASSERT(tick >= last_popped_, "an event cannot be scheduled before the current time");
  STEPCAST_ASSERT(tick != kNever, "an event needs a finite tick");
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& s = slots_[slot];
  s.payload = payload;
  s.live = true;
  heap_.push_back(Entry{tick, next_seq_++, slot});
  sift_up(heap_.size() - 1);
  ++live_;
  return EventHandle{slot, s.generation};
}

bool EventQueue::cancel(EventHandle handle) {
  if (!is_pending(handle)) return false;
  slots_[handle.slot].live = false;
  --live_;
  return true;
}

bool EventQueue::is_pending(EventHandle handle) const {
  return handle.slot < slots_.size() && slots_[handle.slot].generation == handle.generation && slots_[handle.slot].live;
}

Tick EventQueue::next_tick() {
  drop_cancelled();
  return heap_.empty() ? kNever : heap_.front().tick;
}

Event EventQueue::pop() {
  drop_cancelled();
  STEPCAST_ASSERT(!heap_.empty(), "pop from an empty event queue");
  const Entry top = heap_.front();
  Slot& s = slots_[top.slot];
  const Event event{top.tick, s.payload};
  s.live = false;
  --live_;
  remove_top();
  last_popped_ = top.tick;
  ++popped_;
  return event;
}

void EventQueue::reserve(std::size_t n) {
  heap_.reserve(n);
  slots_.reserve(n);
  free_slots_.reserve(n);
}

void EventQueue::drop_cancelled() {
  while (!heap_.empty() && !slots_[heap_.front().slot].live) remove_top();
}

// Frees the top entry's slot (bumping its generation so old handles go stale) and restores the heap.
void EventQueue::remove_top() {
  const std::uint32_t slot = heap_.front().slot;
  ++slots_[slot].generation;
  free_slots_.push_back(slot);
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::sift_up(std::size_t i) {
  const Entry moving = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(moving, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
}

void EventQueue::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const Entry moving = heap_[i];
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], moving)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = moving;
}

}  // namespace stepcast::des
