// Fires the timers due at the current tick; handlers may schedule more at the same tick, and
// those fire in the same activation, after the ones already queued (insertion order).
#include "stepcast/des/timer_model.hpp"

namespace stepcast::des {

void TimerModel::advance_to(Tick now) {
  while (queue_.next_tick() == now) {
    const Event event = queue_.pop();
    handler_->on_timer(now, event.payload);
  }
}

}  // namespace stepcast::des
