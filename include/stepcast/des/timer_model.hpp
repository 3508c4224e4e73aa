// A model made of timed callbacks: the simplest client of the engine, used for compute tasks and
// delays. Handlers are registered once and events carry only (handler, payload), so scheduling
// allocates nothing per event.
#pragma once

#include <cstdint>
#include <vector>

#include "stepcast/des/engine.hpp"
#include "stepcast/des/event_queue.hpp"

namespace stepcast::des {

/// Receives the events of a TimerModel.
class TimerHandler {
 public:
  virtual ~TimerHandler() = default;
  /// Called at `now` for an event scheduled with `payload`.
  virtual void on_timer(Tick now, std::uint64_t payload) = 0;
};

/// Timed callbacks to one handler, in (tick, seq) order.
class TimerModel final : public Model {
 public:
  /// Reads the clock of `engine`, so that events scheduled while another model acts are timed right.
  TimerModel(const Engine& engine, TimerHandler& handler) : engine_(&engine), handler_(&handler) {}

  /// Calls the handler with `payload` at `tick` (>= now()).
  EventHandle at(Tick tick, std::uint64_t payload) { return queue_.schedule(tick, payload); }
  /// Calls the handler with `payload` after `delay` ticks.
  EventHandle after(Tick delay, std::uint64_t payload) { return queue_.schedule(engine_->now() + delay, payload); }
  bool cancel(EventHandle handle) { return queue_.cancel(handle); }
  [[nodiscard]] Tick now() const { return engine_->now(); }
  [[nodiscard]] std::uint64_t fired() const { return queue_.popped(); }
  void reserve(std::size_t n) { queue_.reserve(n); }

  Tick next_event_tick() override { return queue_.next_tick(); }
  void advance_to(Tick now) override;

 private:
  const Engine* engine_;
  TimerHandler* handler_;
  EventQueue queue_;
};

}  // namespace stepcast::des
