// The engine loop: earliest announced tick first; models due together act in registration order,
// so the order of actions never depends on addresses or hashing.
#include "stepcast/des/engine.hpp"

#include "stepcast/core/errors.hpp"

namespace stepcast::des {

void Engine::add_model(Model& model) {
  models_.push_back(&model);
  due_.push_back(kNever);
}

Tick Engine::run() {
  while (true) {
    Tick next = kNever;
    for (std::size_t i = 0; i < models_.size(); ++i) {
      due_[i] = models_[i]->next_event_tick();
      if (due_[i] < next) next = due_[i];
    }
    if (next == kNever) return now_;
    STEPCAST_ASSERT(next >= now_, "simulated time must not run backwards");
    now_ = next;
    for (std::size_t i = 0; i < models_.size(); ++i) {
      if (due_[i] != next) continue;
      models_[i]->advance_to(next);
      ++activations_;
    }
  }
}

}  // namespace stepcast::des
