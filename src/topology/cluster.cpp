// Expansion of the compact cluster form into the explicit graph: vertices node by node, then the
// fabric switches, with links tagged by tier.
#include "stepcast/topology/cluster.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <utility>
#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast::topology {
namespace {

class Builder {
 public:
  VertexId vertex(std::string name, VertexKind kind, int node) {
    vertices_.push_back(Vertex{std::move(name), kind, node});
    return static_cast<VertexId>(vertices_.size() - 1);
  }
  void link(VertexId a, VertexId b, BytesPerSecond bandwidth, Seconds latency, LinkTier tier) {
    links_.push_back(Link{a, b, bandwidth, latency, tier});
  }
  std::vector<Vertex> take_vertices() { return std::move(vertices_); }
  std::vector<Link> take_links() { return std::move(links_); }

 private:
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
};

// The NICs GPU `gpu` of a node uses: one shared NIC when NICs are fewer than GPUs, else its own
// contiguous block (AWS and NVIDIA pair GPU i with the NIC on its PCIe switch).
std::pair<int, int> nic_range(int gpu, int gpus, int nics) {
  if (nics < gpus) {
    const int nic = gpu * nics / gpus;
    return {nic, nic + 1};
  }
  return {gpu * nics / gpus, (gpu + 1) * nics / gpus};
}

}  // namespace

