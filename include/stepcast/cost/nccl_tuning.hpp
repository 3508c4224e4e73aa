// NCCL's own tuning model (NCCL 2.29's, as the newest NVIDIA/nccl tree states it in src/tuning/):
// the time of every algorithm and protocol NCCL has for a collective, and the one its tuner picks.
// The figures are NCCL's, in src/cost/nccl_tuning_tables.hpp; what NCCL learns from the hardware is
// derived from a topology.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

/// NCCL's algorithms as its tuner weighs them, in NCCL's order (ncclAlgoStr). CollNet Direct and
/// CollNet Chain reduce in the network's switches (NVIDIA SHARP through the NCCL-SHARP plugin):
/// every GPU of a node exchanges with the heads, or a chain of the node's GPUs with one head, and
/// the heads with the switches; NVLS-Tree: NVLink SHARP inside each node and a tree of nodes across
/// them (all-reduce); PAT: Parallel Aggregated Trees for all-gather and reduce-scatter with one GPU
/// per node.
enum class NcclAlgorithm { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
/// NCCL's protocols: LL (8-byte lines carrying 4 data bytes and a flag), LL128 (128-byte lines
/// carrying 120 data bytes), Simple (bulk copies with a fence per step).
enum class NcclProtocol { kLL, kLL128, kSimple };

inline constexpr int kNcclProtocols = 3;

/// Every algorithm and protocol the tuner weighs, in NCCL's order.
inline constexpr std::array<NcclAlgorithm, 7> kNcclAlgorithmList = {
    NcclAlgorithm::kTree,         NcclAlgorithm::kRing, NcclAlgorithm::kCollNetDirect,
    NcclAlgorithm::kCollNetChain, NcclAlgorithm::kNvls, NcclAlgorithm::kNvlsTree,
    NcclAlgorithm::kPat};
inline constexpr std::array<NcclProtocol, 3> kNcclProtocolList = {NcclProtocol::kLL, NcclProtocol::kLL128,
                                                                  NcclProtocol::kSimple};

/// One of NCCL's graphs (struct ncclTopoGraph): its channels and each channel's speed inside a node
/// (bwIntra) and to the network (bwInter).
struct NcclGraph {
  int channels = 0;
  BytesPerSecond bw_intra;
  BytesPerSecond bw_inter;
};

/// What NCCL's tuner knows of the GPUs of one communicator: the GPU generation, the links, and
/// the channels its topology search finds (NCCL's graphs, sketched in src/cost/nccl_tuning_system.cpp).
struct NcclSystem {
  int compute_capability = 80;  ///< 70 Volta, 80 Ampere, 86/89 consumer Ampere/Ada, 90 Hopper, 100 Blackwell
  bool nvlink = false;          ///< GPUs of a node talk over NVLink (else PCIe)
  bool nvswitch = false;        ///< ... through an NVSwitch
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  int channels = 0;                ///< ring and tree graph: channels
  BytesPerSecond channel_bw;       ///< ... and each channel's bandwidth
  int comm_channels = 0;           ///< channels the communicator runs (connect.cc: the graph's, duplicated)
  int nvls_channels = 0;           ///< NVLS graph (one per head GPU); 0 where NVLink SHARP is not available
  BytesPerSecond nvls_channel_bw;  ///< ... its bwIntra
  BytesPerSecond nvls_inter_bw;    ///< ... its bwInter (the heads' own traffic, raised in pass 2)
  int gpu_links = 0;               ///< NVLinks of a GPU as NCCL counts them; 0 over PCIe
  BytesPerSecond gpu_bw;           ///< a GPU's intra-node links as NCCL counts them (NVLinks x per-link figure)
  int nics_per_gpu = 1;            ///< NICs each GPU reaches (p5: 4), for the point-to-point channels
  BytesPerSecond gpu_nic_bw;       ///< what one GPU sends out of its node alone
  bool collnet_fabric = false;     ///< the fabric's switches reduce in the network (the topology's collnet block)
  bool collnet_enable = false;     ///< ... and NCCL's CollNet is on (NCCL_COLLNET_ENABLE=1 and the NCCL-SHARP plugin)
  /// A GPU's path to its NIC is a PCIe switch or closer (PXB), so NCCL keeps LL128 across nodes.
  bool nic_behind_pcie_switch = true;
  /// The nodes' host CPU as NCCL detects it (Intel where the topology states none): on AMD hosts
  /// NCCL posts network operations at 2 us, not 1, and caps LL across nodes with its AMD row; on
  /// ARM hosts (NVIDIA Grace) it leaves the tree correction off NVLS-Tree on Blackwell.
  topology::HostCpu host_cpu = topology::HostCpu::kIntel;
  /// CollNet as this communicator runs it: collnet_enable, kept on by init.cc on 2 or more nodes
  /// (NCCL_COLLNET_NODE_THRESHOLD) where the CollNet Chain graph has channels.
  bool collnet = false;
  int collnet_heads = 0;     ///< collNetHeadsNum: the GPUs of a node with a NIC of their own (the NVLS heads)
  NcclGraph collnet_direct;  ///< CollNet Direct graph (src/cost/nccl_collnet_graphs.cpp): one channel per head
  NcclGraph collnet_chain;   ///< CollNet Chain graph: the ring's channels, each a chain behind one NIC
  Explanation derivation;    ///< how each figure above came from the topology
};

/// The compute capability NCCL reads of the GPU (90 for 9.0), as its GPU file states it; none
/// where the file states none (an inline GPU block without "compute_capability").
std::optional<int> nccl_compute_capability(const topology::GpuSpec& gpu);

/// What NCCL reads of a topology's GPUs once, the same for every communicator on it: their
/// generation (the compute capability its GPU file states) and the switch inside a node.
struct NcclHardware {
  int compute_capability = 80;
  std::string gpu_name;
  std::string intra_switch;     ///< lower-case name of the switch GPU 0 links to in its node; empty if none
  bool collnet_fabric = false;  ///< the topology states that its switches reduce (a collnet block)
  bool collnet_enable = false;  ///< ... with NCCL's CollNet on
  /// A GPU's path to its nearest NIC, where the topology states it (else a PCIe switch, PXB).
  std::optional<topology::GpuNicPath> gpu_nic_path;
  /// The nodes' host CPU, where the topology states it (else an Intel host, NCCL's tables' first row).
  std::optional<topology::HostCpu> host_cpu;
  /// What the topology's NICs achieve against this model (its "network"), if it names one.
  std::optional<topology::NetworkTerms> network;
};

/// InputError when the GPU's name matches no generation NCCL tunes for.
NcclHardware nccl_hardware(const topology::Topology& topology);

/// nccl_system below, from hardware read once (the step model prices several groups on one topology).
NcclSystem nccl_system(const NcclHardware& hardware, const topology::CommTiers& tiers, bool explain = true);

/// NCCL's view of the `tiers.ranks` GPUs of `topology`: their NICs are the ones tiers.nics and
/// tiers.group_nic_bw name (NCCL searches channels through the NICs near its GPUs, alone). The
/// GPU generation comes from the GPU's name; InputError when the name matches no generation NCCL
/// tunes for. `derivation` is filled only when `explain`.
NcclSystem nccl_system(const topology::Topology& topology, const topology::CommTiers& tiers, bool explain = true);

/// A measured correction of one protocol, as calibration fits it: NCCL's latency times
/// `latency_factor`, NCCL's algorithm bandwidth times `bandwidth_efficiency`. 1 and 1 are NCCL's model.
struct NcclProtocolTuning {
  double latency_factor = 1.0;
  double bandwidth_efficiency = 1.0;
};
using NcclTuning = std::array<NcclProtocolTuning, kNcclProtocols>;  ///< indexed by NcclProtocol

/// Restricts the candidates as NCCL_ALGO and NCCL_PROTO do. A protocol named here is enabled even
/// where NCCL leaves it off by default (LL128 outside NVLink on Volta/Ampere/Hopper), as NCCL_PROTO does.
struct NcclFilter {
  std::optional<NcclAlgorithm> algorithm;
  std::optional<NcclProtocol> protocol;
};

/// One (algorithm, protocol) pair priced as ncclTopoGetAlgoTime does: time = latency + S / algbw.
struct NcclCandidate {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  std::string disabled_because;  ///< empty when NCCL would consider it
  Seconds latency;
  BytesPerSecond algbw;  ///< NCCL's algorithm bandwidth, S / bandwidth_time
  Seconds bandwidth_time;
  Seconds time;
  std::string latency_formula;    ///< the latency formula with its numbers
  std::string bandwidth_formula;  ///< the bus-to-algorithm bandwidth rules with their numbers

