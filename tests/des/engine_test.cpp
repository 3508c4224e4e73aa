// The engine: asks models for their next tick, runs the earliest, ties in registration order.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/des/engine.hpp"
#include "stepcast/des/timer_model.hpp"

namespace engine_test {

using namespace stepcast::des;

namespace {

// Records (name, tick, payload) and, for payloads below `chain`, schedules the next link at +3.
class Recorder : public TimerHandler {
 public:
  Recorder(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(&log) {}
  void on_timer(Tick now, std::uint64_t payload) override {
    log_->push_back(name_ + "@" + std::to_string(now) + ":" + std::to_string(payload));
    if (payload < chain && model) model->after(3, payload + 1);
  }
  std::uint64_t chain = 0;
  TimerModel* model = nullptr;

 private:
  std::string name_;
  std::vector<std::string>* log_;
};

}  // namespace

TEST_SUITE("des.engine") {
  TEST_CASE("two models interleave by tick, at equal ticks the first registered acts first") {
    std::vector<std::string> log;
    Recorder ra("a", log);
    Recorder rb("b", log);
    Engine engine;
    TimerModel a(engine, ra);
    TimerModel b(engine, rb);
    engine.add_model(a);
    engine.add_model(b);
    a.at(5, 1);
    b.at(5, 2);
    b.at(1, 3);
    a.at(9, 4);
    CHECK(engine.run() == 9);
    CHECK(log == std::vector<std::string>{"b@1:3", "a@5:1", "b@5:2", "a@9:4"});
  }

  TEST_CASE("handlers can schedule follow-ups, including at the current tick") {
    std::vector<std::string> log;
    Recorder r("r", log);
    Engine engine;
    TimerModel m(engine, r);
    r.model = &m;
    r.chain = 3;
    engine.add_model(m);
    m.at(0, 0);
    m.at(0, 10);
    // 0 fires at 0, then 1 at 3, 2 at 6, 3 at 9 (chain stops at 3); 10 at 0 after 0.
    CHECK(engine.run() == 9);
    CHECK(log == std::vector<std::string>{"r@0:0", "r@0:10", "r@3:1", "r@6:2", "r@9:3"});
    CHECK(m.fired() == 5);
  }

  TEST_CASE("an engine with no events ends at time zero") {
    Engine engine;
    CHECK(engine.run() == 0);
  }
}

}  // namespace engine_test
