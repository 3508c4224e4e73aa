// The event engine (SimGrid's seam): it asks each model "when is your next event?", moves the
// clock to the earliest answer and lets the models due then act. It knows no physics.
#pragma once

#include <cstdint>
#include <vector>

#include "stepcast/des/time.hpp"

namespace stepcast::des {

/// Something that evolves in simulated time: a network, a set of compute streams, a timer list.
class Model {
 public:
  Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  virtual ~Model() = default;

  /// Settles pending changes (for example re-rates flows started at the current tick) and
  /// returns the tick of this model's next event, or kNever when it has nothing to do.
  virtual Tick next_event_tick() = 0;
  /// Handles every event of this model due at `now`. Called only with the tick this model
  /// announced; may create work for any model at `now` or later.
  virtual void advance_to(Tick now) = 0;
};

/// Runs models to quiescence. A value: many engines can run at once (no global event list).
class Engine {
 public:
  /// Registers `model`; models due at the same tick act in registration order.
  void add_model(Model& model);
  /// Runs until no model has an event; returns the final clock.
  Tick run();
  /// The current clock.
  [[nodiscard]] Tick now() const { return now_; }
  /// How many (tick, model) activations the run made.
  [[nodiscard]] std::uint64_t activations() const { return activations_; }

 private:
  std::vector<Model*> models_;
  std::vector<Tick> due_;
  Tick now_ = 0;
  std::uint64_t activations_ = 0;
};

}  // namespace stepcast::des
