// What NCCL learns of the hardware before it tunes, derived from a stepcast topology: the GPU
// generation (the compute capability its GPU file states), NVLink or PCIe inside a node, and
// the channels of NCCL's ring/tree and NVLS graphs. The channel search is a sketch of NVIDIA/nccl
// src/graph/search.cc (ncclTopoCompute, as the 2026 tree of NCCL 2.29 has it): the same speeds,
// duplication and stopping rules, with links reduced to three
// budgets: a GPU's NVLink (or PCIe) total, each NIC, and NVLS's heads; the communicator's channels
// follow src/graph/connect.cc (ncclTopoPostset).
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <functional>
#include <span>
#include <string>

#include "nccl_collnet.hpp"
#include "nccl_search.hpp"
#include "nccl_tuning_tables.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::cost {
namespace {

namespace t = nccl_tables;
using nccl_detail::fit;

// NVLink 2, 3 and 4 carry 25 GB/s each way per link (NVIDIA's NVLink pages: V100 6 links,
// A100 12, H100 18 = 150, 300 and 450 GB/s each way); NVLink 5 carries 50 (Blackwell: 18 links,
// 1.8 TB/s total = 900 GB/s each way, NVIDIA's NVLink page). A PCIe Gen3 x16 link carries 15.75 GB/s
// each way (8 GT/s x 16 lanes x 128/130 / 8 bits), which NCCL counts as PCI_BW = 12 GB/s.
constexpr double kNvlinkLineRatePerLink_GBps = 25.0;
constexpr double kNvlink5LineRatePerLink_GBps = 50.0;
constexpr double kPciGen3x16LineRate_GBps = 15.75;
// The fastest PCIe a GPU has (Gen5 x16, ~63 GB/s each way): a faster route inside a node is
// NVLink, whatever the file calls it.
constexpr double kFastestPcie_GBps = 64.0;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<int> nccl_compute_capability(const topology::GpuSpec& gpu) {
  if (gpu.compute_capability > 0) return gpu.compute_capability;
  return std::nullopt;
}

namespace {

// topo.h ncclTopoNVLinkBw: NVLink bandwidth per link as NCCL counts it.
double nccl_nvlink_bw(int cc) {
  if (cc >= 100) return t::kNvlinkBwSm100;
  if (cc >= 90) return t::kNvlinkBwSm90;
  if (cc == 86) return t::kNvlinkBwSm86;
  if (cc >= 80) return t::kNvlinkBwSm80;
  return t::kNvlinkBwSm70;
}

// The switch GPU 0 reaches inside its node, if any: cluster-form files name it "nvswitch" or "pcie".
std::string intra_switch_name(const topology::Topology& topo) {
  const topology::VertexId gpu = topo.gpus().front();
  const int node = topo.vertices()[gpu].node;
  for (const topology::Link& l : topo.links()) {
    if (l.a != gpu && l.b != gpu) continue;
    const topology::Vertex& other = topo.vertices()[l.a == gpu ? l.b : l.a];
    if (other.kind == topology::VertexKind::kSwitch && other.node == node) return lower(other.name);
  }
  return {};
}

struct Graph {
  int channels = 0;
  double speed = 0.0;  // GB/s per channel
};

// ncclTopoCompute in two passes. Pass 1: from the fastest speed a path allows, the speed that
// gives the most channels x speed, trying slower speeds only while they exceed 0.49 of the best;
// then ncclTopoDupChannels; pass 2: raise the speed while the same channels still fit.
// `channels_at(s)` is how many channels of speed s the links carry.
Graph search(std::span<const double> speeds, double max_bw, double enough_bw, int cc,
             const std::function<int(double)>& channels_at) {
  std::size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > max_bw) ++i;
  Graph best;
  for (; i < speeds.size(); ++i) {
    if (best.channels > 0 && !(speeds[i] / best.speed > t::kLowerSpeedMinRatio)) break;
    const int c = channels_at(speeds[i]);
    if (c * speeds[i] > best.channels * best.speed) best = {c, speeds[i]};
    if (best.channels * best.speed >= enough_bw) break;
  }
  if (best.channels == 0) return {1, speeds.back()};  // NCCL falls back to one slow channel
  const bool dup = best.speed >= t::kDupChannelsMinSpeed && !(cc > 80 && best.speed < t::kDupChannelsMinSpeedSm90 &&
                                                              best.channels > t::kDupChannelsMaxChannelsSm90);
  if (dup) {
    const int doubled = std::min(2 * best.channels, t::kMaxChannelsPerGraph);
    const int ways = (doubled + best.channels - 1) / best.channels;  // NCCL's integer ceiling
    best.speed /= static_cast<double>(ways);
    best.channels = doubled;
  }
  std::size_t j = 0;
  while (j + 1 < speeds.size() && speeds[j] > best.speed) ++j;
  while (j > 0 && speeds[j - 1] <= max_bw && channels_at(speeds[j - 1]) >= best.channels) best.speed = speeds[--j];
  return best;
}

void note(Explanation* ex, std::string label, std::string formula, std::string value) {
  if (ex) ex->push_back({std::move(label), std::move(formula), std::move(value)});
}

}  // namespace

