// `predict --json` carries each communication term's calls as whole numbers: `calls` in all and
// `call_sizes`, one entry per size, through the real executable.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/run_stepcast.hpp"

namespace predict_calls_json_test {

using stepcast::test::run_stepcast;

TEST_SUITE("report.predict_calls_json") {
  TEST_CASE("Llama 3 70B under ZeRO-3: 80 gathers, 79 units and the first with the embeddings") {
    // tests/graph/call_counts_test.cpp derives the sizes: a layer's 855,654,400 parameters and the
    // 2,101,354,496 outside the layers, 2 B each, one micro-batch.
    const nlohmann::json j =
        nlohmann::json::parse(run_stepcast("predict --workload llama3-70b --topology dgx-h100 --gpus 64 --plan "
                                           "dp=64,zero=3,mbs=2,recompute=full,gbs=128,seq=8192,precision=fp8 --json"));
    nlohmann::json forward;
    for (const auto& t : j.at("breakdown").at("communication")) {
      if (t.at("name") == "FSDP all-gather (forward)") forward = t;
    }
    REQUIRE(forward.is_object());
    CHECK(forward.at("calls").is_number_integer());
    CHECK(forward.at("calls").get<long long>() == 80);
    const nlohmann::json& sizes = forward.at("call_sizes");
    REQUIRE(sizes.size() == 2);
    CHECK(sizes[0].at("calls").get<long long>() == 79);
    CHECK(sizes[0].at("size_bytes").get<double>() == doctest::Approx(1'711'308'800.0).epsilon(1e-12));
    CHECK(sizes[1].at("calls").get<long long>() == 1);
    CHECK(sizes[1].at("size_bytes").get<double>() == doctest::Approx(5'914'017'792.0).epsilon(1e-12));
    // size_bytes stays the full-size call's.
    CHECK(forward.at("size_bytes").get<double>() == doctest::Approx(1'711'308'800.0).epsilon(1e-12));
  }
}

}  // namespace predict_calls_json_test
