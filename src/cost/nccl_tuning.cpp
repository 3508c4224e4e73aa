// The latency and bandwidth of each NCCL algorithm and protocol as NCCL's cost model computes them,
// the time of one collective as ncclTuningGetTime does, and the fastest enabled candidate as NCCL's
// tuner picks it: NCCL 2.29's model as NVIDIA/nccl states it in src/tuning/ (ring.cc and nvls.cc
// at commit 12df1a11, tree.cc at 1fc949c5, pat.cc at 12df1a11, tuning_general.cc at 147bc25a,
// collnet.cc at 1fc949c5 in nccl_collnet.cpp; the figures are in nccl_tuning_tables.hpp). Each
// rule below names the file it restates.
#include "stepcast/cost/nccl_tuning.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "nccl_collnet.hpp"
#include "nccl_formula.hpp"
#include "nccl_tuning_tables.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/numeric.hpp"

namespace stepcast::cost {
namespace {

namespace t = nccl_tables;
using nccl_detail::Formula;
using nccl_detail::Term;

std::size_t at(NcclProtocol p) { return static_cast<std::size_t>(p); }
// tuning_general.cc ncclTuningGetCompCapIndex: Volta, Ampere, Hopper, Blackwell.
std::size_t generation_row(int cc) { return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0; }
std::size_t nodes_column(int nodes) { return nodes <= 2 ? static_cast<std::size_t>(nodes - 1) : 2; }

// NCCL's log2i: floor(log2 n), 0 for n <= 1.
int log2i(std::uint64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

bool is_reduce_scatter_or_all_gather(CollectiveOp op) {
  return op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
}

bool is_nvls(NcclAlgorithm a) { return a == NcclAlgorithm::kNvls || a == NcclAlgorithm::kNvlsTree; }
bool simple_only(NcclAlgorithm a) { return nccl_detail::is_collnet(a) || is_nvls(a) || a == NcclAlgorithm::kPat; }

std::string_view display_name(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return "tree";
    case NcclAlgorithm::kRing:
      return "ring";
    case NcclAlgorithm::kCollNetDirect:
      return "CollNet Direct";
    case NcclAlgorithm::kCollNetChain:
      return "CollNet Chain";
    case NcclAlgorithm::kNvls:
      return "NVLS";
    case NcclAlgorithm::kNvlsTree:
      return "NVLS-Tree";
    case NcclAlgorithm::kPat:
      return "PAT";
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

// Why NCCL has no such candidate for `op`, or empty.
std::string missing_for_op(CollectiveOp op, NcclAlgorithm a) {
  if (nccl_runs(op, a)) return {};
  return fmt::format("NCCL has no {} {}", display_name(a), to_string(op));
}

// tuning_general.cc ncclTuningGetNsteps.
int ring_steps(CollectiveOp op, int ranks) {
  if (op == CollectiveOp::kAllReduce) return 2 * (ranks - 1);
  return is_reduce_scatter_or_all_gather(op) ? ranks - 1 : ranks;
}
// ring.cc nInterSteps: the steps that cross nodes, 2 (nNodes - 1) for all-reduce, else nNodes - 1.
int ring_inter_steps(CollectiveOp op, int nodes) {
  if (nodes == 1) return 0;
  return op == CollectiveOp::kAllReduce ? 2 * (nodes - 1) : nodes - 1;
}

// ring.cc getNetOverhead: the proxy's cost of posting one network operation on the host CPU, x3 for
// Simple.
double net_overhead_us(const NcclSystem& s, NcclProtocol p) {
  const double post = s.host_cpu == topology::HostCpu::kAmd ? t::kNetOverheadAmd_us : t::kNetOverheadOther_us;
  return p == NcclProtocol::kSimple ? post * t::kNetOverheadSimpleFactor : post;
}

// llMaxBws' row (tuning_general.cc ncclTuningGetConstantsIndexes): the GPU generation's on one
// node, the host CPU's across nodes.
std::size_t ll_max_row(const NcclSystem& s) {
  if (s.nodes == 1) return generation_row(s.compute_capability);
  return s.host_cpu == topology::HostCpu::kAmd ? t::kLlMaxBwAmdRow : t::kLlMaxBwIntelRow;
}

const t::PerProtocol& base_latency(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return t::kTreeBaseLatency_us;
    case NcclAlgorithm::kRing:
      return t::kRingBaseLatency_us;
    case NcclAlgorithm::kCollNetDirect:
      return t::kCollNetDirectBaseLatency_us;
    case NcclAlgorithm::kCollNetChain:
      return t::kCollNetChainBaseLatency_us;
    case NcclAlgorithm::kNvls:
      return t::kNvlsBaseLatency_us;
    case NcclAlgorithm::kNvlsTree:
      return t::kNvlsTreeBaseLatency_us;
    case NcclAlgorithm::kPat:
      return t::kPatBaseLatency_us;
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

// hwLat of the links inside a node: NVLink when the graph's intra type is NVLink, else PCI
// (tuning_general.cc ncclTuningGetHwIndexes; NVLS and NVLS-Tree exist on NVLink only).
const t::PerProtocol& intra_latency(NcclAlgorithm a, bool nvlink) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return nvlink ? t::kTreeNvlinkLatency_us : t::kTreePciLatency_us;
    case NcclAlgorithm::kRing:
      return nvlink ? t::kRingNvlinkLatency_us : t::kRingPciLatency_us;
    case NcclAlgorithm::kCollNetDirect:
      return nvlink ? t::kCollNetDirectNvlinkLatency_us : t::kCollNetDirectPciLatency_us;
    case NcclAlgorithm::kCollNetChain:
      return nvlink ? t::kCollNetChainNvlinkLatency_us : t::kCollNetChainPciLatency_us;
    case NcclAlgorithm::kNvls:
      return t::kNvlsNvlinkLatency_us;
    case NcclAlgorithm::kNvlsTree:
      return t::kNvlsTreeNvlinkLatency_us;
    case NcclAlgorithm::kPat:
      return nvlink ? t::kPatNvlinkLatency_us : t::kPatPciLatency_us;
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

const t::PerProtocol& net_latency(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kTree:
      return t::kTreeNetLatency_us;
    case NcclAlgorithm::kRing:
      return t::kRingNetLatency_us;
    case NcclAlgorithm::kCollNetDirect:
      return t::kCollNetDirectNetLatency_us;
    case NcclAlgorithm::kCollNetChain:
      return t::kCollNetChainNetLatency_us;
    case NcclAlgorithm::kNvls:
      return t::kNvlsNetLatency_us;
    case NcclAlgorithm::kNvlsTree:
      return t::kNvlsTreeNetLatency_us;
    case NcclAlgorithm::kPat:
      return t::kPatNetLatency_us;
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

// generalLatencies[coll][a][p]. The network plugin's own latency (graph->latencyInter) is taken
// as 0, as NCCL's InfiniBand transport reports it; a one-GPU node's intra type is LOC, priced as PCI.
Term latency_us(CollectiveOp op, NcclAlgorithm a, NcclProtocol p, const NcclSystem& s, bool explain) {
  Formula f(explain);
  const double base = base_latency(a)[at(p)];
  const bool nvlink = s.nvlink && s.ranks_per_node > 1;
  double intra = intra_latency(a, nvlink)[at(p)];
  const double inter = net_latency(a)[at(p)];
  const int per_node = s.ranks / s.nodes;
  const int depth = log2i(static_cast<std::uint64_t>(s.nodes));
  switch (a) {
    case NcclAlgorithm::kRing: {
      const int nsteps = ring_steps(op, s.ranks);
      if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
        // stepcast assumes the search kept the same ring in every channel (sameChannels), as it
        // does on NVSwitch nodes: one hop's latency.
        const double hop = s.nodes == 1 ? intra : inter;
        f.set("baseLat {} + hwLat {} (pipelined chain)", base, hop);
        return {base + hop, f.take()};
      }
      const int ninter = ring_inter_steps(op, s.nodes);
      // ring.cc: with one rank per node the inter-node steps are exposed at the tree's network
      // latency; inter-node rings pay the proxy's network-post overhead per step at least (x3 for Simple).
      const double net = s.nodes > 1 && s.ranks_per_node == 1 ? t::kTreeNetLatency_us[at(p)] : inter;
      if (s.nodes > 1) intra = std::max(intra, net_overhead_us(s, p));
      f.set("baseLat {} + ({} - {}) x intra {} + {} x net {}", base, nsteps, ninter, intra, ninter, net);
      return {base + (nsteps - ninter) * intra + ninter * net, f.take()};
    }
    case NcclAlgorithm::kCollNetDirect:
    case NcclAlgorithm::kCollNetChain:
      return nccl_detail::collnet_latency_us(a, s, base, intra, inter, explain);
    case NcclAlgorithm::kTree: {
      // tree.cc: with one node the "network" hop is the intra-node one.
      const double net = s.nodes == 1 ? intra : inter;
      f.set("baseLat {} + 2 x (({} - 1) x intra {} + log2({}) x net {})", base, per_node, intra, s.nodes, net);
      return {base + 2.0 * ((per_node - 1) * intra + depth * net), f.take()};
    }
    case NcclAlgorithm::kNvls: {
      const double v = base + intra + (s.nodes > 1 ? inter : 0.0);
      if (s.nodes > 1) {
        f.set("NVLink {} + net {}", intra, inter);
      } else {
        f.set("NVLink {}", intra);
      }
      return {v, f.take()};
    }
    case NcclAlgorithm::kNvlsTree: {
      // nvls.cc: one NVLS step inside the node, up and down a tree of log2(nNodes) network hops.
      f.set("baseLat {} + NVLink {} + 2 x log2({}) x net {}", base, intra, s.nodes, inter);
      return {base + intra + 2.0 * depth * inter, f.take()};
    }
    case NcclAlgorithm::kPat: {
      // pat.cc: a log part over the nodes and, still, a linear part per rank.
      f.set("baseLat {} + log2({}) x net {} / {} + {} ranks x {}", base, s.nodes, inter, t::kPatNetLatencyDivisor,
            s.ranks, t::kPatPerRankLatency_us);
      return {base + depth * (inter / t::kPatNetLatencyDivisor) + s.ranks * t::kPatPerRankLatency_us, f.take()};
    }
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

// generalBandwidths[coll][a][p]: the graph's bus bandwidth through the model's refinements, then
// converted to algorithm bandwidth. One channel's speed is the same inside and across nodes for
// the ring/tree graph here (the ring search sets both), so bwIntra and bwInter pick the same figure.
Term algbw_GBps(CollectiveOp op, NcclAlgorithm a, NcclProtocol p, const NcclSystem& s, bool explain) {
  if (nccl_detail::is_collnet(a)) return nccl_detail::collnet_algbw_GBps(op, a, s, explain);
  const std::size_t row = generation_row(s.compute_capability);
  const std::size_t col = nodes_column(s.nodes);
  const double ll_max = t::kLlMaxBw[ll_max_row(s)][col];
  Formula f(explain);
  if (is_nvls(a)) {
    // nvls.cc: per channel, the NVSwitch side (bwIntra x nvlsEfficiency x (n-1)/n, twice for
    // all-reduce, which reduces and multicasts; (ppn-1)/ppn of it for all-gather/reduce-scatter),
    // the heads' own traffic (bwInter, twice for NVLS-Tree on two nodes) and, for NVLS-Tree, its
    // per-channel cap.
    const double n = as_double(s.nvls_channels);
    const double bw_intra = s.nvls_channel_bw.value() / unit::kGiga;
    const double bw_inter = s.nvls_inter_bw.value() / unit::kGiga;
    const double efficiency = t::kNvlsEfficiency[row];
    double intra = bw_intra * efficiency * (n - 1.0) / n;
    if (op == CollectiveOp::kAllReduce) {
      intra *= 2.0;
    } else {
      const double ppn = as_double(s.ranks_per_node);
      intra *= (ppn - 1.0) / ppn;
    }
    const bool tree = a == NcclAlgorithm::kNvlsTree;
    const double inter = bw_inter * (tree && s.nodes <= 2 ? 2.0 : 1.0);
    double per_channel = std::min(intra, inter);
    if (tree) per_channel = std::min(per_channel, t::kPerChannelMaxNvlsTreeBw[row][col]);
    double bus = per_channel * n;
    f.set("{} ch x min(NVSwitch {:.4g} x {} x {}/{}{}, heads {:.4g}{})", s.nvls_channels, bw_intra, efficiency,
          s.nvls_channels - 1, s.nvls_channels,
          op == CollectiveOp::kAllReduce ? std::string(" x 2")
                                         : fmt::format(" x {}/{}", s.ranks_per_node - 1, s.ranks_per_node),
          inter, tree ? fmt::format(", NVLS-Tree max {}", t::kPerChannelMaxNvlsTreeBw[row][col]) : std::string());
    if (op == CollectiveOp::kAllReduce) {
      const int nsteps = ring_steps(op, s.ranks);
      bus *= as_double(s.ranks) / as_double(nsteps);
      f.add(" x {:.4g} (bus to algorithm: nRanks/nsteps = {}/{})", as_double(s.ranks) / as_double(nsteps), s.ranks,
            nsteps);
    }
    return {bus, f.take()};
  }
  const int channels = s.channels;
  const double speed = s.channel_bw.value() / unit::kGiga;
  double bus = channels * speed;
  f.set("{} ch x {:.4g}", channels, speed);
  const auto cap = [&](double limit, std::string_view why) {
    if (limit < bus) {
      bus = limit;
      f.add(", capped at {:.4g} ({})", limit, why);
    }
  };
  const auto scale = [&](double k, std::string_view why) {
    bus *= k;
    f.add(" x {:.4g} ({})", k, why);
  };
  if (a == NcclAlgorithm::kRing && p == NcclProtocol::kLL) {
    scale(t::kRingLlFactor, "LL");
    cap(ll_max, "llMaxBw");
  }
  if (a == NcclAlgorithm::kRing && p == NcclProtocol::kLL128) {
    scale(t::kRingLl128Factor, "LL128");
    cap(channels * t::kPerChannelMaxRingLl128Bw[row][col], "per-channel LL128 max");
  }
  if (a == NcclAlgorithm::kTree) {
    // tree.cc; stepcast assumes the search found a balanced or split tree, not the plain
    // NCCL_TOPO_PATTERN_TREE that tree.cc slows by 0.85.
    scale(t::kTreeFactor, "tree");
    cap(channels * t::kPerChannelMaxTreeBw[row][col], "per-channel tree max");
    if (p == NcclProtocol::kLL) {
      scale(t::kTreeLlFactor, "LL");
      cap(ll_max, "llMaxBw");
    }
    if (p == NcclProtocol::kLL128) {
      scale(s.nodes == 1 ? t::kTreeLl128FactorOneNode : t::kTreeLl128FactorMultiNode, "LL128");
      cap(channels * t::kPerChannelMaxTreeLl128Bw[row][col], "per-channel tree LL128 max");
    }
  }
  switch (a) {
    case NcclAlgorithm::kRing: {
      const int nsteps = ring_steps(op, s.ranks);
      bus *= as_double(s.ranks) / as_double(nsteps);
      f.add(" x {:.4g} (bus to algorithm: nRanks/nsteps = {}/{})", as_double(s.ranks) / as_double(nsteps), s.ranks,
            nsteps);
      break;
    }
    case NcclAlgorithm::kTree:
      scale(t::kTreeAlgbwRatio, "bus to algorithm");
      break;
    case NcclAlgorithm::kPat:
      scale(t::kPatFactor, "PAT");
      break;
    case NcclAlgorithm::kCollNetDirect:
    case NcclAlgorithm::kCollNetChain:
    case NcclAlgorithm::kNvls:
    case NcclAlgorithm::kNvlsTree:
      STEPCAST_UNREACHABLE("CollNet and NVLS are priced above");
  }
  return {bus, f.take()};
}

// Why NCCL leaves the candidate out on this system, or empty (the enable rules of the models'
// init and sim functions and of cost_model.cc isLL128Enabled). LL128 is on by default only over
// NVLink (or one GPU per node) from Volta on, and across nodes only where each GPU reaches its NIC
// through PCIe switches (the topology's nics/gpu_path; PXB where it states none).
std::string_view disabled_on_system(CollectiveOp op, NcclAlgorithm a, NcclProtocol p, const NcclSystem& s,
                                    const NcclFilter& filter) {
  if (nccl_detail::is_collnet(a)) return nccl_detail::collnet_disabled(a, s);
  if (is_nvls(a)) {
    if (s.compute_capability < 90 || !s.nvswitch) return "NVLS needs Hopper or later GPUs on an NVSwitch";
    // nvls.cc: NVLS across nodes reduces in the switches through CollNet (collnetEnable and, at run
    // time, collNetSupport); its all-gather and reduce-scatter there need a node's local ranks
    // within collNetHeadsNum.
    if (a == NcclAlgorithm::kNvls && s.nodes > 1) {
      if (const std::string_view off = nccl_detail::collnet_off(s, true); !off.empty()) return off;
      if (op != CollectiveOp::kAllReduce && s.ranks_per_node > s.collnet_heads)
        return "NVLS all-gather and reduce-scatter across nodes need a NIC of its own for every GPU of a node (more "
               "local ranks than collNetHeadsNum)";
    }
    if (a == NcclAlgorithm::kNvlsTree && s.nodes == 1) return "NVLS-Tree runs across nodes only";
    if (s.nvls_channels < 2) return "NVLS needs at least 2 channels";
    if (op != CollectiveOp::kAllReduce && s.ranks_per_node > t::kMaxNvlsArity)
      return "NVLS all-gather and reduce-scatter run with at most 32 GPUs per node (NCCL_MAX_NVLS_ARITY)";
  }
  if (a == NcclAlgorithm::kPat && s.ranks_per_node > 1)
    return "PAT runs with one GPU per node (NCCL prices the multi-GPU-per-node PAT out: opt-in only)";
  if (p == NcclProtocol::kLL128 && filter.protocol != NcclProtocol::kLL128) {
    if (s.compute_capability < 70) return "LL128 is off by default before compute capability 7.0";
    if (!s.nvlink && s.ranks_per_node > 1) return "LL128 is off by default without NVLink";
    if (s.nodes > 1 && !s.nic_behind_pcie_switch)
      return "LL128 is off by default across nodes where a GPU reaches its NIC through the CPU (beyond PXB)";
  }
  return {};
}

bool requested(NcclAlgorithm a, NcclProtocol p, const NcclFilter& filter) {
  return (!filter.algorithm || *filter.algorithm == a) && (!filter.protocol || *filter.protocol == p);
}

std::string not_requested(NcclAlgorithm a, NcclProtocol p, const NcclFilter& filter) {
  if (filter.algorithm && *filter.algorithm != a)
    return fmt::format("not requested (--algorithm {})", to_string(*filter.algorithm));
  if (filter.protocol && *filter.protocol != p)
    return fmt::format("not requested (--protocol {})", to_string(*filter.protocol));
  return {};
}

// ring.cc ncclTuningRingModelSim: the plateau factor on ring/Simple latency, 1 where it does not
// apply. NCCL divides in integers: the bytes per channel (the communicator's) and rank, rounded down.
double ring_plateau(CollectiveOp op, std::uint64_t bytes, const NcclSystem& s) {
  const bool blackwell_nvlink = s.compute_capability >= 100 && s.nvlink && s.ranks_per_node > 1;
  const bool applies =
      (s.nodes > 1 && op == CollectiveOp::kAllReduce) ||
      (s.nodes == 1 && blackwell_nvlink && (op == CollectiveOp::kAllReduce || is_reduce_scatter_or_all_gather(op)));
  const std::uint64_t per_channel_rank = bytes / static_cast<std::uint64_t>(std::max(1, s.comm_channels) * s.ranks);
  if (!applies || static_cast<double>(per_channel_rank) < t::kRingPlateauMinBytesPerChannelRank) return 1.0;
  const double factor = s.compute_capability < 80 ? t::kRingPlateauFactorPreAmpere : t::kRingPlateauFactor;
  if (!(s.nodes == 1 && blackwell_nvlink)) return factor;
  // One Blackwell NVLink domain: a one-step ring has no plateau; each further step keeps
  // plateauDelta / maxPlateauDelta of the distance to the full factor.
  const double max_delta = factor - 1.0;
  const int nsteps = ring_steps(op, s.ranks);
  const double step_scale = 1.0 - std::pow(t::kRingPlateauDelta / max_delta, std::max(0, nsteps - 1));
  double delta = max_delta;
  const auto bprc = static_cast<double>(per_channel_rank);
  if (bprc > t::kRingPlateauShrinkFrom)
    delta -= t::kRingPlateauDelta * std::min(1.0, (bprc - t::kRingPlateauShrinkFrom) / t::kRingPlateauShrinkFrom);
  return 1.0 + step_scale * delta;
}

NcclCandidate price(CollectiveOp op, Bytes size, NcclAlgorithm a, NcclProtocol p, const NcclSystem& s,
                    const NcclTuning& tuning, bool explain) {
  NcclCandidate c;
  c.algorithm = a;
  c.protocol = p;
  Term lat = latency_us(op, a, p, s, explain);
  Term bw = algbw_GBps(op, a, p, s, explain);
  // The per-size corrections of the models' Sim functions: the tree correction (tree.cc; nvls.cc
  // for NVLS-Tree all-reduce on Blackwell with x86 hosts), the ring plateau (ring.cc).
  const auto bytes = static_cast<std::uint64_t>(size.value());
  const int log_size = log2i(bytes >> 6);
  const bool tree_corrected =
      (a == NcclAlgorithm::kTree && log_size < t::kTreeCorrectionSizes) ||
      (a == NcclAlgorithm::kNvlsTree && op == CollectiveOp::kAllReduce && s.compute_capability >= 100 &&
       s.host_cpu != topology::HostCpu::kArm && log_size < t::kNvlsTreeCorrectionSizes);
  if (tree_corrected) {
    const double k = t::kTreeCorrection[at(p)][static_cast<std::size_t>(log_size)];
    bw.value *= k;
    if (explain) bw.formula += fmt::format(" x {:.4g} (tree correction at 2^{} x 64 B)", k, log_size);
  }
  if (a == NcclAlgorithm::kRing && p == NcclProtocol::kSimple) {
    const double k = ring_plateau(op, bytes, s);
    if (k != 1.0) {
      lat.value *= k;
      if (explain) lat.formula = fmt::format("({}) x {:.4g} (ring plateau)", lat.formula, k);
    }
  }
  const NcclProtocolTuning& cal = tuning[at(p)];
  if (cal.latency_factor != 1.0) {
    lat.value *= cal.latency_factor;
    if (explain) lat.formula = fmt::format("({}) x {:.4g} (calibrated)", lat.formula, cal.latency_factor);
  }
  if (cal.bandwidth_efficiency != 1.0) {
    bw.value *= cal.bandwidth_efficiency;
    if (explain) bw.formula += fmt::format(" x {:.4g} (calibrated)", cal.bandwidth_efficiency);
  }
  c.latency = microseconds(lat.value);
  c.algbw = gbyte_per_s(bw.value);
  c.bandwidth_time = size / c.algbw;
  c.time = c.latency + c.bandwidth_time;
  c.latency_formula = std::move(lat.formula);
  c.bandwidth_formula = std::move(bw.formula);
  return c;
}

std::string name_of(const NcclCandidate& c) {
  return fmt::format("{}/{}", to_string(c.algorithm), to_string(c.protocol));
}

// What made the winner faster than the runner-up: its latency, its bandwidth part, or both.
std::string why(const NcclChoice& choice) {
  const NcclCandidate& w = choice.chosen();
  const NcclCandidate* r = nullptr;
  for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
    const NcclCandidate& c = choice.candidates[i];
    if (i != choice.winner && c.enabled() && (!r || c.time < r->time)) r = &c;
  }
  if (!r) return fmt::format("{} is the only candidate left", name_of(w));
  std::string reason;
  if (w.bandwidth_time == r->bandwidth_time) {
    // CollNet Direct and Chain share a bandwidth where the NICs bound both.
    reason = fmt::format("its lower latency ({} against {}) at the same bandwidth part ({})", format_seconds(w.latency),
                         format_seconds(r->latency), format_seconds(w.bandwidth_time));
  } else if (w.latency <= r->latency && w.bandwidth_time <= r->bandwidth_time) {
    reason = fmt::format("both its latency ({} against {}) and its bandwidth part ({} against {}) are smaller",
                         format_seconds(w.latency), format_seconds(r->latency), format_seconds(w.bandwidth_time),
                         format_seconds(r->bandwidth_time));
  } else if (w.latency < r->latency) {
    reason = fmt::format(
        "its lower latency ({} against {}) outweighs its slower bandwidth part ({} against {}) at this size",
        format_seconds(w.latency), format_seconds(r->latency), format_seconds(w.bandwidth_time),
        format_seconds(r->bandwidth_time));
  } else {
    reason = fmt::format("its higher algbw ({} against {}) outweighs its higher latency ({} against {}) at this size",
                         format_bandwidth(w.algbw), format_bandwidth(r->algbw), format_seconds(w.latency),
                         format_seconds(r->latency));
  }
  return fmt::format("{} wins in {} against the runner-up {}'s {}: {}", name_of(w), format_seconds(w.time), name_of(*r),
                     format_seconds(r->time), reason);
}

}  // namespace

bool has_nccl_tuning(CollectiveOp op) { return op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv; }

bool nccl_runs(CollectiveOp op, NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::kRing:
      return has_nccl_tuning(op);
    case NcclAlgorithm::kTree:
    case NcclAlgorithm::kCollNetChain:
    case NcclAlgorithm::kNvlsTree:
      return op == CollectiveOp::kAllReduce;
    case NcclAlgorithm::kCollNetDirect:
    case NcclAlgorithm::kNvls:
      return op == CollectiveOp::kAllReduce || is_reduce_scatter_or_all_gather(op);
    case NcclAlgorithm::kPat:
      return is_reduce_scatter_or_all_gather(op);
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is listed");
}

NcclChoice nccl_choose(CollectiveOp op, Bytes size, const NcclSystem& system, const NcclFilter& filter,
                       const NcclTuning& tuning) {
  STEPCAST_ASSERT(has_nccl_tuning(op), "point-to-point collectives have no NCCL algorithm choice");
  STEPCAST_ASSERT(system.ranks >= 2 && system.nodes >= 1 && system.channels >= 1,
                  "a communicator of two or more ranks");
  NcclChoice choice;
  std::optional<std::size_t> best;
  for (const NcclAlgorithm a : kNcclAlgorithmList) {
    for (const NcclProtocol p : kNcclProtocolList) {
      if (simple_only(a) && p != NcclProtocol::kSimple) continue;  // CollNet, NVLS, NVLS-Tree and PAT: Simple only
      std::string reason = missing_for_op(op, a);
      if (reason.empty()) reason = std::string(disabled_on_system(op, a, p, system, filter));
      if (reason.empty()) reason = not_requested(a, p, filter);
      NcclCandidate c;
      if (reason.empty()) {
        c = price(op, size, a, p, system, tuning, true);
        // The first fastest wins, as NCCL's strict "time < minTime" keeps the earlier candidate.
        if (!best || c.time < choice.candidates[*best].time) best = choice.candidates.size();
      } else {
        c.algorithm = a;
        c.protocol = p;
        c.disabled_because = std::move(reason);
      }
      choice.candidates.push_back(std::move(c));
    }
  }
  if (!best) {
    std::string reasons;
    for (const NcclCandidate& c : choice.candidates) {
      if (!requested(c.algorithm, c.protocol, filter)) continue;
      reasons += fmt::format("; {}: {}", name_of(c), c.disabled_because);
    }
    throw InputError(
        fmt::format("no NCCL algorithm and protocol left for {} on this system{}", to_string(op), reasons));
  }
  choice.winner = *best;
  choice.why = why(choice);
  return choice;
}

NcclCandidate nccl_pick(CollectiveOp op, Bytes size, const NcclSystem& system, const NcclFilter& filter,
                        const NcclTuning& tuning) {
  STEPCAST_ASSERT(has_nccl_tuning(op), "point-to-point collectives have no NCCL algorithm choice");
  STEPCAST_ASSERT(system.ranks >= 2 && system.nodes >= 1 && system.channels >= 1,
                  "a communicator of two or more ranks");
  std::optional<NcclCandidate> best;
  for (const NcclAlgorithm a : kNcclAlgorithmList) {
    for (const NcclProtocol p : kNcclProtocolList) {
      if (simple_only(a) && p != NcclProtocol::kSimple) continue;
      if (!nccl_runs(op, a) || !disabled_on_system(op, a, p, system, filter).empty() || !requested(a, p, filter))
        continue;
      NcclCandidate c = price(op, size, a, p, system, tuning, false);
      if (!best || c.time < best->time) best = std::move(c);
    }
  }
  if (!best) return nccl_choose(op, size, system, filter, tuning).chosen();  // throws, saying why
  return *best;
}

}  // namespace stepcast::cost
