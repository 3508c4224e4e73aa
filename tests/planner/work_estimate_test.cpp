// Work estimates from a request's counts, derived by hand from the rates work_estimate.cpp states
// (6 us and 200 B per compute task, 1.2 us and 50 B per rank of a per-layer collective, 64 MiB of
// base, 13 us and 1.5 KB per searched candidate, 2e-8 s per rank squared per collective size).
#include <doctest/doctest.h>

#include <filesystem>

#include "stepcast/planner/work_estimate.hpp"

namespace work_estimate_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;
constexpr double kBase = 64.0 * 1024 * 1024;

}  // namespace

TEST_SUITE("planner.work_estimate") {
  TEST_CASE("pipeline only: stages x micro-batches x 2 passes tasks, no collective inside layers") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    plan::Plan p = plan::parse_plan("pp=8,dp=1");
    p.global_batch = 4096;
    p.seq_len = 1024;
    p = plan::resolve(p, w, 8);
    // 8 stages x 4096 micro-batches x 1 chunk x 2 passes = 65,536 tasks: 0.393 s, 13.1 MB over the base.
    const planner::WorkEstimate e = planner::simulation_work(w, p, false, false);
    CHECK(e.time.value() == doctest::Approx(65536 * 6e-6));
    CHECK(e.memory.value() == doctest::Approx(kBase + 65536 * 200.0));
  }

  TEST_CASE("tensor parallel adds two collectives of tp ranks per layer and pass, step noise every replica") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    plan::Plan p = plan::parse_plan("tp=2,pp=2,dp=2");
    p.global_batch = 16;
    p.seq_len = 1024;
    p = plan::resolve(p, w, 8);
    // 2 stages x 8 micro-batches x 2 passes = 32 tasks of 32 / 2 = 16 layers, each layer 2 x 2 = 4 rank-collectives:
    // 2048 of them. Time 32 x 6 us + 2048 x 1.2 us = 2.6496 ms; memory base + 32 x 200 + 2048 x 50 B.
    const planner::WorkEstimate e = planner::simulation_work(w, p, false, false);
    CHECK(e.time.value() == doctest::Approx(32 * 6e-6 + 2048 * 1.2e-6));
    CHECK(e.memory.value() == doctest::Approx(kBase + 32 * 200.0 + 2048 * 50.0));
    // Every replica (dp = 2) simulated doubles both counts.
    const planner::WorkEstimate all = planner::simulation_work(w, p, true, false);
    CHECK(all.time.value() == doctest::Approx(2 * e.time.value()));
    // A trace keeps 32 task spans and 32 x 16 x 2 collective spans, 300 B each.
    const planner::WorkEstimate traced = planner::simulation_work(w, p, false, true);
    CHECK(traced.memory.value() == doctest::Approx(e.memory.value() + (32 + 32 * 16 * 2) * 300.0));
  }

  TEST_CASE("searches grow with their candidates, simulated collectives with the square of their ranks") {
    // 50,000 candidates: 50,000 x 13 us = 0.65 s, 50,000 x 1.5 KB = 75 MB over the base.
    CHECK(planner::search_work(50000).time.value() == doctest::Approx(0.65));
    CHECK(planner::search_work(50000).memory.value() == doctest::Approx(kBase + 7.5e7));
    // 65,536 ranks, 2 sizes: 2e-8 x 65536^2 x 2 = 171.8 s.
    CHECK(planner::collective_simulation_work(65536, 2).time.value() == doctest::Approx(171.798691840));
  }

  TEST_CASE("work added in one process counts its base memory once") {
    planner::WorkEstimate sum;
    sum += planner::search_work(1000);  // 0.013 s, base + 1.5 MB
    sum += planner::search_work(2000);  // 0.026 s, base + 3 MB
    CHECK(sum.time.value() == doctest::Approx(0.039));
    CHECK(sum.memory.value() == doctest::Approx(kBase + 4.5e6));
  }

  TEST_CASE("work run one after another holds the larger memory, not the sum") {
    planner::WorkEstimate runs;
    runs.then(planner::search_work(1000));  // 0.013 s, base + 1.5 MB
    runs.then(planner::search_work(2000));  // 0.026 s, base + 3 MB
    CHECK(runs.time.value() == doctest::Approx(0.039));
    CHECK(runs.memory.value() == doctest::Approx(kBase + 3e6));
  }
}

}  // namespace work_estimate_test
