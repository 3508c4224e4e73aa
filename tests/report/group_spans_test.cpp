// `predict --json` lists every parallel group's span (and --explain prints it), placed by the
// rank order. Derived by hand from Megatron-Core's numbering (parallel_state.py): with the default
// tp-cp-ep-dp-pp a GPU is (stage x dp + replica) x tp + tensor rank; with tp-pp-cp-ep-dp it is
// (replica x pp + stage) x tp + tensor rank. A DGX H100 node holds 8 GPUs, each with its own NIC;
// a GB200 NVL72 rack used 64 GPUs at a time (--gpus-per-domain 64) is one NVLink domain.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/run_stepcast.hpp"

namespace group_spans_test {

using namespace stepcast;

namespace {

nlohmann::json group(const std::string& args, const std::string& role) {
  const auto out = nlohmann::json::parse(test::run_stepcast("predict --json " + args));
  for (const auto& g : out.at("groups")) {
    if (g.at("group") == role) return g;
  }
  FAIL("no group " << role);
  return {};
}

}  // namespace

TEST_SUITE("report.group_spans") {
  const std::string kDgx = "--workload llama3-70b --topology dgx-h100 --gpus 64 --plan ";

  TEST_CASE("dp=4 tp=4 pp=4 on 64 H100, Megatron-Core's default order: a stage's replicas share two nodes") {
    // Stage 0 is GPUs 0-15 (tp 4 x dp 4), nodes 0 and 1: its first data group is tensor rank 0 of
    // each replica, GPUs 0, 4, 8, 12: two per node, each through its own NIC. Stage 1 starts at 16.
    const std::string plan = "\"dp=4,tp=4,pp=4,sp=on,zero=1,recompute=full,gbs=128,seq=8192\"";
    const auto data = group(kDgx + plan, "data");
    CHECK(data.at("gpus") == std::vector<int>{0, 4, 8, 12});
    CHECK(data.at("stride") == 4);
    CHECK(data.at("domains") == 2);
    CHECK(data.at("ranks_per_domain") == 2);
    CHECK(data.at("nics") == 2);
    const auto pipe = group(kDgx + plan, "pipeline");
    CHECK(pipe.at("gpus") == std::vector<int>{0, 16});
    CHECK(pipe.at("domains") == 2);
    const auto tensor = group(kDgx + plan, "tensor");
    CHECK(tensor.at("gpus") == std::vector<int>{0, 1, 2, 3});
    CHECK(tensor.at("domains") == 1);
    CHECK(tensor.at("nics") == 0);
  }

  TEST_CASE("the same plan with order=tp-pp-cp-ep-dp: the pipeline inside a node, the replicas on four") {
    // Replica 0's stages are GPUs 0-15 (stage s at 4 s): the pipeline pair 0, 4 shares node 0;
    // the data group 0, 16, 32, 48 has one rank on each of nodes 0, 2, 4, 6.
    const std::string plan = "\"dp=4,tp=4,pp=4,sp=on,zero=1,recompute=full,gbs=128,seq=8192,order=tp-pp-cp-ep-dp\"";
    const auto data = group(kDgx + plan, "data");
    CHECK(data.at("gpus") == std::vector<int>{0, 16, 32, 48});
    CHECK(data.at("domains") == 4);
    CHECK(data.at("ranks_per_domain") == 1);
    CHECK(data.at("nics") == 1);
    const auto pipe = group(kDgx + plan, "pipeline");
    CHECK(pipe.at("gpus") == std::vector<int>{0, 4});
    CHECK(pipe.at("domains") == 1);
  }

  TEST_CASE("tp=8 pp=4 dp=8 on 256 GB200, 64 of each rack: each stage's data group stays in its rack") {
    // A stage is tp 8 x dp 8 = 64 GPUs, one rack's 64: the data group 0, 8, ..., 56 never leaves
    // the NVLink domain; the pipeline pair 0, 64 crosses to the next rack.
    const std::string args =
        "--workload llama3-70b --topology gb200-nvl72-4racks --gpus 256 --gpus-per-domain 64 --plan "
        "\"tp=8,pp=4,dp=8,sp=on,zero=1,gbs=256,seq=8192\"";
    const auto data = group(args, "data");
    CHECK(data.at("gpus") == std::vector<int>{0, 8, 16, 24, 32, 40, 48, 56});
    CHECK(data.at("domains") == 1);
    CHECK(data.at("nics") == 0);
    const auto pipe = group(args, "pipeline");
    CHECK(pipe.at("gpus") == std::vector<int>{0, 64});
    CHECK(pipe.at("domains") == 2);
  }

  TEST_CASE("ep=64 on 576 GB200 GPUs of 8 whole racks: the expert group priced is GPUs 64-127, over two racks") {
    // Expert groups of 64 consecutive GPUs: 0-63 sits in rack 0 (GPUs 0-71); 64-127 holds rack 0's
    // last 8 and rack 1's first 56, so its all-to-all crosses the racks' NICs, and every layer
    // waits for it. On 64 of each of 9 racks, every expert group is one rack.
    const std::string args =
        "--workload deepseek-v3 --topology gb200-nvl72 --gpus 576 --plan "
        "\"dp=576,zero=2,mbs=4,ep=64,offload-layers=53,gbs=4608\"";
    const auto whole = group(args, "expert parallel");
    CHECK(whole.at("gpus").front() == 64);
    CHECK(whole.at("gpus").back() == 127);
    CHECK(whole.at("domains") == 2);
    CHECK(whole.at("ranks_per_domain") == 56);
    const auto part = group(args + " --gpus-per-domain 64", "expert parallel");
    CHECK(part.at("gpus").front() == 0);
    CHECK(part.at("domains") == 1);
  }

  TEST_CASE("--explain prints the table") {
    const std::string out = test::run_stepcast(
        "predict " + kDgx + "\"dp=4,tp=4,pp=4,sp=on,zero=1,recompute=full,gbs=128,seq=8192\" --explain");
    CHECK(out.find("Parallel groups: the group of each kind its collectives are priced on") != std::string::npos);
    CHECK(out.find("0,4,8,12") != std::string::npos);
  }
}

}  // namespace group_spans_test
