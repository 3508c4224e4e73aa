// Runs on part of every NVL72 rack: the gpus_per_domain column, and the 16-tray segment a row
// without it takes when no whole number of racks holds its GPUs (NVIDIA's Slurm segment for jobs
// of 128 GPUs and more on GB200 NVL72). The Megatron-Bridge rows are counted outside stepcast.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/calibrate/training_runs.hpp"
#include "support/input_error_text.hpp"

namespace partial_racks_runs_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

const std::filesystem::path kRoot = STEPCAST_SOURCE_DIR;

std::vector<TrainingRun> read(const std::string& name, const std::string& text) {
  const auto folder = std::filesystem::temp_directory_path() / ("stepcast_racks_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::ofstream(folder / name) << text;
  return read_training_runs({folder / name}, kRoot);
}

bool on_nvl72(const TrainingRun& r) { return r.topology_name == "gb200-nvl72" || r.topology_name == "gb300-nvl72"; }

}  // namespace

TEST_SUITE("calibrate.partial_racks") {
  TEST_CASE("the 71 Megatron-Bridge NVL72 runs that no whole rack holds run on 64 GPUs of each of GPUs / 64 racks") {
    // Counted outside stepcast with Python's csv module on the file (comment lines dropped):
    //   rows with topology gb200-nvl72 or gb300-nvl72 and gpus > 72 with gpus % 72 != 0
    //   = 71 (GB200: 2 of 128 GPUs, 33 of 256; GB300: 36 of 256), the 71 rows the reader
    //   listed as "not whole nodes of 72 GPUs" before partial racks were expressible.
    const auto runs = read_training_runs({kRoot / "tests/data/runs/megatron_bridge.csv"}, kRoot);
    int partial = 0;
    for (const TrainingRun& r : runs) {
      if (!on_nvl72(r) || r.gpus <= 72 || r.gpus % 72 == 0) continue;
      ++partial;
      CAPTURE(r.id);
      REQUIRE(r.topology);
      // 128 = 2 x 64 and 256 = 4 x 64: an NVLink domain of 64 GPUs in each of 2 or 4 racks.
      CHECK(r.topology->gpus_per_node() == 64);
      CHECK(r.topology->domain_gpus() == 72);
      CHECK(r.topology->node_count() == r.gpus / 64);
      CHECK(r.topology->gpu_count() == r.gpus);
      // Whatever else the model refuses of such a row, it is not where its GPUs are.
      CHECK(r.inexpressible.find("whole nodes") == std::string::npos);
    }
    CHECK(partial == 71);
  }

  TEST_CASE("a gpus_per_domain column states the part of each rack, without it 96 GPUs fit no rule") {
    // 96 GPUs = 2 racks x 48 (12 trays each); 96 is neither whole racks of 72 nor whole 16-tray
    // segments of 64, so without the column the row is counted as inexpressible, with the way out.
    const auto given = read("given.csv",
                            "run,workload,topology,nodes,gpus,gpus_per_domain,plan,global_batch,seq_len,precision,"
                            "step_time\n"
                            "r1,llama3-8b,gb200-nvl72,36,96,48,\"tp=1,pp=1,mbs=1,zero=1\",96,8192,bf16,2 s\n");
    REQUIRE(given.size() == 1);
    CHECK(given[0].expressible());
    CHECK(given[0].topology->node_count() == 2);
    CHECK(given[0].topology->gpus_per_node() == 48);
    const auto derived = read("derived.csv",
                              "run,workload,topology,nodes,gpus,plan,global_batch,seq_len,precision,step_time\n"
                              "r1,llama3-8b,gb200-nvl72,36,96,\"tp=1,pp=1,mbs=1,zero=1\",96,8192,bf16,2 s\n");
    REQUIRE(derived.size() == 1);
    CHECK(derived[0].inexpressible.find("gpus_per_domain says the part of each domain a run used") !=
          std::string::npos);
  }

  TEST_CASE("a gpus_per_domain that breaks the rule stops the read at its row") {
    const std::string e = stepcast::test::input_error_text([] {
      read("bad.csv",
           "run,workload,topology,nodes,gpus,gpus_per_domain,plan,global_batch,seq_len,precision,step_time\n"
           "r1,llama3-8b,gb200-nvl72,36,124,62,\"tp=1,pp=1,mbs=1,zero=1\",124,8192,bf16,2 s\n");
    });
    CHECK(e.find("bad.csv:2") != std::string::npos);
    CHECK(e.find("not a whole number of trays of 4 GPUs") != std::string::npos);
  }
}

}  // namespace partial_racks_runs_test
