// NCCL's CollNet (in-network reduction: NVIDIA SHARP through the NCCL-SHARP plugin) in its tuning
// model: the graphs NCCL's search finds for CollNet Direct and CollNet Chain
// (nccl_collnet_graphs.cpp), and when NCCL runs them and at what latency and bandwidth
// (nccl_collnet.cpp, restating NVIDIA/nccl src/tuning/collnet.cc at commit 1fc949c5).
#pragma once

#include <string_view>

#include "nccl_formula.hpp"
#include "stepcast/core/explain.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost::nccl_detail {

bool is_collnet(NcclAlgorithm a);

/// Fills the CollNet part of `s` (collnet_fabric, collnet_enable, collnet, collnet_heads and the
/// two CollNet graphs) once its ring and NVLS graphs are known. `gpu_GBps` is a GPU's intra-node
/// links as NCCL counts them; `derivation` (may be null) gets a line on how.
void derive_collnet(NcclSystem& s, const NcclHardware& hardware, const topology::CommTiers& tiers, double gpu_GBps,
                    Explanation* derivation);

/// Why `s` runs no CollNet at all, or empty: for CollNet itself, and for NVLS across nodes, which
/// reduces in the switches through CollNet (`nvls`).
std::string_view collnet_off(const NcclSystem& s, bool nvls);

/// Why NCCL leaves CollNet Direct or Chain out on `s`, or empty (which collectives each has is
/// nccl_runs()).
std::string_view collnet_disabled(NcclAlgorithm a, const NcclSystem& s);

/// collnet.cc's latency (us) of CollNet Direct or Chain from cost_model.cc's baseLatencies and
/// hwLatencies (`intra` over the node's links, `inter` over the network), and its algorithm
/// bandwidth (GB/s); Simple, the one protocol CollNet runs.
Term collnet_latency_us(NcclAlgorithm a, const NcclSystem& s, double base, double intra, double inter, bool explain);
Term collnet_algbw_GBps(CollectiveOp op, NcclAlgorithm a, const NcclSystem& s, bool explain);

}  // namespace stepcast::cost::nccl_detail
