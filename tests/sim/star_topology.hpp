// Shared by the sim tests: the hand-drawn graph their derivations assume.
#pragma once

#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim::test {

/// n GPUs on one switch, one link each of `bw` (each way) and `latency`, so a route crosses two
/// links. By default each GPU is alone in its node (NIC links: the seed's flat machine);
/// `one_node` puts them all in node 0 behind an NVSwitch (intra-node links).
inline topology::Topology star_topology(int n, BytesPerSecond bw, Seconds latency = Seconds(0.0),
                                        bool one_node = false) {
  using topology::LinkTier;
  using topology::VertexKind;
  std::vector<topology::Vertex> v;
  std::vector<topology::Link> l;
  const auto sw = static_cast<topology::VertexId>(n);
  for (int i = 0; i < n; ++i) {
    v.push_back({"gpu" + std::to_string(i), VertexKind::kGpu, one_node ? 0 : i});
    l.push_back(
        {static_cast<topology::VertexId>(i), sw, bw, latency, one_node ? LinkTier::kIntraNode : LinkTier::kNic});
  }
  v.push_back({"switch", VertexKind::kSwitch, one_node ? 0 : -1});
  return topology::Topology("star", "hand-drawn test graph", topology::GpuSpec{}, v, l, 1.0);
}

}  // namespace stepcast::sim::test
