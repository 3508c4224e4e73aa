// The rejection table of `stepcast search`: one row per rule, with the rule's stable code beside the
// summary people read, so a JSON reader filters on the code and never parses the text.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "stepcast/report/plan_reports.hpp"
#include "stepcast/report/writers.hpp"

namespace search_rejections_test {

using namespace stepcast;

TEST_SUITE("report.search_rejections") {
  TEST_CASE("JSON rows carry each rule's code, summary, count and first example") {
    // 30 candidates with tp=16 on nodes of 8 GPUs; 45 whose 16 stages do not divide 24 layers.
    planner::SearchResult result;
    result.candidates = 75;
    result.invalid = 75;
    result.rejections.push_back(
        {plan::Rule::kPpVpDivideLayers, 45,
         plan::Verdict{plan::Rule::kPpVpDivideLayers, {{"layers", 24}, {"pp", 16}, {"vp", 1}, {"stages", 16}}}});
    result.rejections.push_back(
        {plan::Rule::kTpWithinNode, 30, plan::Verdict{plan::Rule::kTpWithinNode, {{"tp", 16}, {"gpus_per_node", 8}}}});
    report::SearchContext context;
    context.command = "stepcast search";
    context.workload = "gpt";
    context.topology = "p4d";
    context.gpu = "A100";
    context.gpus = 16;
    context.global_batch = 64;
    context.seq_len = 2048;
    const report::Report r = report::search_report(result, context, 5);
    const nlohmann::json j = nlohmann::json::parse(report::render_json(r));
    const nlohmann::json* rows = nullptr;
    for (const auto& t : j.at("tables")) {
      if (t.at("name") == "rejections") rows = &t.at("rows");
    }
    REQUIRE(rows != nullptr);
    REQUIRE(rows->size() == 2);
    CHECK(rows->at(0).at("code") == "pp-vp-divide-layers");
    CHECK(rows->at(0).at("reason") == "layers must be divisible by pp*vp");
    CHECK(rows->at(0).at("count") == 45);
    CHECK(rows->at(0).at("example") == "layers (24) must be divisible by pp*vp = 16*1 = 16");
    CHECK(rows->at(1).at("code") == "tp-within-node");
    CHECK(rows->at(1).at("reason") == "tp must not exceed the GPUs of one node");
    CHECK(rows->at(1).at("example") == "tp (16) must not exceed the GPUs of one node (8)");
  }
}

}  // namespace search_rejections_test