NcclHardware nccl_hardware(const topology::Topology& topology) {
  const std::optional<int> cc = nccl_compute_capability(topology.gpu());
  if (!cc) {
    throw InputError(topology.gpu().file, topology.gpu().pointer + "/compute_capability",
                     fmt::format("NCCL's tuning model needs the GPU's compute capability, and the {} block of {} "
                                 "states none: name a GPU of the catalogue (topologies/gpus/) or add "
                                 "\"compute_capability\": \"9.0\"",
                                 topology.gpu().name, topology.name()));
  }
  const std::optional<topology::CollNet>& collnet = topology.collnet();
  return NcclHardware{*cc,
                      topology.gpu().name,
                      intra_switch_name(topology),
                      collnet.has_value(),
                      collnet && collnet->enabled,
                      topology.gpu_nic_path(),
                      topology.host_cpu(),
                      topology.network()};
}

NcclSystem nccl_system(const topology::Topology& topology, const topology::CommTiers& tiers, bool explain) {
  return nccl_system(nccl_hardware(topology), tiers, explain);
}

namespace {

// A GPU's links inside its node as NCCL counts them: whole NVLinks at NCCL's per-link figure, or
// PCIe scaled as NCCL scales Gen3 x16. Sets whether they are NVLink (through an NVSwitch) and
// returns their total in GB/s.
double intra_node_links(NcclSystem& s, const NcclHardware& hardware, const topology::CommTiers& tiers,
                        Explanation* derivation) {
  const std::string& sw = hardware.intra_switch;
  const double intra_GBps = tiers.intra_bw.value() / unit::kGiga;
  s.nvlink = sw.find("nvswitch") != std::string::npos || sw.find("nvlink") != std::string::npos ||
             (sw.find("pcie") == std::string::npos && intra_GBps > kFastestPcie_GBps);
  s.nvswitch = s.nvlink && !sw.empty();
  // A GPU's links as NCCL counts them: whole NVLinks at NCCL's per-link figure, or PCIe scaled
  // as NCCL scales Gen3 x16.
  double gpu_total = 0.0;
  if (s.nvlink) {
    const double per_link = s.compute_capability >= 100 ? kNvlink5LineRatePerLink_GBps : kNvlinkLineRatePerLink_GBps;
    const double links = std::max(1.0, std::round(intra_GBps / per_link));
    gpu_total = links * nccl_nvlink_bw(s.compute_capability);
    s.gpu_links = static_cast<int>(links);
    if (derivation)
      note(derivation, "intra-node links",
           fmt::format("NVLink{}: round({} GB/s / {} GB/s per link) x {} GB/s (NCCL per link)",
                       s.nvswitch ? " via NVSwitch" : "", intra_GBps, per_link, nccl_nvlink_bw(s.compute_capability)),
           fmt::format("{:.4g} GB/s per GPU", gpu_total));
  } else {
    gpu_total = intra_GBps * t::kPciGen3x16Bw / kPciGen3x16LineRate_GBps;
    if (derivation)
      note(derivation, "intra-node links",
           fmt::format("PCIe: {} GB/s x {} / {} (NCCL's PCI_BW over a Gen3 x16 line rate)", intra_GBps,
                       t::kPciGen3x16Bw, kPciGen3x16LineRate_GBps),
           fmt::format("{:.4g} GB/s per GPU", gpu_total));
  }

  return gpu_total;
}

// The path from a GPU to its NIC as NCCL's graph search finds it across nodes (typeInter). Over one
// PCIe switch or a chain of them (PIX, PXB) NCCL keeps LL128; through the CPU (PHB, NODE, SYS) it
// turns LL128 off (tuning.cc: typeInter <= PATH_PXB, or PATH_PXN from Hopper on, which still lies
// below PATH_PHB). On one node NCCL trims the NICs from its graph, so the path does not matter.
void nic_path(NcclSystem& s, const NcclHardware& hardware, Explanation* derivation) {
  using topology::GpuNicPath;
  const GpuNicPath path = hardware.gpu_nic_path.value_or(GpuNicPath::kPxb);
  s.nic_behind_pcie_switch = topology::through_pcie_switches(path);
  if (derivation && s.nodes > 1)
    note(derivation, "GPU to NIC path",
         hardware.gpu_nic_path ? "as the topology states it (nics/gpu_path)"
                               : "not stated: a PCIe switch, as the cluster form wires each NIC",
         std::string(to_string(path)));
}

// The host CPU NCCL detects: it matters across nodes only (the ring's network post overhead, the
// LL caps, NVLS-Tree's correction on Blackwell), where an unstated one is taken as Intel.
void host_cpu(NcclSystem& s, const NcclHardware& hardware, Explanation* derivation) {
  s.host_cpu = hardware.host_cpu.value_or(topology::HostCpu::kIntel);
  if (derivation && s.nodes > 1)
    note(derivation, "host CPU",
         hardware.host_cpu ? "as the topology states it (node/host_cpu)" : "not stated: Intel, NCCL's first row",
         std::string(to_string(hardware.host_cpu.value_or(topology::HostCpu::kIntel))));
}

// The ring and tree graph: channels x speed through a GPU's links on one node, through the NICs the
// group reaches across nodes.
void ring_tree_graph(NcclSystem& s, const topology::CommTiers& tiers, double gpu_total, Explanation* derivation) {
  if (s.nodes == 1) {
    const Graph g = search(nccl_detail::intra_speeds(s.compute_capability), gpu_total, gpu_total, s.compute_capability,
                           [&](double speed) { return std::min(t::kMaxChannelsPerGraph, fit(gpu_total, speed)); });
    s.channels = g.channels;
    s.channel_bw = gbyte_per_s(g.speed);
    if (derivation)
      note(derivation, "ring/tree graph", "channels x speed that fit a GPU's links (search.cc sketch)",
           fmt::format("{} x {:.4g} GB/s", g.channels, g.speed));
  } else {
    // The NICs the group's GPUs reach (GPU i on NIC i on a DGX: a group with one GPU per node
    // sees one NIC), as NCCL's search only uses NICs close to the communicator's GPUs.
    const int nics = std::max(1, tiers.nics);
    const double nic = tiers.group_nic_bw.value() / unit::kGiga / nics;
    const bool intra_limits = s.ranks_per_node > 1;
    const double enough = intra_limits ? std::min(gpu_total, nics * nic) : nics * nic;
    const Graph g =
        search(nccl_detail::inter_speeds(s.compute_capability), nic, enough, s.compute_capability, [&](double speed) {
          int c = std::min(t::kMaxChannelsPerGraph, nics * fit(nic, speed));
          if (intra_limits) c = std::min(c, fit(gpu_total, speed));
          return c;
        });
    s.channels = g.channels;
    s.channel_bw = gbyte_per_s(g.speed);
    if (derivation)
      note(derivation, "ring/tree graph",
           fmt::format("channels x speed through {} NIC(s) of {:.4g} GB/s{}", nics, nic,
                       intra_limits ? " and a GPU's links" : ""),
           fmt::format("{} x {:.4g} GB/s", g.channels, g.speed));
  }
}

// NVLS: one channel per head GPU (across nodes, a GPU with its own NIC), at most
// NCCL_MAX_NVLS_ARITY of them, each loading every GPU's NVSwitch link once and its head's twice
// (ncclTopoSearchTryNvls), so a speed fits when (heads + 1) x speed fits a GPU's links: bwIntra.
// NVLS graphs are not duplicated; pass 2 raises bwInter, the heads' own traffic (to their NIC
// across nodes), while it stays below twice bwIntra.
void nvls_graph(NcclSystem& s, const topology::CommTiers& tiers, double gpu_total, Explanation* derivation) {
  if (s.compute_capability < 90 || !s.nvswitch) return;
  const bool across = s.nodes > 1;
  const int heads =
      std::min(t::kMaxNvlsArity, across ? std::min(s.ranks_per_node, std::max(1, tiers.nics)) : s.ranks_per_node);
  const std::span<const double> speeds =
      across ? nccl_detail::inter_speeds(s.compute_capability) : nccl_detail::intra_speeds(s.compute_capability);
  const double nic = across ? tiers.group_nic_bw.value() / unit::kGiga / std::max(1, tiers.nics) : 0.0;
  const auto fits_intra = [&](double v) { return fit(gpu_total, v * (heads + 1)) >= 1 && (!across || v <= nic); };
  const auto intra = std::find_if(speeds.begin(), speeds.end(), fits_intra);
  if (intra != speeds.end()) {
    s.nvls_channels = heads;
    s.nvls_channel_bw = gbyte_per_s(*intra);
    const auto fits_inter = [&](double v) {
      return v < t::kNvlsInterMaxRatio * *intra + 1e-9 && (!across || v <= nic);
    };
    s.nvls_inter_bw = gbyte_per_s(*std::find_if(speeds.begin(), intra + 1, fits_inter));
  }
  if (derivation)
    note(derivation, "NVLS graph",
         fmt::format("one channel per head GPU (at most {}), bwIntra the fastest speed with ({} + 1) x speed <= "
                     "{:.4g} GB/s{}; "
                     "bwInter raised up to twice bwIntra{}",
                     t::kMaxNvlsArity, heads, gpu_total,
                     across ? fmt::format(" and <= the NIC's {:.4g}", nic) : std::string(),
                     across ? " within the NIC" : ""),
         fmt::format("{} x {:.4g} GB/s (bwInter {:.4g})", s.nvls_channels, s.nvls_channel_bw.value() / unit::kGiga,
                     s.nvls_inter_bw.value() / unit::kGiga));
}

// connect.cc ncclTopoPostset (0f900e1b): twice the graph's channels; with CollNet on, half as
// many again where the CollNet Chain graph is faster inside a node than to the network (more
// than one GPU per node); twice again on Hopper+ across nodes while the ring's speed exceeds
// 45 GB/s and fewer than 16 run.
void communicator_channels(NcclSystem& s, Explanation* derivation) {
  s.comm_channels = std::min(t::kMaxChannels, 2 * s.channels);
  const bool collnet_more = s.collnet && s.collnet_chain.bw_intra > s.collnet_chain.bw_inter && s.ranks > s.nodes;
  if (collnet_more) s.comm_channels = std::min(t::kMaxChannels, s.comm_channels + s.comm_channels / 2);
  if (s.compute_capability >= 90 && s.nodes > 1 && s.channel_bw.value() / unit::kGiga > t::kMoreChannelsMinSpeedSm90 &&
      s.comm_channels < t::kMoreChannelsBelow)
    s.comm_channels *= 2;
  if (derivation)
    note(derivation, "communicator channels",
         fmt::format("the graph's twice over (connect.cc){}, x2 on Hopper+ above 45 GB/s",
                     collnet_more ? ", x1.5 for CollNet Chain" : ""),
         fmt::format("{}", s.comm_channels));
}

}  // namespace

