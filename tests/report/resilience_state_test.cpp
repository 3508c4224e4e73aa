// What `stepcast resilience` saves of the trained state. Under peft=lora the checkpoint holds the
// adapters' state alone, as Megatron-Bridge's PEFT checkpoints do, and a restore reads the frozen
// base weights as well; under optimizer=muon it holds Muon's momentum where Adam keeps two moments.
// Hand derivation on Llama 3 70B (tests/cost/peft_test.cpp: 4,390,912 adapter parameters a layer at
// rank 32, 80 layers): 351,272,960 adapter parameters; saved are their bf16 weights (2 B) and
// Adam's fp32 master, moments (12 B): 351,272,960 x 14 = 4,917,821,440 B. Full training would
// save 70,553,706,496 x 14 = 987,751,890,944 B. Both add under 100 kB of scheduler, RNG and data
// position state. At tp=1, pp=2 each rank reads its stage's frozen weights at a restore (the
// adapters are parameters beside them): 70,553,706,496 / 2 x 2 B = 70,553,706,496 B.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/run_stepcast.hpp"

namespace resilience_state_test {

namespace {

nlohmann::json resilience(const std::string& plan) {
  return nlohmann::json::parse(
      stepcast::test::run_stepcast("resilience --workload llama3-70b --topology dgx-h100 --nodes 1 --plan " + plan +
                                   " --storage '2 GB/s' --mtbf '24 h' --json"));
}

}  // namespace

TEST_SUITE("report.resilience_state") {
  TEST_CASE("a LoRA checkpoint is the adapters' state, its restore reads the frozen base too") {
    const std::string plan = "tp=1,pp=2,zero=1,mbs=1,gbs=32,seq=4096";
    const auto lora = resilience(plan + ",peft=lora");
    const auto full = resilience(plan);
    CHECK(lora["checkpoint_bytes_total"].get<double>() == doctest::Approx(4'917'821'440.0).epsilon(1e-4));
    CHECK(full["checkpoint_bytes_total"].get<double>() == doctest::Approx(987'751'890'944.0).epsilon(1e-4));
    CHECK(lora["frozen_base_read_per_rank_bytes"].get<double>() == doctest::Approx(70'553'706'496.0));
    CHECK(full["frozen_base_read_per_rank_bytes"].get<double>() == 0.0);
  }

  TEST_CASE("a Muon checkpoint lacks Adam's second moment on the transformer blocks' matrices") {
    // Llama 3 70B's blocks hold 80 x 855,654,400 = 68,452,352,000 parameters (tests/cost/peft_test.cpp)
    // and Muon keeps one fp32 moment on them where Adam keeps two; the embeddings, output layer and
    // final norm keep Adam's: 4 x 68,452,352,000 = 273,809,408,000 B fewer of the 987,751,890,944.
    const std::string plan = "tp=1,pp=2,zero=1,mbs=1,gbs=32,seq=4096";
    const auto muon = resilience(plan + ",optimizer=muon");
    CHECK(muon["checkpoint_bytes_total"].get<double>() ==
          doctest::Approx(987'751'890'944.0 - 273'809'408'000.0).epsilon(1e-4));
  }
}

}  // namespace resilience_state_test
