// The figures of NCCL's tuning model, as NVIDIA/nccl 2.20.3 (commit b6475625) states them in
// src/graph/tuning.cc, src/graph/search.cc and src/graph/topo.h. Latencies in microseconds and
// bandwidths in GB/s (1e9 B/s), NCCL's own units; nccl_tuning.cpp converts them once.
#pragma once

#include <array>

namespace stepcast::cost::nccl220 {

// Indices as NCCL orders them: protocols LL, LL128, Simple; the GPU generation row of the
// per-channel tables (compCapIndex): Volta, Ampere, Hopper; the node-count column: 1, 2, >2 nodes.
using PerProtocol = std::array<double, 3>;
using PerGeneration = std::array<std::array<double, 3>, 3>;

// baseLat: fixed cost of one collective per algorithm and protocol (us).
inline constexpr PerProtocol kTreeBaseLatency_us = {6.8, 14.0, 0.0};
inline constexpr PerProtocol kRingBaseLatency_us = {6.6, 14.0, 8.4};
inline constexpr PerProtocol kNvlsBaseLatency_us = {0.0, 0.0, 0.0};

// hwLat: latency per step over NVLink, PCIe and the network (us). NVLS runs Simple only.
inline constexpr PerProtocol kTreeNvlinkLatency_us = {0.6, 1.25, 28.0};
inline constexpr PerProtocol kRingNvlinkLatency_us = {0.6, 1.9, 3.4};
inline constexpr PerProtocol kNvlsNvlinkLatency_us = {0.0, 0.0, 23.0};
inline constexpr PerProtocol kTreePciLatency_us = {1.0, 1.9, 28.0};
inline constexpr PerProtocol kRingPciLatency_us = {1.0, 2.5, 5.7};
inline constexpr PerProtocol kTreeNetLatency_us = {5.0, 8.5, 28.0};
inline constexpr PerProtocol kRingNetLatency_us = {2.7, 4.0, 14.0};
inline constexpr PerProtocol kNvlsNetLatency_us = {0.0, 0.0, 18.0};

// getNetOverhead on an x86 Intel host: the proxy's cost of posting one network operation (us),
// tripled for Simple. stepcast does not know the host CPU and assumes Intel.
inline constexpr double kNetOverheadIntel_us = 1.0;
inline constexpr double kNetOverheadSimpleFactor = 3.0;

// Per-channel bandwidth caps (GB/s), rows Volta/Ampere/Hopper, columns 1/2/>2 nodes.
// llMaxBws: row by GPU generation on one node, by host CPU (Intel row 0) across nodes.
inline constexpr PerGeneration kLlMaxBw = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}}};
inline constexpr PerGeneration kPerChannelMaxRingLl128Bw = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}}};
inline constexpr PerGeneration kPerChannelMaxTreeLl128Bw = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}}};
inline constexpr PerGeneration kPerChannelMaxTreeBw = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}}};

// The model refinements of ncclTopoTuneModel, each a factor on the graph's bus bandwidth.
inline constexpr double kRingLlFactorReduceOrMultiNode = 1.0 / 4.0;  // LL: 4 data bytes per 8-byte line, and
inline constexpr double kRingLlFactorOther = 1.0 / 3.0;              // fewer bytes per thread than Simple
inline constexpr double kRingLl128Factor = 0.92;                     // ~ 120/128: one 8-byte flag per 128-byte line
inline constexpr double kRingLl128FactorOneRankPerNode = 0.7;        // ppn < 2: send and receive through one NIC
inline constexpr double kTreeFactor = 0.92;
inline constexpr double kTreeLlFactor = 1.0 / 3.8;
inline constexpr double kTreeLl128FactorOneNode = 7.0 / 9.0;
inline constexpr double kTreeLl128FactorMultiNode = 120.0 / 128.0;
// Bus bandwidth to algorithm bandwidth: ring nRanks/nsteps, tree 1/2, NVLS 5/6.
inline constexpr double kTreeAlgbwRatio = 0.5;
inline constexpr double kNvlsAlgbwRatio = 5.0 / 6.0;

// ncclTopoGetAlgoTime: the ring's "plateau effect", a factor on ring/Simple latency of a
// multi-node all-reduce once each channel moves at least 64 B per rank; 1.9 before Ampere.
inline constexpr double kRingPlateauFactor = 1.4;
inline constexpr double kRingPlateauFactorPreAmpere = 1.9;
inline constexpr double kRingPlateauMinBytesPerChannelRank = 64.0;

// treeCorrectionFactor[protocol][log2(size / 64 B)], sizes 64 B to 256 MiB; 1 beyond.
inline constexpr int kTreeCorrectionSizes = 23;
inline constexpr std::array<std::array<double, kTreeCorrectionSizes>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

// The channel search (search.cc): per-channel speeds tried, highest first, within a node and
// across nodes, before and from Hopper (sm90); channels per graph (MAXCHANNELS/2); channels are
// duplicated at half speed when the speed is at least 25 GB/s (ncclTopoDupChannels), except on
// Hopper+ below 50 GB/s with more than 4 channels; a lower speed is tried only while it is more
// than 0.49 of the best so far.
inline constexpr std::array<double, 13> kSpeedsIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                        9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array<double, 19> kSpeedsInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 10> kSpeedsIntraSm90 = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0};
inline constexpr std::array<double, 17> kSpeedsInterSm90 = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr int kMaxChannelsPerGraph = 16;
inline constexpr double kDupChannelsMinSpeed = 25.0;
inline constexpr double kDupChannelsMinSpeedSm90 = 50.0;
inline constexpr int kDupChannelsMaxChannelsSm90 = 4;
inline constexpr double kLowerSpeedMinRatio = 0.49;

// topo.h: NVLink bandwidth per link as NCCL counts it (GB/s), and a PCIe Gen3 x16 link (PCI_BW).
inline constexpr double kNvlinkBwSm70 = 20.0;
inline constexpr double kNvlinkBwSm80 = 20.0;
inline constexpr double kNvlinkBwSm86 = 12.0;
inline constexpr double kNvlinkBwSm90 = 20.6;
// Blackwell (NVLink 5): SM100_NVLINK_BW in topo.h of NCCL 2.23 and later, which 2.20.3 predates;
// the rest of these tables stays at 2.20.3's Hopper rows for Blackwell GPUs.
inline constexpr double kNvlinkBwSm100 = 40.1;
inline constexpr double kPciGen3x16Bw = 12.0;

// Point-to-point channels (src/graph/paths.cc, ncclTopoGetNchannels and ncclTopoComputeP2pChannels):
// p2pnChannels is the graph's channels rounded up to a power of two, at most MAXCHANNELS (32);
// a peer over NVLink gets 2 channels per NVLink, over PCIe 2; a peer across the network starts
// from 2 channels per NIC, halved while channels x ranks exceed 4 x p2pnChannels, and never fewer
// than the NICs a GPU needs. Every peer gets the smallest of these, rounded up to a power of two.
inline constexpr int kMaxChannels = 32;
inline constexpr int kP2pChannelsPerNvlink = 2;
inline constexpr int kP2pChannelsPci = 2;
inline constexpr int kP2pNetChannelsPerPeer = 2;
inline constexpr int kP2pChannelOverload = 4;

}  // namespace stepcast::cost::nccl220
