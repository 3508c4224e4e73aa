// Budgets before work (issue 32): search, table, simulate --seeds and collective refuse a request
// over budget through the real executable with exit 2, the estimate and what to lower, in under a
// second of CPU time (the children's rusage), and write nothing. Expected estimates are derived by
// hand from the rates planner/work_estimate.cpp states.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "support/run_stepcast.hpp"
#include "support/scratch_folder.hpp"

namespace budget_cli_test {

namespace {

struct Folder : stepcast::test::ScratchFolder {
  explicit Folder(const std::string& name) : ScratchFolder("stepcast_budget_cli_test_", name) {}
};

double children_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

/// Runs `args -o <folder>/out.txt` and checks the refusal: exit 2, `message` in the output, under
/// a second of CPU, and the folder still empty.
void check_refused(const std::string& args, const std::string& message) {
  // A folder of the request's own: CTest runs this file's cases at once, each in its process.
  Folder dir("refused_" + std::to_string(std::hash<std::string>{}(args)));
  const double before = children_cpu_seconds();
  const stepcast::test::CommandResult r =
      stepcast::test::run_stepcast_with_status(args + " -o " + (dir.path / "out.txt").string());
  const double cpu = children_cpu_seconds() - before;
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
  CHECK_MESSAGE(cpu < 1.0, args, ": ", cpu, " s of CPU");
  CHECK(dir.names().empty());
}

}  // namespace

TEST_SUITE("report.budget_cli") {
  TEST_CASE("search: its candidates at 13 us each, refused before any is evaluated") {
    // Llama-2 7B on one DGX H100 node (8 GPUs), batch 512: 9,705 candidates (bench/RESULTS.md):
    // 9,705 x 13 us = 0.126 s, over a budget of 0.01 s.
    check_refused(
        "search --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 1 --global-batch 512 "
        "--time-budget \"0.01 s\"",
        "searching 9705 candidate plans would take about 0.126 s of CPU time");
  }

  TEST_CASE("table: its cells' candidates, largest cell first") {
    check_refused(
        "table --workloads workloads/llama3-70b.json --topologies topologies/dgx-h100.json --gpus 64,128 "
        "--global-batch 1024 --time-budget \"0.01 s\"",
        "candidate plans (in the 1 largest of 2 cells) would take about");
  }

  TEST_CASE("table: a cell searched on two placements adds their times and keeps the larger memory") {
    // 576 GB200 GPUs are searched on 8 whole racks and on 64 of each of 9, one after the other:
    // 13 us a candidate for both, and 64 MiB + 1,500 B a candidate for the larger search alone.
    const std::string cell = "table --workloads llama3-8b --topologies gb200-nvl72 --gpus 576 --global-batch 1152";
    const auto candidates = [&](const std::string& extra) {
      const std::string out =
          stepcast::test::run_stepcast_with_status(cell + extra + " --memory-budget \"1 MiB\"").output;
      const std::size_t at = out.find("searching ");
      REQUIRE(at != std::string::npos);
      return std::stod(out.substr(at + 10));
    };
    const double whole = candidates(" --gpus-per-domain 72");
    const double part = candidates(" --gpus-per-domain 64");
    const double larger = std::max(whole, part);
    const std::string both = stepcast::test::run_stepcast_with_status(cell + " --memory-budget \"1 MiB\"").output;
    CHECK(both.find(fmt::format("searching {:.0f} candidate plans in 1 cells would take about {:.2f} s of CPU time "
                                "and {:.2f} MiB of memory",
                                whole + part, 13e-6 * (whole + part), 64.0 + 1500.0 * larger / (1024.0 * 1024.0))) !=
          std::string::npos);
  }

  TEST_CASE("simulate --seeds: two billion seeds") {
    check_refused(
        "simulate --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 1 "
        "--plan tp=2,pp=2,dp=2 --global-batch 16 --seq 1024 --seeds 2000000000",
        "simulating 2000000000 seeds of this plan would take about");
  }

  TEST_CASE("collective --engine des: 2e-8 s per rank squared per size") {
    // 1,024 nodes x 8 GPUs = 8,192 ranks; sizes 1 B to 1 GiB by doubling: 2^0 .. 2^30, 31 of them.
    // 2e-8 x 8192^2 x 31 = 41.6 s, over a budget of 1 s.
    check_refused(
        "collective --op all-reduce --sizes \"1B:1GiB\" --topology topologies/dgx-h100.json --nodes 1024 "
        "--engine des --time-budget \"1 s\"",
        "simulating this collective on the event engine would take about 41.6 s of CPU time");
  }
}

}  // namespace budget_cli_test
