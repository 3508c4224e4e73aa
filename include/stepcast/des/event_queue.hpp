// A pooled event queue ordered by (tick, seq): equal ticks leave in insertion order (htsim,
// SimCpp20), never by pointer. Events are 24-byte heap entries plus a reusable slot; no allocation
// per event once the pool has grown. Cancellation is lazy: a cancelled entry is skipped on pop.
#pragma once

#include <cstdint>
#include <vector>

#include "stepcast/des/time.hpp"

namespace stepcast::des {

/// Names a scheduled event so that it can be cancelled; stale handles are detected by generation.
/// A default-constructed handle names no event (slot generations start at 1).
struct EventHandle {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

/// An event leaving the queue: its tick and the payload its owner gave it.
struct Event {
  Tick tick = 0;
  std::uint64_t payload = 0;
};

/// A min-queue of events by (tick, insertion sequence). The payload is opaque to the queue: the
/// model that owns the queue decides what it means (a task id, a flow id).
class EventQueue {
 public:
  /// Schedules `payload` at `tick`. Precondition: tick >= the tick of the last popped event.
  EventHandle schedule(Tick tick, std::uint64_t payload);
  /// Cancels a pending event; returns false if it already left the queue or was cancelled.
  bool cancel(EventHandle handle);
  /// Whether `handle` names an event still pending.
  [[nodiscard]] bool is_pending(EventHandle handle) const;

  /// The tick of the earliest pending event, or kNever when there is none.
  [[nodiscard]] Tick next_tick();
  /// Removes and returns the earliest pending event. Precondition: next_tick() != kNever.
  Event pop();

  [[nodiscard]] bool empty() { return next_tick() == kNever; }
  /// Pending events (cancelled ones excluded).
  [[nodiscard]] std::size_t size() const { return live_; }
  /// Events popped so far.
  [[nodiscard]] std::uint64_t popped() const { return popped_; }
  /// Reserves room for `n` simultaneously pending events.
  void reserve(std::size_t n);

 private:
  struct Entry {
    Tick tick;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    std::uint64_t payload = 0;
    std::uint32_t generation = 1;
    bool live = false;
  };
  static bool earlier(const Entry& a, const Entry& b) { return a.tick != b.tick ? a.tick < b.tick : a.seq < b.seq; }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void remove_top();
  void drop_cancelled();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
  std::size_t live_ = 0;
  Tick last_popped_ = 0;
};

}  // namespace stepcast::des