  [[nodiscard]] bool enabled() const { return disabled_because.empty(); }
};

/// Every candidate NCCL has for a collective, in NCCL's order (tree, ring, CollNet Direct, CollNet
/// Chain, NVLS, NVLS-Tree, PAT; LL, LL128, Simple), and the fastest enabled one, first on ties, as
/// NCCL's tuner picks it.
struct NcclChoice {
  std::vector<NcclCandidate> candidates;
  std::size_t winner = 0;  ///< index into candidates
  std::string why;         ///< one sentence: what made the winner faster than the runner-up

  [[nodiscard]] const NcclCandidate& chosen() const { return candidates[winner]; }
};

/// Whether NCCL's tuner has a choice of algorithm for `op` (all but all-to-all and send/recv,
/// which NCCL runs as point-to-point transfers).
bool has_nccl_tuning(CollectiveOp op);

/// Whether NCCL has `algorithm` for `op`: ring for all five, tree, CollNet Chain and NVLS-Tree for
/// all-reduce only, CollNet Direct and NVLS for all-reduce, all-gather and reduce-scatter, PAT for
/// all-gather and reduce-scatter.
bool nccl_runs(CollectiveOp op, NcclAlgorithm algorithm);

/// The candidates for `op` and `size` (nccl-tests' S) on `system`, and NCCL's choice.
/// Preconditions: has_nccl_tuning(op), system.ranks >= 2. InputError when the filter leaves no
/// enabled candidate (the message says why each was left out).
NcclChoice nccl_choose(CollectiveOp op, Bytes size, const NcclSystem& system, const NcclFilter& filter = {},
                       const NcclTuning& tuning = {});

/// The candidate nccl_choose picks, without the others, the reasons or the formulas: the fast
/// path the step model and the planner use. Same preconditions and errors as nccl_choose.
NcclCandidate nccl_pick(CollectiveOp op, Bytes size, const NcclSystem& system, const NcclFilter& filter = {},
                        const NcclTuning& tuning = {});

/// Send/recv and all-to-all as NCCL runs them: point-to-point transfers on the p2p channels
/// (NVIDIA/nccl src/graph/paths.cc, ncclTopoComputeP2pChannels), which NCCL's tuner does not
/// price. nccl-tests' sendrecv (each rank to the next) and alltoall (S/N to every rank).
struct NcclP2p {
  int channels_per_peer = 1;
  BytesPerSecond peer_bw;  ///< one peer's rate: its channels x the graph's channel speed, capped by the path
  Seconds latency;
  Seconds bandwidth_time;
  Seconds time;
  std::string latency_formula;
  std::string bandwidth_formula;
};

/// Preconditions: op is send/recv or all-to-all, system.ranks >= 2. `tuning` applies its Simple factors.
NcclP2p nccl_p2p(CollectiveOp op, Bytes size, const NcclSystem& system, BytesPerSecond node_bw, double oversubscription,
                 const NcclTuning& tuning = {});

/// Names as NCCL_ALGO / NCCL_PROTO spell them, in lower case for algorithms: "ring", "collnetdirect", "LL128".
std::string_view to_string(NcclAlgorithm algorithm);
std::string_view to_string(NcclProtocol protocol);
/// Case-insensitive, as NCCL reads NCCL_ALGO and NCCL_PROTO.
std::optional<NcclAlgorithm> parse_nccl_algorithm(std::string_view name);
std::optional<NcclProtocol> parse_nccl_protocol(std::string_view name);
/// "LL, LL128, Simple" and "tree, ring, collnetdirect, collnetchain, nvls, nvlstree, pat", for messages and help.
std::string accepted_nccl_protocols();
std::string accepted_nccl_algorithms(CollectiveOp op);

}  // namespace stepcast::cost
