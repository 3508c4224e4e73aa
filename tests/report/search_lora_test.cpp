// search and table --peft lora: every plan they try trains LoRA adapters beside frozen weights
// (plan keys peft=, lora-rank=, lora-targets=), checked against hand derivations for Llama 3 70B
// (workloads/llama3-70b.json: 80 layers, hidden 8192, 8 KV heads of 128, MLP 28672 gated,
// vocabulary 128256, 70.6e9 parameters) on one node of 8 H100 80GB.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_stepcast.hpp"

namespace search_lora_test {

using namespace stepcast;

namespace {

constexpr const char* kLoraNote =
    "every plan trains LoRA adapters of rank 32 on qkv beside frozen weights (peft=lora); plans that shard the "
    "weights (FSDP, zero=3) are not modelled with it";

bool has_note(const nlohmann::json& report, const std::string& note) {
  for (const auto& n : report.at("notes")) {
    if (n.get<std::string>() == note) return true;
  }
  return false;
}

nlohmann::json predict(const std::string& plan) {
  return nlohmann::json::parse(test::run_stepcast(
      "predict --workload workloads/llama3-70b.json --topology topologies/dgx-h100.json --json --plan \"" + plan +
      "\""));
}

nlohmann::json search(const std::string& options) {
  return nlohmann::json::parse(test::run_stepcast(
      "search --workload workloads/llama3-70b.json --topology topologies/dgx-h100.json --gpus 8 --global-batch 64 "
      "--seq 4096 --top 1 --refine 0 --format json" +
      options));
}

}  // namespace

TEST_SUITE("report.search_lora") {
  TEST_CASE("search --peft lora on 8 H100s: full training fits no plan, LoRA's best is predict's with peft=lora") {
    // By hand: mixed-precision Adam keeps 16 B a trained parameter (2 weights, 2 gradients, 12
    // optimizer), 16 x 70.6e9 / 8 GPUs = 141 GB a GPU however it is sharded: above 80 GB.
    const auto full = search("");
    CHECK(full.at("tables").at(0).at("rows").empty());
    const auto lora = search(" --peft lora --lora-targets qkv");
    CHECK(has_note(lora, kLoraNote));
    const auto& best = lora.at("tables").at(0).at("rows").at(0);
    const std::string plan = best.at("plan").get<std::string>() + ",gbs=64,seq=4096";
    const auto adapted = predict(plan + ",peft=lora,lora-targets=qkv");
    CHECK(adapted.at("step_time_s").get<double>() == doctest::Approx(best.at("step_time_s").get<double>()));
    CHECK(adapted.at("fits").get<bool>());
    // By hand: frozen weights run no weight-gradient GEMMs (the adapters' small GEMMs are not
    // counted): per token 2 FLOPs a frozen linear weight, 80 layers of qkv 8192 x 10240, proj
    // 8192 x 8192, fc1 8192 x 57344 and fc2 28672 x 8192 (855,638,016) and the logits 8192 x 128256;
    // 64 x 4096 = 262,144 tokens: 2 x 262,144 x 69,501,706,240 = 3.6439e16 FLOPs fewer.
    // Trained in full the plan needs 177 GiB a GPU: priced on a GPU of 256 GiB.
    const auto trained = nlohmann::json::parse(test::run_stepcast(
        "predict --workload workloads/llama3-70b.json --topology topologies/dgx-h100.json --json --set "
        "'gpu.memory=256 GiB' --plan \"" +
        plan + "\""));
    CHECK(trained.at("hardware_flops").get<double>() - adapted.at("hardware_flops").get<double>() ==
          doctest::Approx(3.6439e16).epsilon(1e-4));
  }

  TEST_CASE("table --peft lora: the note, and the cell's plan priced with the adapters") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "table --workloads workloads/llama3-70b.json --topologies topologies/dgx-h100.json --gpus 8 --global-batch "
        "64 --seq 4096 --peft lora --lora-targets qkv --format json"));
    CHECK(has_note(report, kLoraNote));
    const auto& cell = report.at("tables").at(0).at("rows").at(0);
    CHECK(cell.at("fits").get<bool>());
    const auto adapted = predict(cell.at("plan").get<std::string>() + ",gbs=64,seq=4096,peft=lora,lora-targets=qkv");
    CHECK(adapted.at("step_time_s").get<double>() == doctest::Approx(cell.at("step_time_s").get<double>()));
  }
}

}  // namespace search_lora_test
