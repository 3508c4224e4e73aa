// A cluster's "nics"/"gpu_path": the PCIe path from a GPU to its nearest NIC in the legend of
// nvidia-smi topo -m, which NCCL's graph search reads; read as written, absent where the file
// states none, and a name outside that legend refused naming the five it takes.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace gpu_nic_path_test {

using stepcast::topology::GpuNicPath;
using stepcast::topology::load_topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::scratch_file;
using stepcast::topology::test::shipped;
using stepcast::topology::test::two_node_cluster;

TEST_SUITE("topology.gpu_nic_path") {
  TEST_CASE("Polaris states PHB, as ALCF's device affinity table prints it, DGX files state none") {
    CHECK(load_topology(shipped("alcf-polaris.json")).gpu_nic_path() == GpuNicPath::kPhb);
    CHECK_FALSE(load_topology(shipped("dgx-a100.json")).gpu_nic_path().has_value());
  }

  TEST_CASE("each name of nvidia-smi's legend reads back as itself, another is refused") {
    for (const char* name : {"PIX", "PXB", "PHB", "NODE", "SYS"}) {
      CAPTURE(name);
      const stepcast::topology::Topology t = load_topology(
          scratch_file("gpu_path.json", two_node_cluster(std::string("\"gpu_path\": \"") + name + "\", ")));
      REQUIRE(t.gpu_nic_path().has_value());
      CHECK(to_string(*t.gpu_nic_path()) == name);
    }
    CHECK_FALSE(load_topology(scratch_file("no_gpu_path.json", two_node_cluster(""))).gpu_nic_path().has_value());
    CHECK(error_of([] {
            (void)load_topology(scratch_file("gpu_path_pcie.json", two_node_cluster("\"gpu_path\": \"pcie\", ")));
          })
              .find(":/node/nics/gpu_path: unknown GPU-to-NIC path \"pcie\" (expected PIX, PXB, PHB, NODE or SYS, as "
                    "nvidia-smi topo -m prints it)") != std::string::npos);
  }
}

}  // namespace gpu_nic_path_test
