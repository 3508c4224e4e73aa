// The compact cluster description (a node template times a node count, plus the fabric between
// nodes) and its expansion into the explicit graph of GPUs, NICs, switches and links.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stepcast/core/units.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// How the GPUs of one node reach each other.
enum class IntraKind {
  kNvSwitch,  ///< every GPU links to one NVSwitch vertex of the node
  kPcie,      ///< every GPU links to one PCIe switch vertex of the node
};

/// How nodes are joined.
enum class FabricKind {
  kSingleSwitch,   ///< every NIC links to one switch
  kFatTree,        ///< NICs link to leaf switches (nodes_per_leaf nodes each); leaves to a spine
  kRailOptimized,  ///< NIC j of every node links to rail switch j; rail switches to a spine
};

/// One cluster in the compact form. Bandwidths are each way; latencies are per link (a route
/// sums the latencies of the links it crosses).
struct ClusterSpec {
  std::string name;
  std::string source;
  GpuSpec gpu;
  int gpus_per_node = 1;
  IntraKind intra_kind = IntraKind::kNvSwitch;
  BytesPerSecond intra_bandwidth_per_gpu;  ///< each GPU's link to the node's switch, each way
  Seconds intra_latency;                   ///< latency of each such link
  int nics_per_node = 1;
  BytesPerSecond nic_bandwidth;  ///< each NIC's link to the fabric, each way
  Seconds nic_latency;           ///< latency of each NIC's link to its first switch
  /// Each GPU-NIC link; when absent the link carries the NIC's bandwidth and no latency of its
  /// own (the NIC latency then stands for the whole host side).
  std::optional<BytesPerSecond> gpu_nic_bandwidth;
  std::optional<Seconds> gpu_nic_latency;
  int nodes = 1;
  FabricKind fabric = FabricKind::kSingleSwitch;
  int nodes_per_leaf = 1;                  ///< fat-tree only
  double oversubscription = 1.0;           ///< fat-tree only: a leaf's downlink over uplink capacity, >= 1
  Seconds switch_latency;                  ///< fat-tree and rail-optimized: each switch-to-switch link
  std::optional<CollNet> collnet;          ///< the fabric's in-network reduction, where the file states one
  std::optional<NetworkTerms> network;     ///< the NICs' technology and its terms, where the file names one
  std::optional<GpuNicPath> gpu_nic_path;  ///< a GPU's path to its nearest NIC, where the file states it
  std::optional<HostCpu> host_cpu;         ///< the nodes' host CPU, where the file states it
  std::optional<HostLink> host_link;       ///< each GPU's link to host memory, where the file states one
  /// A scale-up (NVLink) domain that spans several nodes (GB200 NVL72: 18 trays of 4 GPUs on one
  /// NVLink switch system): 0 when each node is its own domain. Otherwise the node template is
  /// one tray of gpus_per_tray GPUs, and the expansion treats every domain as one node of the graph
  /// (one switch vertex joining its GPUs at intra_bandwidth_per_gpu, the NICs of all its trays), as
  /// NCCL treats a multi-node NVLink domain as one node. Set by the loader from "scale_up".
  int gpus_per_tray = 0;
  /// Trays of a whole domain (18 in an NVL72 rack) when gpus_per_node keeps only some of them
  /// (--gpus-per-domain 64: 16 trays); 0 when every tray is kept. --nodes counts whole domains' trays.
  int domain_trays = 0;
};

/// Expands `spec` into vertices and links and builds the Topology. Vertex order: node by node
/// (GPUs, the intra-node switch, NICs), then the fabric switches; links in the same order. GPU i
/// of a node uses NIC i*nics/gpus when NICs are fewer than GPUs (p4d: GPUs 0 and 1 share NIC 0),
/// and NICs [i*nics/gpus, (i+1)*nics/gpus) when they are at least as many (p5: 4 NICs each).
/// Preconditions (checked by the loader): counts >= 1, bandwidths > 0, latencies >= 0.
Topology make_cluster(const ClusterSpec& spec);

std::string_view to_string(IntraKind kind);
std::string_view to_string(FabricKind kind);

}  // namespace stepcast::topology
