// The figures of NCCL's tuning model as the newest NVIDIA/nccl tree stepcast could read states
// them (the 2026 tree that carries NCCL 2.29's model, split into src/tuning/: cost_model.cc at
// commit 1fc949c5 holds ncclTunerConstantsDefaults; ring.cc, nvls.cc and pat.cc at 12df1a11;
// tree.cc and collnet.cc at 1fc949c5), with the channel search of src/graph/search.cc and topo.h,
// the p2p channels of src/graph/paths.cc (commit 04cdb808) and the CollNet rules of src/init.cc
// (1fc949c5) and src/graph/connect.cc (0f900e1b). Latencies in microseconds and bandwidths in
// GB/s (1e9 B/s), NCCL's own units; nccl_tuning.cpp converts them once.
#pragma once

#include <array>
#include <cstddef>

namespace stepcast::cost::nccl_tables {

// Indices as NCCL orders them: protocols LL, LL128, Simple; the GPU generation row of the
// per-channel tables (compCapIndex): Volta, Ampere, Hopper, Blackwell; the node-count column:
// 1, 2, >2 nodes.
using PerProtocol = std::array<double, 3>;
using PerGeneration = std::array<std::array<double, 3>, 4>;

// baseLatencies: fixed cost of one collective per algorithm and protocol (us).
inline constexpr PerProtocol kTreeBaseLatency_us = {6.8, 14.0, 8.4};
inline constexpr PerProtocol kRingBaseLatency_us = {6.6, 14.0, 8.4};
inline constexpr PerProtocol kCollNetDirectBaseLatency_us = {0.0, 0.0, 0.0};
inline constexpr PerProtocol kCollNetChainBaseLatency_us = {0.0, 0.0, 0.0};
inline constexpr PerProtocol kNvlsBaseLatency_us = {0.0, 0.0, 0.0};
inline constexpr PerProtocol kNvlsTreeBaseLatency_us = {0.0, 0.0, 0.0};
inline constexpr PerProtocol kPatBaseLatency_us = {8.0, 8.0, 8.0};

// hwLatencies: latency per step over NVLink, PCIe and the network (us). CollNet, NVLS, NVLS-Tree
// and PAT run Simple only.
inline constexpr PerProtocol kTreeNvlinkLatency_us = {0.6, 1.25, 4.0};
inline constexpr PerProtocol kRingNvlinkLatency_us = {0.6, 1.9, 3.4};
inline constexpr PerProtocol kCollNetDirectNvlinkLatency_us = {0.0, 0.0, 3.7};
inline constexpr PerProtocol kCollNetChainNvlinkLatency_us = {0.0, 0.0, 2.8};
inline constexpr PerProtocol kNvlsNvlinkLatency_us = {0.0, 0.0, 25.0};
inline constexpr PerProtocol kNvlsTreeNvlinkLatency_us = {0.0, 0.0, 25.0};
inline constexpr PerProtocol kPatNvlinkLatency_us = {0.0, 0.0, 4.0};
inline constexpr PerProtocol kTreePciLatency_us = {1.0, 1.9, 4.0};
inline constexpr PerProtocol kRingPciLatency_us = {1.0, 2.5, 5.7};
inline constexpr PerProtocol kCollNetDirectPciLatency_us = {0.0, 0.0, 3.7};
inline constexpr PerProtocol kCollNetChainPciLatency_us = {0.0, 0.0, 2.8};
inline constexpr PerProtocol kPatPciLatency_us = {0.0, 0.0, 4.0};
inline constexpr PerProtocol kTreeNetLatency_us = {5.0, 8.5, 14.0};
inline constexpr PerProtocol kRingNetLatency_us = {2.7, 4.0, 14.0};
inline constexpr PerProtocol kCollNetDirectNetLatency_us = {0.0, 0.0, 31.0};
inline constexpr PerProtocol kCollNetChainNetLatency_us = {0.0, 0.0, 30.0};
inline constexpr PerProtocol kNvlsNetLatency_us = {0.0, 0.0, 18.0};
inline constexpr PerProtocol kNvlsTreeNetLatency_us = {0.0, 0.0, 20.9};
inline constexpr PerProtocol kPatNetLatency_us = {0.0, 0.0, 14.0};

// ring.cc getNetOverhead: the proxy's cost of posting one network operation (us) on an x86 AMD
// host and on any other (Intel, ARM), tripled for Simple.
inline constexpr double kNetOverheadAmd_us = 2.0;
inline constexpr double kNetOverheadOther_us = 1.0;
inline constexpr double kNetOverheadSimpleFactor = 3.0;

// llMaxBws (GB/s): on one node the row is the GPU generation (compCapIndex), across nodes the host
// CPU's (tuning_general.cc ncclTuningGetConstantsIndexes: row 1 on AMD hosts, row 0 on the
// others); columns 1/2/>2 nodes.
inline constexpr std::size_t kLlMaxBwIntelRow = 0;
inline constexpr std::size_t kLlMaxBwAmdRow = 1;
inline constexpr PerGeneration kLlMaxBw = {
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};
// Per-channel bandwidth caps (GB/s), rows Volta/Ampere/Hopper/Blackwell, columns 1/2/>2 nodes.
inline constexpr PerGeneration kPerChannelMaxRingLl128Bw = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
inline constexpr PerGeneration kPerChannelMaxTreeLl128Bw = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
inline constexpr PerGeneration kPerChannelMaxTreeBw = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
inline constexpr PerGeneration kPerChannelMaxNvlsTreeBw = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
// nvls.cc nvlsEfficiency per generation (Volta and Ampere have no NVLS).
inline constexpr std::array<double, 4> kNvlsEfficiency = {0.0, 0.0, 0.85, 0.74};

// The model refinements, each a factor on the graph's bus bandwidth (ring.cc, tree.cc, pat.cc).
inline constexpr double kRingLlFactor = 0.5;      // LL: 4 data bytes and a 4-byte flag per 8-byte line
inline constexpr double kRingLl128Factor = 0.92;  // ~ 120/128: one 8-byte flag per 128-byte line
inline constexpr double kTreeFactor = 0.92;
inline constexpr double kTreeLlFactor = 1.0 / 3.8;
inline constexpr double kTreeLl128FactorOneNode = 7.0 / 9.0;
inline constexpr double kTreeLl128FactorMultiNode = 120.0 / 128.0;
inline constexpr double kPatFactor = 0.75;
// Bus bandwidth to algorithm bandwidth: ring nRanks/nsteps, tree 1/2, NVLS all-reduce nRanks/nsteps.
inline constexpr double kTreeAlgbwRatio = 0.5;
// pat.cc latency: log2(nNodes) x the network hop / 3.5, and 2.8 us per rank ("still a linear part").
inline constexpr double kPatNetLatencyDivisor = 3.5;
inline constexpr double kPatPerRankLatency_us = 2.8;

// collnet.cc (1fc949c5): the heads' bus bandwidth is ppn x min(bwIntra, bwInter x 0.9), NCCL's
// bandwidth half of it; CollNet Direct's latency adds 0.4 us of "arity serialization" per local
// rank beyond the first, twice. CollNet runs with at most NCCL_MAX_DIRECT_ARITY + 1 local ranks
// (device.h: 7), and init.cc turns it off below NCCL_COLLNET_NODE_THRESHOLD nodes (2).
inline constexpr double kCollNetInterFactor = 0.9;
inline constexpr double kCollNetAlgbwRatio = 0.5;
inline constexpr double kCollNetArityLatency_us = 0.4;
inline constexpr int kMaxDirectArity = 7;
inline constexpr int kCollNetNodeThreshold = 2;

// ring.cc ncclTuningRingModelSim: the ring's "plateau effect", a factor on ring/Simple latency of a
// multi-node all-reduce (and, on Blackwell NVLink, a one-node all-reduce, all-gather or
// reduce-scatter) once each channel moves at least 64 B per rank; 1.9 before Ampere. On Blackwell
// one node the factor shrinks with fewer ring steps (by plateauDelta 0.1 per step's share) and by
// up to 0.1 more between 256 and 512 KiB per rank and channel.
inline constexpr double kRingPlateauFactor = 1.4;
inline constexpr double kRingPlateauFactorPreAmpere = 1.9;
inline constexpr double kRingPlateauMinBytesPerChannelRank = 64.0;
inline constexpr double kRingPlateauDelta = 0.1;
inline constexpr double kRingPlateauShrinkFrom = 256.0 * 1024.0;

// treeCorrectionFactor[protocol][log2(size / 64 B)], sizes 64 B to 512 MiB; the tree applies the
// first 23 entries (tree.cc), NVLS-Tree on Blackwell all 24 (nvls.cc); 1 beyond.
inline constexpr int kTreeCorrectionSizes = 23;
inline constexpr int kNvlsTreeCorrectionSizes = 24;
inline constexpr std::array<std::array<double, kNvlsTreeCorrectionSizes>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// The channel search (search.cc): per-channel speeds tried, highest first, within a node and
// across nodes, before and from Hopper (sm90); channels per graph (MAXCHANNELS/2); channels are
// duplicated at half speed when the speed is at least 25 GB/s (ncclTopoDupChannels), except on
// Hopper+ below 50 GB/s with more than 4 channels; a lower speed is tried only while it is more
// than 0.49 of the best so far. An NVLS graph's pass 2 raises bwInter (the heads' own traffic)
// while it stays below twice bwIntra.
inline constexpr std::array<double, 13> kSpeedsIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                        9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array<double, 19> kSpeedsInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// The 2026 tree's sm90 intra list adds 11 GB/s; its own sm100 (Blackwell) lists are not restated:
// Blackwell GPUs search with the sm90 ones here.
inline constexpr std::array<double, 11> kSpeedsIntraSm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                            15.0, 12.0, 11.0, 6.0,  3.0};
inline constexpr std::array<double, 17> kSpeedsInterSm90 = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr int kMaxChannelsPerGraph = 16;
inline constexpr double kDupChannelsMinSpeed = 25.0;
inline constexpr double kDupChannelsMinSpeedSm90 = 50.0;
inline constexpr int kDupChannelsMaxChannelsSm90 = 4;
inline constexpr double kLowerSpeedMinRatio = 0.49;
inline constexpr double kNvlsInterMaxRatio = 2.0;
// NCCL_MAX_NVLS_ARITY (src/include/device.h): an NVLS graph has at most this many heads (search.cc
// ncclTopoCompute, maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)), and NVLS all-gather and
// reduce-scatter run with at most this many GPUs per node (nvls.cc ncclTuningNvlsModelSim).
inline constexpr int kMaxNvlsArity = 32;

