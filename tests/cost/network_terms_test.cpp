// A network's terms against NCCL's tuning model (topologies/networks/): across nodes NCCL still
// picks its algorithm and protocol with its own model, then the pick takes latency_factor x its
// latency and its bandwidth time over the efficiency (all-to-all and send/recv over the
// point-to-point efficiency); within a node, or under a calibration's own NCCL factors, nothing
// changes. Each expected figure below is derived in the test from NCCL's bare price.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/topology/overrides.hpp"
#include "support/run_stepcast.hpp"

namespace network_terms_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

// Two DGX H100 nodes whose InfiniBand states the given terms (--set edits the catalogue's block).
topology::Topology h100_nodes(double latency_factor, double efficiency, double p2p_efficiency) {
  const std::vector<std::string> sets = {"nics.network.latency_factor=" + std::to_string(latency_factor),
                                         "nics.network.bandwidth_efficiency=" + std::to_string(efficiency),
                                         "nics.network.p2p_bandwidth_efficiency=" + std::to_string(p2p_efficiency)};
  return topology::load_topology_with_sets(STEPCAST_SOURCE_DIR "/topologies/dgx-h100.json", 2, sets);
}

CollectivePrice priced(const topology::Topology& topo, int ranks, CollectiveOp op, Bytes size,
                       const CollectiveModel& model = {}) {
  return price_collective(collective_group(topo, topo.tiers(ranks, 1)), op, size, model);
}

const Bytes gib(1 << 30);

}  // namespace

TEST_SUITE("cost.network_terms") {
  TEST_CASE("across nodes a collective keeps NCCL's pick and takes 2 x its latency and its bandwidth time / 0.5") {
    const topology::Topology bare = h100_nodes(1.0, 1.0, 1.0);
    const topology::Topology slow = h100_nodes(2.0, 0.5, 0.25);
    const CollectivePrice nccl = priced(bare, 16, CollectiveOp::kAllReduce, gib);
    const CollectivePrice p = priced(slow, 16, CollectiveOp::kAllReduce, gib);
    REQUIRE(nccl.nccl.has_value());
    REQUIRE(p.nccl.has_value());
    CHECK(p.nccl->algorithm == nccl.nccl->algorithm);
    CHECK(p.nccl->protocol == nccl.nccl->protocol);
    CHECK(p.latency.value() == doctest::Approx(2.0 * nccl.latency.value()));
    CHECK(p.bandwidth_time.value() == doctest::Approx(nccl.bandwidth_time.value() / 0.5));
    CHECK(p.time.value() == doctest::Approx(2.0 * nccl.latency.value() + nccl.bandwidth_time.value() / 0.5));
    // The simulator's flows move the same bytes at half the rate.
    CHECK(p.flows.bytes_per_rank.value() == doctest::Approx(nccl.flows.bytes_per_rank.value()));
    CHECK(p.flows.rate_per_rank.value() == doctest::Approx(0.5 * nccl.flows.rate_per_rank.value()));
    REQUIRE(p.network.has_value());
    CHECK(p.network->bandwidth_efficiency == 0.5);
  }

  TEST_CASE("an all-to-all across nodes takes the point-to-point efficiency, 0.25, not the collectives' 0.5") {
    const topology::Topology bare = h100_nodes(1.0, 1.0, 1.0);
    const topology::Topology slow = h100_nodes(2.0, 0.5, 0.25);
    const CollectivePrice nccl = priced(bare, 16, CollectiveOp::kAllToAll, gib);
    const CollectivePrice p = priced(slow, 16, CollectiveOp::kAllToAll, gib);
    REQUIRE(p.p2p.has_value());
    CHECK(p.latency.value() == doctest::Approx(2.0 * nccl.latency.value()));
    CHECK(p.bandwidth_time.value() == doctest::Approx(nccl.bandwidth_time.value() / 0.25));
  }

  TEST_CASE("within one node the network's terms do not apply") {
    const topology::Topology bare = h100_nodes(1.0, 1.0, 1.0);
    const topology::Topology slow = h100_nodes(2.0, 0.5, 0.25);
    const CollectivePrice nccl = priced(bare, 8, CollectiveOp::kAllReduce, gib);
    const CollectivePrice p = priced(slow, 8, CollectiveOp::kAllReduce, gib);
    CHECK(p.time.value() == doctest::Approx(nccl.time.value()));
    CHECK_FALSE(p.network.has_value());
  }

  TEST_CASE("a calibration's NCCL factors, fitted on the user's cluster against NCCL's bare model, replace the terms") {
    const topology::Topology bare = h100_nodes(1.0, 1.0, 1.0);
    const topology::Topology slow = h100_nodes(2.0, 0.5, 0.25);
    Calibration own;
    own.nccl_protocols[NcclProtocol::kSimple] = {NcclProtocolTuning{1.0, 0.8}, std::nullopt, "test"};
    CollectiveModel model;
    model.calibration = &own;
    const CollectivePrice nccl = priced(bare, 16, CollectiveOp::kAllReduce, gib, model);
    const CollectivePrice p = priced(slow, 16, CollectiveOp::kAllReduce, gib, model);
    CHECK(p.time.value() == doctest::Approx(nccl.time.value()));
    CHECK_FALSE(p.network.has_value());
  }
}

