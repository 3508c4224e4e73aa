// The seed's memory check through the real executable: `stepcast memory --workload
// workloads/seed-7b.json --plan "fsdp=8" --precision fp16 --optimizer adam` gives 14e9 B =
// 13.04 GiB of model state per GPU (16 B/param x 7e9 / 8, the seed documents).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_stepcast.hpp"

namespace memory_cli_test {

TEST_SUITE("cost.memory_cli") {
  TEST_CASE("stepcast memory on the seed: model state 14e9 B per GPU in JSON, 13.04 GiB in the table") {
    const std::string args =
        "memory --workload workloads/seed-7b.json --plan \"fsdp=8\" --precision fp16 --optimizer adam";
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(args + " --json"));
    CHECK(j.at("model_state_bytes_per_gpu").get<double>() == doctest::Approx(14e9));
    CHECK(j.at("gpus").get<int>() == 8);
    const std::string table = stepcast::test::run_stepcast(args);
    CHECK(table.find("model state             13.04 GiB") != std::string::npos);
  }

  TEST_CASE("stepcast predict prints a JSON breakdown whose terms sum to the step time and memory totals") {
    const auto j = nlohmann::json::parse(
        stepcast::test::run_stepcast("predict --workload workloads/llama2-7b.json --topology "
                                     "topologies/p4d-24xlarge.json --nodes 2 --plan \"fsdp=16,flash=on\" "
                                     "--global-batch 256 --seq 4096 --json"));
    const auto& b = j.at("breakdown");
    const double sum = b.at("compute_s").get<double>() + b.at("bubble_s").get<double>() +
                       b.at("exposed_communication_s").get<double>() + b.at("optimizer_s").get<double>();
    CHECK(sum == doctest::Approx(j.at("step_time_s").get<double>()));
    double memory = 0.0;
    for (const auto& [key, value] : j.at("memory").items()) {
      if (key != "total_bytes") memory += value.get<double>();
    }
    CHECK(memory == doctest::Approx(j.at("memory_per_gpu_bytes").get<double>()));
    CHECK(j.at("fits").get<bool>());
    CHECK(j.at("tokens_per_s").get<double>() > 0.0);
    CHECK(j.at("mfu").get<double>() > 0.0);
    CHECK(j.at("mfu").get<double>() < 1.0);
  }

  TEST_CASE("shipped workloads and topologies are found from any folder, as the README says") {
    const auto r = stepcast::test::run_stepcast_with_status(
        "predict --workload workloads/llama2-7b.json --topology topologies/p4d-24xlarge.json --nodes 2 "
        "--plan fsdp=16,flash=on --json",
        std::filesystem::temp_directory_path().string());
    CHECK(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.output).at("gpus").get<int>() == 16);
  }
}

}  // namespace memory_cli_test
