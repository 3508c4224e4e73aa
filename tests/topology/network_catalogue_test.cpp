// The network catalogue (topologies/networks/): every shipped cluster names the technology its
// source states, each catalogue file loads with bounded terms and their provenance, a topology
// may state its own terms inline, and a bad term is refused naming the rule.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace network_catalogue_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::scratch_file;
using stepcast::topology::test::shipped;

namespace {

std::string cluster_with_network(const std::string& network) {
  return stepcast::topology::test::two_node_cluster(network.empty() ? std::string() : "\"network\": " + network + ", ");
}

}  // namespace

TEST_SUITE("topology.network_catalogue") {
  TEST_CASE("each shipped cluster names the network its NICs' source states, with the catalogue's terms") {
    // The technology as each file's NIC source names it (ConnectX NICs of NVIDIA's reference
    // architectures on InfiniBand, AWS's EFA, HPE Slingshot 11 on Polaris, RoCE per llm-foundry).
    const std::map<std::string, std::string> expected = {
        {"alcf-polaris", "slingshot"}, {"dgx-a100", "infiniband"},
        {"dgx-b200", "infiniband"},    {"dgx-b300", "infiniband"},
        {"dgx-h100", "infiniband"},    {"dgx-h200", "infiniband"},
        {"gb200-nvl72", "infiniband"}, {"gb200-nvl72-4racks", "infiniband"},
        {"gb300-nvl72", "infiniband"}, {"mosaicml-a100-40gb", "roce"},
        {"p4d-24xlarge", "efa"},       {"p4de-24xlarge", "efa"},
        {"p5-48xlarge", "efa"}};
    for (const auto& entry : expected) {
      const std::string& name = entry.first;
      const std::string& network = entry.second;
      CAPTURE(name);
      const Topology t = load_topology(shipped(name + ".json"));
      REQUIRE(t.network().has_value());
      CHECK(t.network()->name == network);
      const nlohmann::json file = nlohmann::json::parse(std::ifstream(shipped("networks/" + network + ".json")));
      CHECK(t.network()->factors.bandwidth_efficiency ==
            doctest::Approx(file.at("bandwidth_efficiency").get<double>()));
      CHECK(t.network()->factors.p2p_bandwidth_efficiency ==
            doctest::Approx(file.at("p2p_bandwidth_efficiency").get<double>()));
      CHECK(t.network()->factors.latency_factor == doctest::Approx(file.at("latency_factor").get<double>()));
      CHECK(t.network()->file == shipped("networks/" + network + ".json").string());
    }
    CHECK_FALSE(load_topology(shipped("flat-400gbps.json")).network().has_value());
  }

  TEST_CASE("every catalogue file states bounded terms and where they come from, and an unfitted one is NCCL's model") {
    for (const auto& e : std::filesystem::directory_iterator(shipped("networks"))) {
      if (e.path().extension() != ".json") continue;
      CAPTURE(e.path().string());
      const nlohmann::json f = nlohmann::json::parse(std::ifstream(e.path()));
      CHECK(f.at("name").get<std::string>() == e.path().stem().string());
      for (const char* k : {"bandwidth_efficiency", "p2p_bandwidth_efficiency"}) {
        CHECK(f.at(k).get<double>() > 0.05);
        CHECK(f.at(k).get<double>() <= 1.0);
      }
      CHECK(f.at("source").get<std::string>().size() > 20);
      // A network the corpus has no log of borrows no other network's terms.
      if (!f.contains("fitted_on")) {
        CHECK(f.at("bandwidth_efficiency").get<double>() == 1.0);
        CHECK(f.at("p2p_bandwidth_efficiency").get<double>() == 1.0);
        CHECK(f.at("latency_factor").get<double>() == 1.0);
      }
    }
  }

  TEST_CASE("a topology states its own terms inline, and a term out of its bounds or an unknown name is refused") {
    const Topology own = load_topology(
        scratch_file("inline_network.json", cluster_with_network(R"({"name": "ib", "bandwidth_efficiency": 0.5,
            "p2p_bandwidth_efficiency": 0.25, "latency_factor": 2, "source": "measured"})")));
    REQUIRE(own.network().has_value());
    CHECK(own.network()->factors.bandwidth_efficiency == 0.5);
    CHECK(own.network()->factors.p2p_bandwidth_efficiency == 0.25);
    CHECK(own.network()->factors.latency_factor == 2.0);

    CHECK(error_of([] {
            (void)load_topology(scratch_file("network_above_one.json",
                                             cluster_with_network(R"({"name": "ib", "bandwidth_efficiency": 1.2,
                    "p2p_bandwidth_efficiency": 0.9, "latency_factor": 1, "source": "measured"})")));
          })
              .find(":/node/nics/network/bandwidth_efficiency: an efficiency is the share of NCCL's modelled "
                    "bandwidth the network achieves, between 0.05 and 1, got 1.2") != std::string::npos);
    CHECK(error_of([] {
            (void)load_topology(scratch_file("network_latency_zero.json",
                                             cluster_with_network(R"({"name": "ib", "bandwidth_efficiency": 1,
                    "p2p_bandwidth_efficiency": 1, "latency_factor": 0, "source": "measured"})")));
          }).find(":/node/nics/network/latency_factor: a factor on NCCL's latency between 0.1 and 1000, got 0") !=
          std::string::npos);
    CHECK(error_of(
              [] { (void)load_topology(scratch_file("network_unknown.json", cluster_with_network("\"omnipath\""))); })
              .find(":/node/nics/network: no network file \"omnipath.json\" in networks/ beside the topology nor in "
                    "the shipped catalogue (topologies/networks/: efa, infiniband, roce, slingshot)") !=
          std::string::npos);
    CHECK_FALSE(load_topology(scratch_file("no_network.json", cluster_with_network(""))).network().has_value());
  }
}

}  // namespace network_catalogue_test