TEST_SUITE("cost.network_terms") {
  TEST_CASE("validate names the network terms that priced the points across nodes, and none within a node") {
    const nlohmann::json ib =
        nlohmann::json::parse(std::ifstream(STEPCAST_SOURCE_DIR "/topologies/networks/infiniband.json"));
    const std::string across = test::run_stepcast(
        "validate --measured tests/data/nccl-tests/nccl-tests_5coll_H100_10nodes_8gpn_80ranks_xxrjun.txt "
        "--topology dgx-h100 --min-size 1GiB");
    CHECK(across.find(fmt::format("across nodes NCCL's pick takes the infiniband terms: latency x {:.3g}, bandwidth x "
                                  "{:.3g}, point-to-point x {:.3g}",
                                  ib.at("latency_factor").get<double>(), ib.at("bandwidth_efficiency").get<double>(),
                                  ib.at("p2p_bandwidth_efficiency").get<double>())) != std::string::npos);
    const std::string inside = test::run_stepcast(
        "validate --measured tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt --topology dgx-h100 "
        "--nodes 1");
    CHECK(inside.find("across nodes") == std::string::npos);
  }

  TEST_CASE("topology prints the GPU-to-NIC path a file states and what NCCL does with it, and nothing where none") {
    // Polaris states PHB (ALCF's device affinity table): beyond PXB, so no LL128 across nodes.
    const std::string polaris = test::run_stepcast("topology --topology topologies/alcf-polaris.json");
    CHECK(polaris.find("GPU to NIC    PHB (nics/gpu_path): through the CPU, NCCL runs no LL128 across nodes") !=
          std::string::npos);
    CHECK(nlohmann::json::parse(test::run_stepcast("topology --topology topologies/alcf-polaris.json --json"))
              .at("gpu_nic_path") == "PHB");
    CHECK(test::run_stepcast("topology --topology topologies/dgx-h100.json").find("GPU to NIC") == std::string::npos);
    CHECK(nlohmann::json::parse(test::run_stepcast("topology --topology topologies/dgx-h100.json --json"))
              .at("gpu_nic_path")
              .is_null());
  }

  TEST_CASE(
      "collective --engine des across nodes is measured against the achieved time it plays, not NCCL's bare one") {
    // The flows take the network's terms (README, "One collective model"): alone on idle links the
    // simulated time is the achieved one, so the gap is 0 and no slow link is blamed.
    const std::string out = test::run_stepcast(
        "collective --op all-reduce --size \"1 GiB\" --topology topologies/dgx-h100.json --nodes 4 --engine des");
    CHECK(out.find("(+0.0% against the achieved time: the flows met no link slower than NCCL's channels)") !=
          std::string::npos);
    // Within one node no network term applies: the flows play NCCL's own time, printed as +0.0%
    // whichever side of it the flows' ticks round to.
    const std::string inside = test::run_stepcast(
        "collective --op all-reduce --size \"1 GiB\" --topology topologies/dgx-h100.json --nodes 1 --engine des");
    CHECK(inside.find("(+0.0% against the formula: the flows met no link slower than NCCL's channels)") !=
          std::string::npos);
  }
}

}  // namespace network_terms_test