// connect.cc ncclTopoPostset: the communicator runs twice the graph's channels (at most
// MAXCHANNELS), and twice again on Hopper+ across nodes while the ring's bwIntra exceeds 45 GB/s
// and fewer than 16 channels run ("4 compute channels per search channel ... on <8 PPN").
inline constexpr double kMoreChannelsMinSpeedSm90 = 45.0;
inline constexpr int kMoreChannelsBelow = 16;

// topo.h: NVLink bandwidth per link as NCCL counts it (GB/s), and a PCIe Gen3 x16 link (PCI_BW).
inline constexpr double kNvlinkBwSm70 = 20.0;
inline constexpr double kNvlinkBwSm80 = 20.0;
inline constexpr double kNvlinkBwSm86 = 12.0;
inline constexpr double kNvlinkBwSm90 = 20.6;
inline constexpr double kNvlinkBwSm100 = 40.1;  // SM100_NVLINK_BW
inline constexpr double kPciGen3x16Bw = 12.0;

// Point-to-point channels (paths.cc ncclTopoGetNchannels, ncclTopoComputeP2pChannels[PerPeer]):
// p2pnChannels is the communicator's channels rounded up to a power of two, at most MAXCHANNELS
// (32); a peer over NVLink gets 2 channels per NVLink, over PCIe 2; a peer across the network gets
// one channel per local NIC, and more to reach the NIC's bandwidth at NCCL_P2P_PER_CHANNEL_NET_BW
// (14 GB/s) per channel. Every peer gets the fewest of these, rounded up to a power of two; across
// nodes that is halved while channels x ceil(peers / NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8)) exceed
// p2pnChannels, so that all peers fit one round.
inline constexpr int kMaxChannels = 32;
inline constexpr int kP2pChannelsPerNvlink = 2;
inline constexpr int kP2pChannelsPci = 2;
inline constexpr double kP2pPerChannelNetBw = 14.0;
inline constexpr int kMaxP2pPerBatch = 8;

}  // namespace stepcast::cost::nccl_tables