NcclSystem nccl_system(const NcclHardware& hardware, const topology::CommTiers& tiers, bool explain) {
  NcclSystem s;
  s.compute_capability = hardware.compute_capability;
  // Formatting the derivation costs more than deriving; the step model skips it.
  Explanation* derivation = explain ? &s.derivation : nullptr;
  s.ranks = tiers.ranks;
  s.nodes = tiers.nodes;
  s.ranks_per_node = tiers.ranks_per_node;
  if (derivation)
    note(derivation, "GPU generation", fmt::format("compute capability of \"{}\" (its GPU file)", hardware.gpu_name),
         fmt::format("{}.{}", s.compute_capability / 10, s.compute_capability % 10));
  const double gpu_total = intra_node_links(s, hardware, tiers, derivation);
  s.gpu_bw = gbyte_per_s(gpu_total);
  s.gpu_nic_bw = tiers.gpu_nic_bw;
  s.nics_per_gpu = std::max(1, tiers.nics / std::max(1, tiers.ranks_per_node));
  nic_path(s, hardware, derivation);
  host_cpu(s, hardware, derivation);
  ring_tree_graph(s, tiers, gpu_total, derivation);
  nvls_graph(s, tiers, gpu_total, derivation);
  nccl_detail::derive_collnet(s, hardware, tiers, gpu_total, derivation);
  communicator_channels(s, derivation);
  return s;
}

}  // namespace stepcast::cost
