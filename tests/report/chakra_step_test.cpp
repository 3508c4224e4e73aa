// A plan's step graph written as Chakra traces, one per GPU, and read back with protobuf: the node
// counts of a GPU's trace follow from the plan by hand.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/report/chakra_step.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace chakra_step_test {

using namespace stepcast;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE("report.chakra_step") {
  TEST_CASE("Llama-2 7B, tp=2 pp=2 dp=4 on 2 p4d nodes: every GPU's trace parses back with the step's nodes") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
    const topology::Topology t = topology::load_topology(root + "/topologies/p4d-24xlarge.json", 2);
    plan::Plan p = plan::resolve(plan::parse_plan("tp=2,pp=2,dp=4,sp=on,mbs=1,gbs=8,seq=2048,flash=on"), w, 16);
    plan::validate(p, w, 16);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepGraph g = graph::plan_step_graph(w, p, t, options);
    const fs::path dir = fs::temp_directory_path() / ("stepcast-chakra-step-" + std::to_string(getpid()));
    fs::remove_all(dir);
    const auto files = report::write_step_chakra(dir, g, t, {});
    CHECK(files.traces.size() == 16);
    // GPU 0: stage 0 of replica 0. m = 8 / (dp 4 x mbs 1) = 2 micro-batches under 1F1B.
    //  - sends: its 2 forwards' activations to stage 1; receives: the 2 backwards' gradients;
    //  - collectives: per micro-batch 16 layers x (2 forward + 2 backward slices) x (all-gather +
    //    reduce-scatter) = 128 tensor-parallel calls, 256 in all, and the DDP buckets once per
    //    step: the gradients of its 6.74e9 / 4 parameters in 25 MiB buckets, whole ones and a
    //    partial last one.
    double ddp_pieces = 0.0;
    for (const graph::CommNode& n : g.comm) {
      if (n.anchor == graph::Anchor::kGradientReady) ddp_pieces = n.pieces;
    }
    REQUIRE(ddp_pieces > 1.0);
    const auto trace = report::chakra::read_chakra(dir, 0);
    CHECK(trace.counts.at("COMM_SEND_NODE") == 2);
    CHECK(trace.counts.at("COMM_RECV_NODE") == 2);
    CHECK(trace.counts.at("COMM_COLL_NODE") == 256 + static_cast<std::size_t>(std::ceil(ddp_pieces)));
    // Each of the 2 x 2 tasks runs 16 layers of 2 slices of compute, and the optimizer is one more.
    CHECK(trace.counts.at("COMP_NODE") >= 4 * 16 * 2 + 1);
    // The last stage receives the forwards and sends the gradients back: GPU 2 (tp rank 0, stage 1).
    const auto last = report::chakra::read_chakra(dir, 2);
    CHECK(last.counts.at("COMM_RECV_NODE") == 2);
    CHECK(last.counts.at("COMM_SEND_NODE") == 2);
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }

  TEST_CASE("GPT-3 175B's step graph shape at 32 GPUs: any number of threads writes one thread's bytes") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/gpt3-175b.json");
    const topology::Topology t = topology::load_topology(root + "/topologies/dgx-a100.json", 4);
    plan::Plan p = plan::resolve(plan::parse_plan("tp=4,pp=4,dp=2,sp=on,mbs=1,gbs=8,seq=2048"), w, 32);
    plan::validate(p, w, 32);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepGraph g = graph::plan_step_graph(w, p, t, options);
    const fs::path base = fs::temp_directory_path() / ("stepcast-chakra-threads-" + std::to_string(getpid()));
    fs::remove_all(base);
    report::write_step_chakra(base / "one", g, t, {}, 1);
    for (const int threads : {2, 3}) {
      CAPTURE(threads);
      const fs::path dir = base / std::to_string(threads);
      report::write_step_chakra(dir, g, t, {}, threads);
      for (const auto& entry : fs::directory_iterator(base / "one")) {
        CAPTURE(entry.path().filename());
        CHECK(read_file(dir / entry.path().filename()) == read_file(entry.path()));
      }
      CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 33);
    }
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
}

}  // namespace chakra_step_test
