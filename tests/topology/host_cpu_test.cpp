// A cluster's "node"/"host_cpu": the host CPU NCCL's topology detection classifies (x86 Intel or
// AMD, or ARM), read as written, absent where the file states none. The shipped files state the
// vendors' datasheets: DGX A100 (AMD EPYC 7742), p5 (AMD EPYC 7R13) and Polaris (AMD EPYC 7543P)
// run AMD hosts, DGX H100 (Xeon Platinum 8480C) and p4d (Xeon Platinum 8275CL) Intel ones, and the
// GB200 NVL72 trays NVIDIA Grace (ARM).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace host_cpu_test {

using stepcast::topology::HostCpu;
using stepcast::topology::load_topology;
using stepcast::topology::test::scratch_file;
using stepcast::topology::test::shipped;
using stepcast::topology::test::two_node_cluster;

namespace {

std::string cluster_with_host(const std::string& vendor) {
  std::string text = two_node_cluster("");
  const std::string key = "\"gpus_per_node\": 2,";
  text.replace(text.find(key), key.size(), key + R"( "host_cpu": {"vendor": ")" + vendor + R"(", "source": "test"},)");
  return text;
}

}  // namespace

TEST_SUITE("topology.host_cpu") {
  TEST_CASE("the shipped files state their hosts as the vendors' datasheets do") {
    for (const char* amd : {"dgx-a100.json", "p5-48xlarge.json", "alcf-polaris.json"}) {
      CAPTURE(amd);
      CHECK(load_topology(shipped(amd)).host_cpu() == HostCpu::kAmd);
    }
    for (const char* intel : {"dgx-h100.json", "p4d-24xlarge.json"}) {
      CAPTURE(intel);
      CHECK(load_topology(shipped(intel)).host_cpu() == HostCpu::kIntel);
    }
    CHECK(load_topology(shipped("gb200-nvl72.json")).host_cpu() == HostCpu::kArm);
    // The seed's idealised machine has no host to speak of.
    CHECK_FALSE(load_topology(shipped("flat-400gbps.json")).host_cpu().has_value());
  }

  TEST_CASE("each vendor reads back as itself, and a file without the block states none") {
    for (const char* vendor : {"intel", "amd", "arm"}) {
      CAPTURE(vendor);
      const auto cpu = load_topology(scratch_file("host_cpu.json", cluster_with_host(vendor))).host_cpu();
      REQUIRE(cpu.has_value());
      CHECK(to_string(*cpu) == vendor);
    }
    CHECK_FALSE(load_topology(scratch_file("no_host_cpu.json", two_node_cluster(""))).host_cpu().has_value());
  }
}

}  // namespace host_cpu_test
