// The event queue: (tick, seq) order, insertion-order ties, cancellation, handle staleness.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "stepcast/des/event_queue.hpp"

namespace event_queue_test {

using stepcast::des::EventHandle;
using stepcast::des::EventQueue;
using stepcast::des::kNever;

TEST_SUITE("des.event_queue") {
  TEST_CASE("events leave in tick order whatever the insertion order") {
    EventQueue q;
    // Ticks chosen out of order; the expected order is simply the sorted ticks 1, 2, 5, 7, 9.
    q.schedule(7, 70);
    q.schedule(2, 20);
    q.schedule(9, 90);
    q.schedule(1, 10);
    q.schedule(5, 50);
    std::vector<std::uint64_t> got;
    while (!q.empty()) got.push_back(q.pop().payload);
    CHECK(got == std::vector<std::uint64_t>{10, 20, 50, 70, 90});
  }

  TEST_CASE("equal ticks leave in insertion order") {
    EventQueue q;
    for (std::uint64_t i = 0; i < 100; ++i) q.schedule(3, i);
    q.schedule(1, 1000);
    CHECK(q.pop().payload == 1000);
    for (std::uint64_t i = 0; i < 100; ++i) CHECK(q.pop().payload == i);
    CHECK(q.next_tick() == kNever);
  }

  TEST_CASE("a cancelled event never leaves, its handle goes stale") {
    EventQueue q;
    const EventHandle a = q.schedule(4, 1);
    const EventHandle b = q.schedule(2, 2);
    q.schedule(6, 3);
    CHECK(q.size() == 3);
    CHECK(q.cancel(b));
    CHECK_FALSE(q.cancel(b));
    CHECK(q.size() == 2);
    CHECK(q.next_tick() == 4);
    CHECK(q.pop().payload == 1);
    // `a` left the queue, so its slot may be reused; the old handle must not cancel the new event.
    CHECK_FALSE(q.is_pending(a));
    const EventHandle c = q.schedule(8, 4);
    CHECK_FALSE(q.cancel(a));
    CHECK(q.is_pending(c));
    CHECK(q.pop().payload == 3);
    CHECK(q.pop().payload == 4);
    CHECK(q.empty());
  }

  TEST_CASE("a default handle names no event, so cancelling it is harmless") {
    EventQueue q;
    q.schedule(1, 1);
    CHECK_FALSE(q.cancel(EventHandle{}));
    CHECK(q.size() == 1);
  }

  TEST_CASE("rescheduling is cancel plus schedule and keeps order exact") {
    EventQueue q;
    EventHandle h = q.schedule(10, 1);
    q.schedule(5, 2);
    q.cancel(h);
    h = q.schedule(3, 1);
    CHECK(q.pop().payload == 1);
    CHECK(q.pop().payload == 2);
    CHECK(q.popped() == 2);
  }

  TEST_CASE("a large random mix comes out sorted by (tick, insertion)") {
    EventQueue q;
    // A linear congruential sequence (Knuth's MMIX constants) gives ticks in 0..63 with many ties.
    std::uint64_t x = 12345;
    for (std::uint64_t i = 0; i < 5000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      q.schedule(static_cast<std::int64_t>(x >> 58), i);
    }
    std::int64_t last_tick = -1;
    std::uint64_t last_payload = 0;
    while (!q.empty()) {
      const auto e = q.pop();
      CHECK(e.tick >= last_tick);
      if (e.tick == last_tick) CHECK(e.payload > last_payload);
      last_tick = e.tick;
      last_payload = e.payload;
    }
    CHECK(q.popped() == 5000);
  }
}

}  // namespace event_queue_test
