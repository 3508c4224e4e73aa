// A topology file with several mistakes reports all of them at once (STYLE.md: validation
// collects every problem, up to 20), each with its JSON pointer.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace collected_problems_test {

using namespace stepcast;
using stepcast::topology::test::error_of;
using stepcast::topology::test::scratch_file;

TEST_SUITE("topology.collected_problems") {
  TEST_CASE("a cluster file with three mistakes in three sections lists the three") {
    const auto f = scratch_file("three_mistakes.json", R"({
      "form": "cluster", "name": "t", "source": "test",
      "gpu": {"name": "x", "memory": "40", "memory_bandwidth": "1 GB/s", "sm_count": 1,
              "peak": {"fp32": "1 TFLOP/s", "tf32": "1 TFLOP/s", "bf16": "1 TFLOP/s", "fp16": "1 TFLOP/s"},
              "source": "test"},
      "node": {"gpus_per_node": 8,
               "intra": {"kind": "nvswitch", "bandwidth_per_gpu": "300 GB/s", "latency": "1 us", "source": "t"},
               "nics": {"count": 4, "bandwidth": "400 Gbps", "latency": "-2 us", "source": "t"}},
      "nodes": 2,
      "fabric": {"kind": "fat-tree", "nodes_per_leaf": 2, "oversubscription": 0.5, "switch_latency": "1 us",
                 "source": "t"}})");
    const std::string text = error_of([&] { (void)topology::load_topology(f); });
    CHECK(text.rfind("3 problems:", 0) == 0);
    CHECK(text.find(f.string() + ":/gpu/memory: ") != std::string::npos);
    CHECK(text.find(f.string() + ":/node/nics/latency: a latency must not be negative, got \"-2 us\"") !=
          std::string::npos);
    CHECK(text.find(f.string() + ":/fabric/oversubscription: an oversubscription ratio") != std::string::npos);
  }

  TEST_CASE("25 links to unknown vertices: 20 are listed and the other 5 counted") {
    std::string links;
    for (int i = 0; i < 25; ++i) {
      links += std::string(i ? "," : "") + R"({"a": "g0", "b": "nowhere)" + std::to_string(i) +
               R"(", "bandwidth": "1 GB/s", "latency": "1 us"})";
    }
    const auto f = scratch_file("many_mistakes.json", R"({"form": "graph", "name": "t", "source": "test",
      "gpu": {"name": "x", "memory": "1 GiB", "memory_bandwidth": "1 GB/s", "sm_count": 1,
              "peak": {"fp32": "1 TFLOP/s", "tf32": "1 TFLOP/s", "bf16": "1 TFLOP/s", "fp16": "1 TFLOP/s"},
              "source": "test"},
      "vertices": [{"name": "g0", "kind": "gpu", "node": 0}], "links": [)" +
                                                          links + "]}");
    const std::string text = error_of([&] { (void)topology::load_topology(f); });
    CHECK(text.rfind("25 problems:", 0) == 0);
    CHECK(text.find("/links/19/b: link to unknown vertex \"nowhere19\"") != std::string::npos);
    CHECK(text.find("/links/20/b") == std::string::npos);
    CHECK(text.find("... and 5 more") != std::string::npos);
  }

  TEST_CASE("one mistake reads as before: file, pointer and rule on one line") {
    const auto f = scratch_file("one_mistake.json", R"({"form": "graph", "name": "t", "source": "",
      "gpu": {"name": "x", "memory": "1 GiB", "memory_bandwidth": "1 GB/s", "sm_count": 1,
              "peak": {"fp32": "1 TFLOP/s", "tf32": "1 TFLOP/s", "bf16": "1 TFLOP/s", "fp16": "1 TFLOP/s"},
              "source": "test"},
      "vertices": [{"name": "g0", "kind": "gpu", "node": 0}], "links": []})");
    CHECK(error_of([&] { (void)topology::load_topology(f); }) ==
          f.string() + ":/source: must say where the figures come from, got an empty string");
  }
}

}  // namespace collected_problems_test
