// CollNet Direct and CollNet Chain as NCCL's tuning model prices them: NVIDIA/nccl
// src/tuning/collnet.cc at commit 1fc949c5 (ncclTuningCollnetModelInit and ...ModelSim), with the
// tables of cost_model.cc (nccl_tuning_tables.hpp). Restated as the code runs, traps included:
// see collnet_algbw_GBps.
#include "nccl_collnet.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "nccl_tuning_tables.hpp"
#include "stepcast/core/numeric.hpp"

namespace stepcast::cost::nccl_detail {
namespace {

namespace t = nccl_tables;

const NcclGraph& graph_of(NcclAlgorithm a, const NcclSystem& s) {
  return a == NcclAlgorithm::kCollNetDirect ? s.collnet_direct : s.collnet_chain;
}

}  // namespace

bool is_collnet(NcclAlgorithm a) { return a == NcclAlgorithm::kCollNetDirect || a == NcclAlgorithm::kCollNetChain; }

// collnet.cc leaves CollNet out without the plugin (comm->ncclCollNet) or with collnetEnable off;
// init.cc turns collnetEnable off below NCCL_COLLNET_NODE_THRESHOLD nodes and where the CollNet
// Chain graph found no channel. nvls.cc leaves NVLS across nodes out with collnetEnable off.
std::string_view collnet_off(const NcclSystem& s, bool nvls) {
  if (!s.collnet_fabric) {
    return nvls ? "NVLS across nodes reduces in the switches through CollNet, and this topology's fabric states no "
                  "in-network reduction (no collnet block)"
                : "CollNet needs switches that reduce in the network (SHARP), and this topology's fabric states none "
                  "(no collnet block)";
  }
  if (!s.collnet_enable) {
    return nvls ? "NVLS across nodes needs CollNet, which NCCL leaves off by default (the NCCL-SHARP plugin and "
                  "NCCL_COLLNET_ENABLE=1 turn it on: --set collnet.enabled=true)"
                : "CollNet is off, NCCL's default (the NCCL-SHARP plugin and NCCL_COLLNET_ENABLE=1 turn it on: --set "
                  "collnet.enabled=true)";
  }
  if (s.nodes < t::kCollNetNodeThreshold) return "CollNet runs across 2 or more nodes (NCCL_COLLNET_NODE_THRESHOLD)";
  if (!s.collnet) return "the CollNet Chain graph found no channel, so NCCL turns CollNet off";
  return {};
}

std::string_view collnet_disabled(NcclAlgorithm a, const NcclSystem& s) {
  if (const std::string_view off = collnet_off(s, false); !off.empty()) return off;
  // collnet.cc ModelSim: "CollNetDirect is only supported for up to 8 local GPUs", Chain likewise.
  if (s.ranks_per_node > t::kMaxDirectArity + 1)
    return "CollNet runs with at most 8 GPUs per node (NCCL_MAX_DIRECT_ARITY + 1)";
  // collnet.cc ModelInit, for every function across nodes: a node with more local ranks than
  // collNetHeadsNum is hard-disabled (each GPU needs a NIC of its own).
  if (s.ranks_per_node > s.collnet_heads)
    return "CollNet needs a NIC of its own for every GPU of a node (more local ranks than collNetHeadsNum)";
  if (graph_of(a, s).channels == 0) return "the CollNet Direct graph found no channel";
  // collnet.cc drops all-gather and reduce-scatter across nodes where the plugin lacks iallgather
  // or ireducescatter; the NCCL-SHARP plugin has both (Mellanox/nccl-rdma-sharp-plugins
  // src/sharp_plugin.c, ncclCollNetPlugin_v8), the plugin stepcast takes a collnet block to mean.
  return {};
}

// generalLatencies: baseLatencies plus, with intraLat and interLat the hwLatencies of the links
// inside a node and of the network (CollNet runs across nodes), Direct's 2 x (min(1, ppn - 1) x
// intraLat + (ppn - 1) x 0.4 us of arity serialization) + interLat, Chain's 2 x (ppn - 1) x
// intraLat + interLat; ppn is NCCL's integer nRanks / nNodes.
Term collnet_latency_us(NcclAlgorithm a, const NcclSystem& s, double base, double intra, double inter, bool explain) {
  const int ppn = s.ranks / s.nodes;
  Formula f(explain);
  if (a == NcclAlgorithm::kCollNetDirect) {
    f.set("baseLat {} + 2 x (min(1, {} - 1) x intra {} + ({} - 1) x {} arity) + net {}", base, ppn, intra, ppn,
          t::kCollNetArityLatency_us, inter);
    return {base + 2.0 * (std::min(1, ppn - 1) * intra + (ppn - 1) * t::kCollNetArityLatency_us) + inter, f.take()};
  }
  f.set("baseLat {} + 2 x ({} - 1) x intra {} + net {}", base, ppn, intra, inter);
  return {base + 2.0 * (ppn - 1) * intra + inter, f.take()};
}

// generalBandwidths. collnet.cc loops over NCCL's functions in their order (Broadcast, Reduce,
// AllGather, ReduceScatter, AllReduce) with one busBw variable: all-gather and reduce-scatter set it
// to ppn x min(bwIntra, bwInter x 0.9); the all-reduce branch does not set it, it divides the
// value reduce-scatter left by the GPU/NIC factor (ppn / channels, moved halfway to 1), so
// all-reduce inherits reduce-scatter's bus bandwidth. Its Hopper correction (x 0.85) tests
// compCapIndex >= 90, and the index is 0 to 3 (tuning_general.cc), so it never applies. Every
// function then gets busBw x 0.5. stepcast restates the code as it runs. NCCL's pre-split
// src/graph/tuning.cc priced all-reduce from nChannels x bwIntra, with the 0.85 from compute
// capability 9.0, and halved all-reduce only; another version of the 2026 tree (commit 88980683,
// the one with the copy-engine models) does so again.
Term collnet_algbw_GBps(CollectiveOp op, NcclAlgorithm a, const NcclSystem& s, bool explain) {
  const NcclGraph& g = graph_of(a, s);
  const double ppn = as_double(s.ranks) / as_double(s.nodes);
  const double intra = g.bw_intra.value() / unit::kGiga;
  const double inter = g.bw_inter.value() / unit::kGiga;
  double bus = ppn * std::min(intra, inter * t::kCollNetInterFactor);
  Formula f(explain);
  f.set("{:g} ppn x min(bwIntra {:.4g}, bwInter {:.4g} x {})", ppn, intra, inter, t::kCollNetInterFactor);
  if (op == CollectiveOp::kAllReduce) {
    double factor = ppn / as_double(g.channels);
    factor -= (factor - 1.0) / 2.0;
    bus /= factor;
    f.add(
        " (reduce-scatter's busBw, which all-reduce inherits in collnet.cc) / {:.4g} (GPU/NIC factor of {:g} ppn "
        "over {} channels, halfway to 1)",
        factor, ppn, g.channels);
  }
  bus *= t::kCollNetAlgbwRatio;
  f.add(" x {} (bus to algorithm)", t::kCollNetAlgbwRatio);
  return {bus, f.take()};
}

}  // namespace stepcast::cost::nccl_detail
