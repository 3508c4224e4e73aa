// LoRA (peft=lora) in the step: the data-parallel reduction carries the adapters' gradients
// alone. Hand derivation from Llama 3 70B's shapes (tests/cost/peft_test.cpp derives the adapter
// sizes): rank 32 on qkv, proj, fc1 and fc2 is 32 x 137,216 = 4,390,912 parameters a layer.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace lora_step_test {

using namespace stepcast;

TEST_SUITE("graph.lora") {
  TEST_CASE("the data-parallel reduction carries the adapters' gradients alone") {
    const auto w = workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/llama3-70b.json");
    const auto topo = topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/dgx-h100.json", 1);
    const plan::Plan p =
        plan::resolve(plan::parse_plan("tp=1,pp=2,zero=1,mbs=1,gbs=32,seq=4096,grad-reduce=bf16,peft=lora"), w, 8);
    plan::validate(p, w, 8);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepPrediction step = graph::predict_step(w, p, topo, options);
    double reduced = 0.0;
    for (const graph::CommTerm& t : step.communication) {
      if (t.name.rfind("ZeRO gradient reduce-scatter", 0) != 0) continue;
      for (const auto& g : t.calls.groups) reduced += static_cast<double>(g.count) * g.size.value();
    }
    // One stage's adapters in bf16: 175,636,480 x 2 B = 351,272,960 B, against 70.6 GB of weights.
    CHECK(reduced == doctest::Approx(175'636'480.0 * 2.0));
  }
}

}  // namespace lora_step_test
