// The options of search and table that set a key in every plan they try: --doc-len (packed
// documents, plan key doc-len=), --peft lora (plan keys peft=, lora-rank=, lora-targets=) and
// --optimizer (optimizer=), each checked through predict against a hand derivation: Llama 3 8B
// (workloads/llama3-8b.json: 32 layers, 32 query heads of 128) and Llama 3 70B (workloads/llama3-70b.json: 80 layers,
// hidden 8192, 8 KV heads of 128, MLP 28672 gated, vocabulary 128256, 70.6e9 parameters) on 8 H100 80GB.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_stepcast.hpp"

namespace search_plan_keys_test {

using namespace stepcast;

namespace {

constexpr const char* kPackedNote =
    "each sequence packs documents of 512 tokens, attention within each (doc-len=512 in every plan)";
constexpr const char* kLoraNote =
    "every plan trains LoRA adapters of rank 32 on qkv beside frozen weights (peft=lora); plans that shard the "
    "weights (FSDP, zero=3) are not modelled with it";

bool has_note(const nlohmann::json& report, const std::string& note) {
  for (const auto& n : report.at("notes")) {
    if (n.get<std::string>() == note) return true;
  }
  return false;
}

nlohmann::json predict(const std::string& workload, const std::string& plan, const std::string& options = "") {
  return nlohmann::json::parse(test::run_stepcast("predict --workload workloads/" + workload +
                                                  ".json --topology topologies/dgx-h100.json --json" + options +
                                                  " --plan \"" + plan + "\""));
}

nlohmann::json search_70b(const std::string& options) {
  return nlohmann::json::parse(test::run_stepcast(
      "search --workload workloads/llama3-70b.json --topology topologies/dgx-h100.json --gpus 8 --global-batch 64 "
      "--seq 4096 --top 1 --refine 0 --format json" +
      options));
}

/// The value of `key` in a compact plan ("dp=8,tp=1,...").
int plan_degree(const std::string& plan, const std::string& key) {
  const std::size_t at = ("," + plan).find("," + key + "=");
  REQUIRE(at != std::string::npos);
  return std::stoi(plan.substr(at + key.size() + 1));
}

}  // namespace

TEST_SUITE("report.search_plan_keys") {
  TEST_CASE("search --doc-len 512 at 8192 tokens: its best plan is predict's with doc-len=512") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload workloads/llama3-8b.json --topology topologies/dgx-h100.json --gpus 8 --global-batch 64 "
        "--seq 8192 --doc-len 512 --top 1 --refine 0 --format json"));
    CHECK(has_note(report, kPackedNote));
    const auto& best = report.at("tables").at(0).at("rows").at(0);
    const std::string plan = best.at("plan").get<std::string>() + ",gbs=64,seq=8192";
    const auto packed = predict("llama3-8b", plan + ",doc-len=512");
    const auto whole = predict("llama3-8b", plan);
    CHECK(packed.at("step_time_s").get<double>() == doctest::Approx(best.at("step_time_s").get<double>()));
    CHECK(packed.at("step_time_s").get<double>() < whole.at("step_time_s").get<double>());
    // By hand: a query meets 4096 keys of the causal 8192-token sequence, 256 of its 512-token
    // document; 2 x keys x 32 heads x (128 + 128) FLOPs a token and layer, 3 passes, 32 layers,
    // 64 x 8192 = 524,288 tokens: the model FLOPs drop by 96 x 524,288 x 2 x 3840 x 8192 = 3.1666e15.
    CHECK(whole.at("model_flops").get<double>() - packed.at("model_flops").get<double>() ==
          doctest::Approx(3.1666e15).epsilon(1e-4));
  }

  TEST_CASE("table --doc-len: the note, and the cells' plans priced with it") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "table --workloads workloads/llama3-8b.json --topologies topologies/dgx-h100.json --gpus 8 --global-batch 64 "
        "--seq 8192 --doc-len 512 --format json"));
    CHECK(has_note(report, kPackedNote));
    const auto& cell = report.at("tables").at(0).at("rows").at(0);
    const auto packed = predict("llama3-8b", cell.at("plan").get<std::string>() + ",gbs=64,seq=8192,doc-len=512");
    CHECK(packed.at("step_time_s").get<double>() == doctest::Approx(cell.at("step_time_s").get<double>()));
  }

  TEST_CASE("search --peft lora on 8 H100s: full training fits no plan, LoRA's best is predict's with peft=lora") {
    // By hand: mixed-precision Adam keeps 16 B a trained parameter (2 weights, 2 gradients, 12
    // optimizer), 16 x 70.6e9 / 8 GPUs = 141 GB a GPU however it is sharded: above 80 GB.
    const auto full = search_70b("");
    CHECK(full.at("tables").at(0).at("rows").empty());
    const auto lora = search_70b(" --peft lora --lora-targets qkv");
    CHECK(has_note(lora, kLoraNote));
    const auto& best = lora.at("tables").at(0).at("rows").at(0);
    const std::string plan = best.at("plan").get<std::string>() + ",gbs=64,seq=4096";
    const auto adapted = predict("llama3-70b", plan + ",peft=lora,lora-targets=qkv");
    CHECK(adapted.at("step_time_s").get<double>() == doctest::Approx(best.at("step_time_s").get<double>()));
    CHECK(adapted.at("fits").get<bool>());
    // By hand: frozen weights run no weight-gradient GEMMs (the adapters' small GEMMs are not
    // counted): per token 2 FLOPs a frozen linear weight, 80 layers of qkv 8192 x 10240, proj
    // 8192 x 8192, fc1 8192 x 57344 and fc2 28672 x 8192 (855,638,016) and the logits 8192 x 128256;
    // 64 x 4096 = 262,144 tokens: 2 x 262,144 x 69,501,706,240 = 3.6439e16 FLOPs fewer.
    // Trained in full the plan needs 177 GiB a GPU: priced on a GPU of 256 GiB.
    const auto trained = predict("llama3-70b", plan, " --set 'gpu.memory=256 GiB'");
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
    const auto adapted =
        predict("llama3-70b", cell.at("plan").get<std::string>() + ",gbs=64,seq=4096,peft=lora,lora-targets=qkv");
    CHECK(adapted.at("step_time_s").get<double>() == doctest::Approx(cell.at("step_time_s").get<double>()));
  }

  TEST_CASE("search --optimizer muon: its best plan is predict's with optimizer=muon, lighter than under Adam") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload workloads/llama3-8b.json --topology topologies/dgx-h100.json --gpus 8 --global-batch 64 "
        "--seq 8192 --optimizer muon --top 1 --refine 0 --format json"));
    const auto& best = report.at("tables").at(0).at("rows").at(0);
    const std::string plan = best.at("plan").get<std::string>() + ",gbs=64,seq=8192";
    const auto muon = predict("llama3-8b", plan + ",optimizer=muon");
    CHECK(muon.at("step_time_s").get<double>() == doctest::Approx(best.at("step_time_s").get<double>()));
    // By hand: Muon keeps one fp32 moment where Adam keeps two on the 32 layers' 6,979,584,000
    // parameters (tests/cost/muon_test.cpp), sharded over dp under the distributed optimizer.
    REQUIRE(plan_degree(plan, "zero") >= 1);
    const auto adam = predict("llama3-8b", plan, " --set 'gpu.memory=256 GiB'");
    CHECK(adam.at("memory_per_gpu_bytes").get<double>() - muon.at("memory_per_gpu_bytes").get<double>() ==
          doctest::Approx(4.0 * 6'979'584'000.0 / plan_degree(plan, "dp")).epsilon(1e-9));
  }
}

}  // namespace search_plan_keys_test
