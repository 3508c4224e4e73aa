// search and table --doc-len: every plan they try packs documents of N tokens (plan key doc-len=),
// checked through predict's model FLOPs against a hand derivation for Llama 3 8B
// (workloads/llama3-8b.json: 32 layers, 32 query heads of 128).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_stepcast.hpp"

namespace search_packed_test {

using namespace stepcast;

namespace {

bool has_note(const nlohmann::json& report, const std::string& note) {
  for (const auto& n : report.at("notes")) {
    if (n.get<std::string>() == note) return true;
  }
  return false;
}

nlohmann::json predict(const std::string& plan) {
  return nlohmann::json::parse(test::run_stepcast(
      "predict --workload workloads/llama3-8b.json --topology topologies/dgx-h100.json --json --plan \"" + plan +
      "\""));
}

}  // namespace

TEST_SUITE("report.search_packed") {
  TEST_CASE("search --doc-len 512 at 8192 tokens: its best plan is predict's with doc-len=512") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload workloads/llama3-8b.json --topology topologies/dgx-h100.json --gpus 8 --global-batch 64 "
        "--seq 8192 --doc-len 512 --top 1 --refine 0 --format json"));
    CHECK(has_note(report,
                   "each sequence packs documents of 512 tokens, attention within each (doc-len=512 in every "
                   "plan)"));
    const auto& best = report.at("tables").at(0).at("rows").at(0);
    const std::string plan = best.at("plan").get<std::string>() + ",gbs=64,seq=8192";
    const auto packed = predict(plan + ",doc-len=512");
    const auto whole = predict(plan);
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
    CHECK(has_note(report,
                   "each sequence packs documents of 512 tokens, attention within each (doc-len=512 in every "
                   "plan)"));
    const auto& cell = report.at("tables").at(0).at("rows").at(0);
    const auto packed = predict(cell.at("plan").get<std::string>() + ",gbs=64,seq=8192,doc-len=512");
    CHECK(packed.at("step_time_s").get<double>() == doctest::Approx(cell.at("step_time_s").get<double>()));
  }
}

}  // namespace search_packed_test
