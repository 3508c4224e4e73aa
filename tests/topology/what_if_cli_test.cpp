// What-if options through the real executable: --set, --gpus, --memory-margin and the price of a
// GPU-hour, each against a figure worked outside stepcast (the seed's ring all-reduce, ZeRO's
// 16 bytes per parameter, AWS's on-demand list prices).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "support/run_stepcast.hpp"

namespace what_if_cli_test {

namespace {
const std::string kSource = STEPCAST_SOURCE_DIR;
}  // namespace

TEST_SUITE("topology.what_if_cli") {
  TEST_CASE("the seed's all-reduce on 200 Gbps instead of 400: 2(N-1)/N x 14e9 B / 25e9 B/s = 1.05 s at N = 16") {
    // The seed's figure on 400 Gbps (50e9 B/s) is 0.525 s; halving the link doubles it.
    const std::string base = "collective --op all-reduce --algorithm ring --size '14e9 B' --topology " + kSource +
                             "/topologies/flat-400gbps.json --json";
    CHECK(nlohmann::json::parse(stepcast::test::run_stepcast(base)).at("time_s").get<double>() ==
          doctest::Approx(0.525));
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(base + " --set 'nics.bandwidth=200 Gbps'"));
    CHECK(j.at("time_s").get<double>() == doctest::Approx(1.05));
    // --gpus 8 is 8 of the 16 one-GPU nodes: 2 x 7/8 x 14e9 / 50e9 = 0.49 s, the seed's N = 8 figure.
    const auto eight = nlohmann::json::parse(stepcast::test::run_stepcast(base + " --gpus 8"));
    CHECK(eight.at("time_s").get<double>() == doctest::Approx(0.49));
  }

  TEST_CASE("predict --gpus 4: four GPUs of one p4d node, fsdp=4 holds 16 B x 6.74e9 / 4 of model state per GPU") {
    // ZeRO-3 / FULL_SHARD: 2 + 2 + 12 bytes per parameter (Rajbhandari et al. 2020) over 4 ranks;
    // Llama-2 7B has 6.74e9 parameters (Touvron et al. 2023).
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(
        "predict --workload workloads/llama2-7b.json --topology topologies/p4d-24xlarge.json --gpus 4 "
        "--plan 'fsdp=4,recompute=full' --global-batch 16 --seq 4096 --json"));
    CHECK(j.at("gpus").get<int>() == 4);
    const auto& m = j.at("memory");
    const double state = m.at("parameters_bytes").get<double>() + m.at("gradients_bytes").get<double>() +
                         m.at("optimizer_state_bytes").get<double>();
    CHECK(state == doctest::Approx(16.0 * 6.74e9 / 4).epsilon(0.01));
    CHECK(j.at("parameters").get<double>() == doctest::Approx(6.74e9).epsilon(0.001));
    // A plan that does not say flash= runs FlashAttention on an A100.
    CHECK(j.at("plan").get<std::string>().find("flash=on") != std::string::npos);
  }

  TEST_CASE("--memory-margin: a plan leaving H free fits a margin below H and not one above it (exit 3)") {
    const std::string predict =
        "predict --workload workloads/llama2-7b.json --topology topologies/p4d-24xlarge.json --nodes 2 "
        "--plan 'fsdp=16' --global-batch 64 --seq 4096 --json";
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(predict));
    const double headroom = j.at("headroom_bytes").get<double>();
    REQUIRE(headroom > 2.0 * (1 << 30));
    const std::string below = std::to_string(static_cast<long long>(headroom) - (1 << 30)) + " B";
    const std::string above = std::to_string(static_cast<long long>(headroom) + (1 << 30)) + " B";
    const auto ok = nlohmann::json::parse(stepcast::test::run_stepcast(predict + " --memory-margin '" + below + "'"));
    CHECK(ok.at("fits").get<bool>());
    CHECK(ok.at("memory_margin_bytes").get<double>() == doctest::Approx(headroom - (1 << 30)));
    const auto refused = stepcast::test::run_stepcast_with_status(predict + " --memory-margin '" + above + "'");
    CHECK(refused.exit_code == 3);
    CHECK(refused.output.find("kept free by --memory-margin") != std::string::npos);
  }

  TEST_CASE("table cost: GPU-hours x each file's AWS on-demand price, or x --price per cluster") {
    const std::string table =
        "table --workloads workloads/llama2-7b.json --topologies "
        "topologies/p4d-24xlarge.json,topologies/p5-48xlarge.json "
        "--gpus 8 --global-batch 64 --seq 4096 --tokens 1e12 --format json";
    // p4d.24xlarge 32.7726 USD/h and p5.48xlarge 98.32 USD/h (US East, Linux), 8 GPUs each.
    for (const auto& [extra, p4d, p5] :
         {std::tuple{std::string(), 32.7726 / 8, 98.32 / 8}, std::tuple{std::string(" --price 2,3"), 2.0, 3.0}}) {
      const auto doc = nlohmann::json::parse(stepcast::test::run_stepcast(table + extra));
      const auto& rows = doc.at("tables").at(0).at("rows");
      REQUIRE(rows.size() == 2);
      for (const auto& row : rows) {
        REQUIRE(row.at("fits").get<bool>());
        const double price = row.at("cluster").get<std::string>() == "p4d.24xlarge" ? p4d : p5;
        // Both columns are printed to the whole unit, so the product agrees to a few parts in 1e5.
        CHECK(row.at("cost_usd").get<double>() ==
              doctest::Approx(row.at("gpu_hours").get<double>() * price).epsilon(1e-4));
      }
    }
  }
}

}  // namespace what_if_cli_test