Topology make_cluster(const ClusterSpec& spec) {
  STEPCAST_ASSERT(spec.gpus_per_node >= 1 && spec.nics_per_node >= 1 && spec.nodes >= 1, "the loader checks counts");
  STEPCAST_ASSERT(spec.fabric != FabricKind::kFatTree || (spec.nodes_per_leaf >= 1 && spec.oversubscription >= 1.0),
                  "the loader checks fat-tree parameters");
  Builder b;
  const BytesPerSecond gpu_nic_bw = spec.gpu_nic_bandwidth.value_or(spec.nic_bandwidth);
  const Seconds gpu_nic_latency = spec.gpu_nic_latency.value_or(Seconds{});
  const std::string_view intra_name = spec.intra_kind == IntraKind::kNvSwitch ? "nvswitch" : "pcie";
  // Inside a scale-up domain GPUs and NICs are named by the tray that holds them.
  const auto part_name = [&](int n, int index, int per_tray, std::string_view what) {
    if (spec.gpus_per_tray == 0) return fmt::format("n{}/{}{}", n, what, index);
    return fmt::format("n{}/tray{}/{}{}", n, index / per_tray, what, index % per_tray);
  };
  const int trays = spec.gpus_per_tray > 0 ? spec.gpus_per_node / spec.gpus_per_tray : 1;
  STEPCAST_ASSERT(
      spec.gpus_per_tray == 0 || (spec.gpus_per_node % spec.gpus_per_tray == 0 && spec.nics_per_node % trays == 0),
      "the loader checks that a scale-up domain holds whole trays");

  // NIC vertices per node, kept to wire the fabric afterwards.
  std::vector<std::vector<VertexId>> nics(static_cast<std::size_t>(spec.nodes));
  for (int n = 0; n < spec.nodes; ++n) {
    std::vector<VertexId> gpus;
    for (int g = 0; g < spec.gpus_per_node; ++g)
      gpus.push_back(b.vertex(part_name(n, g, spec.gpus_per_node / trays, "gpu"), VertexKind::kGpu, n));
    const VertexId intra = b.vertex(fmt::format("n{}/{}", n, intra_name), VertexKind::kSwitch, n);
    auto& node_nics = nics[static_cast<std::size_t>(n)];
    for (int j = 0; j < spec.nics_per_node; ++j)
      node_nics.push_back(b.vertex(part_name(n, j, spec.nics_per_node / trays, "nic"), VertexKind::kNic, n));
    // A lone GPU still gets its switch link, so a node's shape does not depend on its GPU count.
    for (const VertexId g : gpus)
      b.link(g, intra, spec.intra_bandwidth_per_gpu, spec.intra_latency, LinkTier::kIntraNode);
    for (int g = 0; g < spec.gpus_per_node; ++g) {
      const auto [first, last] = nic_range(g, spec.gpus_per_node, spec.nics_per_node);
      for (int j = first; j < last; ++j) {
        b.link(gpus[static_cast<std::size_t>(g)], node_nics[static_cast<std::size_t>(j)], gpu_nic_bw, gpu_nic_latency,
               LinkTier::kIntraNode);
      }
    }
  }

  double oversubscription = 1.0;
  switch (spec.fabric) {
    case FabricKind::kSingleSwitch: {
      const VertexId sw = b.vertex("switch", VertexKind::kSwitch, -1);
      for (const auto& node_nics : nics) {
        for (const VertexId nic : node_nics) b.link(nic, sw, spec.nic_bandwidth, spec.nic_latency, LinkTier::kNic);
      }
      break;
    }
    case FabricKind::kFatTree: {
      const int leaves = (spec.nodes + spec.nodes_per_leaf - 1) / spec.nodes_per_leaf;
      std::vector<VertexId> leaf_ids;
      for (int l = 0; l < leaves; ++l) leaf_ids.push_back(b.vertex(fmt::format("leaf{}", l), VertexKind::kSwitch, -1));
      for (int n = 0; n < spec.nodes; ++n) {
        const VertexId leaf = leaf_ids[static_cast<std::size_t>(n / spec.nodes_per_leaf)];
        for (const VertexId nic : nics[static_cast<std::size_t>(n)])
          b.link(nic, leaf, spec.nic_bandwidth, spec.nic_latency, LinkTier::kNic);
      }
      if (leaves > 1) {
        // The spine layer is one aggregated switch; each leaf's uplink is its downlink capacity
        // divided by the oversubscription ratio (the definition of a leaf's oversubscription).
        const VertexId spine = b.vertex("spine", VertexKind::kSwitch, -1);
        for (int l = 0; l < leaves; ++l) {
          const int first = l * spec.nodes_per_leaf;
          const int on_leaf = std::min(spec.nodes_per_leaf, spec.nodes - first);
          const BytesPerSecond down = spec.nic_bandwidth * static_cast<double>(on_leaf * spec.nics_per_node);
          b.link(leaf_ids[static_cast<std::size_t>(l)], spine, down / spec.oversubscription, spec.switch_latency,
                 LinkTier::kFabric);
        }
        oversubscription = spec.oversubscription;
      }
      break;
    }
    case FabricKind::kRailOptimized: {
      std::vector<VertexId> rails;
      for (int j = 0; j < spec.nics_per_node; ++j)
        rails.push_back(b.vertex(fmt::format("rail{}", j), VertexKind::kSwitch, -1));
      for (const auto& node_nics : nics) {
        for (std::size_t j = 0; j < node_nics.size(); ++j)
          b.link(node_nics[j], rails[j], spec.nic_bandwidth, spec.nic_latency, LinkTier::kNic);
      }
      if (rails.size() > 1) {
        // Rails are joined by a non-blocking spine (SuperPOD style): each rail's uplink carries
        // as much as all of its downlinks.
        const VertexId spine = b.vertex("spine", VertexKind::kSwitch, -1);
        const BytesPerSecond up = spec.nic_bandwidth * static_cast<double>(spec.nodes);
        for (const VertexId rail : rails) b.link(rail, spine, up, spec.switch_latency, LinkTier::kFabric);
      }
      break;
    }
  }
  Topology topology(spec.name, spec.source, spec.gpu, b.take_vertices(), b.take_links(), oversubscription,
                    spec.domain_trays > 0 ? spec.domain_trays : trays, spec.gpus_per_tray);
  if (spec.collnet) topology.set_collnet(*spec.collnet);
  if (spec.network) topology.set_network(*spec.network);
  if (spec.gpu_nic_path) topology.set_gpu_nic_path(*spec.gpu_nic_path);
  if (spec.host_cpu) topology.set_host_cpu(*spec.host_cpu);
  if (spec.host_link) topology.set_host_link(*spec.host_link);
  return topology;
}

std::string_view to_string(IntraKind kind) {
  switch (kind) {
    case IntraKind::kNvSwitch:
      return "nvswitch";
    case IntraKind::kPcie:
      return "pcie";
  }
  STEPCAST_UNREACHABLE("every IntraKind is named");
}

std::string_view to_string(FabricKind kind) {
  switch (kind) {
    case FabricKind::kSingleSwitch:
      return "single-switch";
    case FabricKind::kFatTree:
      return "fat-tree";
    case FabricKind::kRailOptimized:
      return "rail-optimized";
  }
  STEPCAST_UNREACHABLE("every FabricKind is named");
}

}  // namespace stepcast::topology
