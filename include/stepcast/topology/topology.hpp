// A cluster as a graph: GPUs, NICs and switches joined by links, with routes between GPUs and
// the per-tier summary that the analytical collective model consumes.
#pragma once

#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::topology {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;

enum class VertexKind { kGpu, kNic, kSwitch };

/// Which part of the machine a link belongs to; used for per-tier figures and utilisation.
enum class LinkTier {
  kIntraNode,  ///< NVLink/NVSwitch or PCIe inside a node (GPU-GPU, GPU-NIC)
  kNic,        ///< a NIC's link to the first fabric switch
  kFabric,     ///< switch-to-switch links (leaf-spine)
};

struct Vertex {
  std::string name;
  VertexKind kind = VertexKind::kSwitch;
  int node = -1;  ///< index of the node the vertex sits in; -1 for fabric switches
};

/// A full-duplex link: `bandwidth` is available in each direction independently.
struct Link {
  VertexId a = 0;
  VertexId b = 0;
  BytesPerSecond bandwidth;
  Seconds latency;
  LinkTier tier = LinkTier::kIntraNode;
};

/// One link used in one direction (a->b when `forward`).
struct Hop {
  LinkId link = 0;
  bool forward = true;
  bool operator==(const Hop&) const = default;
};

/// One kernel figure of a GPU file: a cited value, or one of the model's free parameters
/// (model_parameters.hpp), whose value the shipped defaults give unless a calibration replaces it.
/// A cited value may be scaled by a free parameter (a kernel benchmarked on its own taken down to
/// what a training step sustains).
struct GpuFigure {
  double value = 0.0;     ///< the file's value, or the parameter's value in the shipped defaults
  std::string parameter;  ///< the free parameter the figure is; empty for a cited value
  std::string source;     ///< where the value comes from
  std::string scaled_by;  ///< the free parameter a cited value is multiplied by; empty for none
  double scale = 1.0;     ///< ... and its value in the shipped defaults
  /// The catalogue GPU the value was measured on, where that is another GPU (a figure of one
  /// GPU standing for another, said so in the file rather than silently); empty otherwise.
  std::string borrowed_from;
};

/// How a fused-attention pass's efficiency moves with one size x of its work: the work grows
/// with x, and a part that does not comes on top, `fixed` units of x's worth, so the efficiency
/// goes as 1 / (1 + fixed / x), relative to the x the pass's figure was measured at. Two sizes
/// move it:
/// - the head dimension d: a score's matmuls grow with d, its non-matmul work (the softmax's
///   exponentials, rescaling, masking) does not (the GPU file's "head_dim" block, "non_matmul");
/// - the keys s each query attends in one kernel (the sequence, a sliding window, a context-
///   parallel ring step's chunk): a block of queries streams its keys and pays a fixed part besides
///   (loading its queries, the softmax epilogue, writing its output, the causal diagonal's
///   masking; the "sequence" block, "fixed_keys").
struct AttentionScalingPass {
  double measured_at = 0.0;  ///< the x of the pass's efficiency figure
  double fixed = 0.0;        ///< the work that does not grow with x, in units of x's work
};
struct AttentionScaling {
  AttentionScalingPass forward;
  AttentionScalingPass backward;
  std::string source;         ///< the measurements the terms come from
  std::string borrowed_from;  ///< the catalogue GPU they were measured on, where another
};

/// A fused-attention kernel on this GPU: the fraction of the 16-bit tensor peak its forward and
/// backward reach, and how that moves with the head dimension and with the sequence length
/// (absent: not at all).
struct AttentionFigures {
  GpuFigure forward;
  GpuFigure backward;
  std::optional<AttentionScaling> head_dim;
  std::optional<AttentionScaling> sequence;
};

/// The compute model's figures of a GPU (cost/kernel_model.hpp says how each is used), from its
/// file's "kernels" block. A figure the file leaves out is absent, and a prediction that needs
/// it is refused, naming the file and the figure.
struct GpuKernelFigures {
  std::map<std::string, GpuFigure> gemm;              ///< large-GEMM fraction of the tensor peak, by precision name
  std::optional<GpuFigure> memory;                    ///< achieved fraction of the HBM bandwidth
  std::map<std::string, AttentionFigures> attention;  ///< by kernel name: "fa2", "fa3", "triton", "cudnn"
  /// The kernel a plan gets when it names none (flash=on): the one the frameworks run on this GPU.
  std::string default_attention;
  std::optional<GpuFigure> kernel_overhead;  ///< seconds of GPU time per kernel beyond its roofline
  std::optional<GpuFigure> host_overhead;    ///< seconds of host time per kernel launch
  /// Seconds every collective of a step costs beyond NCCL's model: the free parameter
  /// collective_overhead, a framework's cost rather than the GPU's, so no file names it.
  GpuFigure collective_overhead;
};

/// The GPU model of a cluster's nodes, with the figures the cost model needs, each from the file.
struct GpuSpec {
  std::string name;                 ///< e.g. "A100-SXM4-40GB"
  Bytes memory;                     ///< HBM capacity
  BytesPerSecond memory_bandwidth;  ///< HBM bandwidth
  FlopsPerSecond peak_fp32;         ///< dense, non-tensor-core FP32
  FlopsPerSecond peak_tf32;         ///< dense tensor-core peaks below
  FlopsPerSecond peak_bf16;
  FlopsPerSecond peak_fp16;
  FlopsPerSecond peak_fp8;    ///< zero where the GPU has no FP8
  FlopsPerSecond peak_mxfp8;  ///< MXFP8 block-scaled GEMMs (Blackwell); zero where the GPU has none
  FlopsPerSecond peak_nvfp4;  ///< NVFP4 block-scaled GEMMs (Blackwell); zero where the GPU has none
  int sm_count = 0;           ///< streaming multiprocessors: GEMM tiles run on them in waves
  /// Architecture family ("ampere", "hopper", "blackwell"); empty where the file states none.
  std::string generation;
  /// CUDA compute capability x 10 (90 for 9.0); 0 where the file states none. NCCL's tuning
  /// tables are chosen by it.
  int compute_capability = 0;
  GpuKernelFigures kernels;
  /// Where the figures were read: a GPU file of the catalogue, or the topology file; and the JSON
  /// pointer of the GPU block in it ("" for a catalogue file, "/gpu" inline), for messages.
  std::string file;
  std::string pointer;
};

/// What one collective over a group of GPUs sees of the machine: the per-tier figures of the
/// latency-bandwidth (alpha-beta) model. Ranks are placed in GPU order, node by node.
/// Calibration may replace the bandwidths and latencies.
/// Every figure is derived from the graph (so graph-form files get them too); where nodes differ,
/// the group's weakest node (bandwidths) or longest route (latencies) is reported.
struct CommTiers {
  int ranks = 1;
  int nodes = 1;           ///< nodes spanned by the ranks
  int ranks_per_node = 1;  ///< group ranks on each spanned node (ranks / nodes; the busiest node if uneven)
  /// Each way, one GPU to another in its node: the bottleneck of the route between the first two
  /// GPUs of the node. Zero when the nodes hold a single GPU (there is no intra-node route).
  BytesPerSecond intra_bw;
  Seconds intra_latency;  ///< sum of link latencies on that route (zero with one GPU per node)
  /// Each way, what the group's ranks on one node send out of it together: the NICs their GPUs
  /// are wired to (every NIC of the node for GPUs wired to none), each capped by its uplink and
  /// split evenly among the GPUs of the concurrent groups (Concurrency) that use it; the weakest
  /// node. For a group that holds every GPU of its nodes and runs alone, the links leaving a node.
  BytesPerSecond node_bw;
  /// Each way, what one GPU alone can send out of its node: the bottleneck of its route to another
  /// node; a GPU wired to several NICs (p5: 4 per GPU) adds them up, each capped by its NIC's uplink.
  BytesPerSecond gpu_nic_bw;
  /// Sum of link latencies on the longest route from rank 0 to a rank of the group on another node
  /// (zero when the group sits on one node).
  Seconds inter_latency;
  double oversubscription = 1.0;  ///< >= 1: the fat-tree ratio when the group spans several leaf switches
  /// The NICs the group's ranks on one node send through, on the node with the fewest (1 for a
  /// graph without NIC vertices). Zero when the group spans one node.
  int nics = 0;
  /// node_bw with no concurrent group running: what NCCL's channel search sees, since NCCL
  /// knows nothing of other communicators. At least node_bw; zero when the group spans one node.
  BytesPerSecond group_nic_bw;
};

/// Groups that run the same collective at the same time as a group: `groups` groups of the same
/// shape, the k-th shifted by k x `offset` GPUs. The data-parallel groups of a stage's tensor
/// ranks are {tp, 1}; the tensor-parallel groups of a node {gpus per node / tp, tp}. Groups
/// shifted beyond the last GPU do not exist.
struct Concurrency {
  int groups = 1;
  int offset = 0;
  auto operator<=>(const Concurrency&) const = default;
};

/// What one GPU-hour of the cluster costs, with where the figure comes from (a cloud's on-demand
/// list price and its date); training-cost columns multiply GPU-hours by it.
struct GpuHourPrice {
  double usd = 0.0;  ///< > 0
  std::string source;
};

/// Each GPU's link to its host's memory (PCIe, or NVLink-C2C to a Grace CPU), each way, with every
/// GPU of the node copying at once: what moves activations offloaded to the host.
struct HostLink {
  BytesPerSecond bandwidth_per_gpu;  ///< > 0
  std::string source;
};

/// The fabric's in-network reduction as NCCL's CollNet reaches it: NVIDIA SHARP in Quantum InfiniBand
/// switches (from Quantum HDR and ConnectX-6 on), which NCCL uses through the NCCL-SHARP plugin. A
/// file states it where its switches reduce; `enabled` says whether the plugin is loaded and
/// NCCL_COLLNET_ENABLE=1, which NCCL leaves off by default (NVIDIA HPC-X, "NCCL-RDMA-SHARP Plugins").
struct CollNet {
  bool enabled = false;
  std::string source;
};

/// What a network technology's NICs achieve against NCCL's tuning model, which prices every NIC
/// as InfiniBand at line rate: a collective across nodes takes NCCL's latency times
/// `latency_factor` and NCCL's bandwidth time over `bandwidth_efficiency` (all-to-all and
/// send/recv, on NCCL's point-to-point channels, over `p2p_bandwidth_efficiency`).
struct NetworkFactors {
  double latency_factor = 1.0;
  double bandwidth_efficiency = 1.0;
  double p2p_bandwidth_efficiency = 1.0;
};

/// The PCIe path from a GPU to its nearest NIC, in the legend of `nvidia-smi topo -m`: through
/// one PCIe switch (PIX), several (PXB), the CPU's host bridge (PHB), host bridges of one NUMA node
/// (NODE) or the interconnect between CPUs (SYS). NCCL's graph search reads it (typeInter), and
/// turns LL128 off across nodes beyond PXB (src/graph/tuning.cc, ncclTopoTuneModel).
enum class GpuNicPath { kPix, kPxb, kPhb, kNode, kSys };

/// The path as `nvidia-smi topo -m` prints it: "PIX", "PXB", "PHB", "NODE", "SYS".
std::string_view to_string(GpuNicPath path);

/// Whether the path runs through PCIe switches alone (PIX, PXB), not through a CPU.
constexpr bool through_pcie_switches(GpuNicPath path) { return path == GpuNicPath::kPix || path == GpuNicPath::kPxb; }

/// The nodes' host CPU as NCCL's topology detection classifies it (cpuArch, cpuVendor): an x86
/// CPU of Intel or of AMD, or an ARM one (NVIDIA Grace). NCCL's tuning model reads it across nodes:
/// the proxy's cost of posting a network operation (src/tuning/ring.cc getNetOverhead: 2 us on AMD
/// hosts, 1 us on the others) and the row of the LL bandwidth caps (tuning_general.cc,
/// ncclTuningGetConstantsIndexes: AMD's row, else Intel's).
enum class HostCpu { kIntel, kAmd, kArm };

/// The vendor as files spell it: "intel", "amd", "arm".
std::string_view to_string(HostCpu cpu);

/// A network technology's factors as a file of the network catalogue
/// (topologies/networks/NAME.json) states them, with what they were fitted on.
struct NetworkTerms {
  std::string name;  ///< the technology: "infiniband", "slingshot", ...
  NetworkFactors factors;
  std::string source;
  std::string file;  ///< where the terms were read, for messages
};

/// A loaded, validated topology. Immutable; cheap to share by const reference.
class Topology {
 public:
  /// `trays_per_node` > 1 when each node of the graph is a scale-up domain of that many nodes of
  /// the file (GB200 NVL72: 18 trays of `gpus_per_tray` GPUs), whose --nodes counts trays; the
  /// graph then holds the GPUs of the domain a plan uses (all 72, or 64 with --gpus-per-domain 64).
  Topology(std::string name, std::string source, GpuSpec gpu, std::vector<Vertex> vertices, std::vector<Link> links,
           double oversubscription, int trays_per_node = 1, int gpus_per_tray = 0);
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const GpuSpec& gpu() const { return gpu_; }
  [[nodiscard]] std::span<const Vertex> vertices() const { return vertices_; }
  [[nodiscard]] std::span<const Link> links() const { return links_; }
  /// GPU vertices in rank order (file order: node 0's GPUs first).
  [[nodiscard]] std::span<const VertexId> gpus() const { return gpus_; }
  [[nodiscard]] int gpu_count() const { return static_cast<int>(gpus_.size()); }
  [[nodiscard]] int node_count() const { return node_count_; }
  /// GPUs on the most populated node. In a topology with a scale-up domain spanning several nodes
  /// of the file (NVL72), a node of the graph is the whole domain.
  [[nodiscard]] int gpus_per_node() const { return gpus_per_node_; }
  /// Nodes of the file (trays) per scale-up domain of the file: 1, or 18 for a GB200 NVL72 rack.
  [[nodiscard]] int trays_per_node() const { return trays_per_node_; }
  /// GPUs of one node of the file (a tray: 4 in an NVL72 rack); gpus_per_node() when each node is
  /// its own domain.
  [[nodiscard]] int gpus_per_tray() const { return gpus_per_tray_ > 0 ? gpus_per_tray_ : gpus_per_node_; }
  /// GPUs of one whole scale-up domain of the file (72 in an NVL72 rack), of which each node of the
  /// graph holds gpus_per_node(): fewer when the plan uses part of every domain (--gpus-per-domain).
  [[nodiscard]] int domain_gpus() const {
    return gpus_per_tray_ > 0 ? trays_per_node_ * gpus_per_tray_ : gpus_per_node_;
  }
  [[nodiscard]] int node_of_gpu(int gpu_index) const;
  /// The file's "price" block, if it has one.
  [[nodiscard]] const std::optional<GpuHourPrice>& price() const { return price_; }
  /// Called by the loader when the file states a price.
  void set_price(GpuHourPrice price) { price_ = std::move(price); }
  /// The node's "host_link" block, if the file has one.
  [[nodiscard]] const std::optional<HostLink>& host_link() const { return host_link_; }
  /// Called by the loader when the file states the GPUs' host link.
  void set_host_link(HostLink link) { host_link_ = std::move(link); }
  /// The fabric's "collnet" block (the graph form's top-level one), if the file has one.
  [[nodiscard]] const std::optional<CollNet>& collnet() const { return collnet_; }
  /// Called by the loader when the file states that the fabric reduces in the network.
  void set_collnet(CollNet collnet) { collnet_ = std::move(collnet); }
  /// The NICs' network technology and its terms ("nics"/"network"), if the file names one.
  [[nodiscard]] const std::optional<NetworkTerms>& network() const { return network_; }
  /// Called by the loader when the file names the NICs' network.
  void set_network(NetworkTerms network) { network_ = std::move(network); }
  /// The path from a GPU to its nearest NIC ("nics"/"gpu_path"), if the file states it; NCCL's
  /// model then takes a PCIe switch (PXB), as the cluster form wires each NIC.
  [[nodiscard]] std::optional<GpuNicPath> gpu_nic_path() const { return gpu_nic_path_; }
  /// Called by the loader when the file states the path.
  void set_gpu_nic_path(GpuNicPath path) { gpu_nic_path_ = path; }
  /// The nodes' host CPU ("node"/"host_cpu"), if the file states it; NCCL's model then takes an
  /// Intel host, as NCCL's tables do when nothing else is detected.
  [[nodiscard]] std::optional<HostCpu> host_cpu() const { return host_cpu_; }
  /// Called by the loader when the file states the host CPU.
  void set_host_cpu(HostCpu cpu) { host_cpu_ = cpu; }

  /// The links from GPU `src` to GPU `dst` (indices into gpus()), shortest by hop count, ties
  /// broken by vertex and link order so the result is deterministic. Routes never pass through a
  /// third GPU (GPUs do not forward traffic). Empty when src == dst. Thread-safe; a few
  /// microseconds even on 1024-node clusters (bidirectional breadth-first search).
  [[nodiscard]] std::vector<Hop> route(int src_gpu, int dst_gpu) const;

  /// The routes a transfer from `src_gpu` to `dst_gpu` spreads over evenly: between GPUs of
  /// different nodes that are each wired to several NICs (p5: 4 per GPU), one route through each
  /// NIC of the sender to the receiver's NIC of the same local index, as NCCL spreads a GPU's
  /// channels over its NICs; otherwise the single route().
  [[nodiscard]] std::vector<std::vector<Hop>> routes(int src_gpu, int dst_gpu) const;

  /// Tier figures for a collective over a group of `ranks` GPUs `stride` apart: of the groups of
  /// that shape that tile the GPUs (from 0, 1, ..., stride-1, then a block of ranks x stride
  /// later), the one over the most nodes (the first such), since the groups run in step and the
  /// slowest sets the pace; stride > 1 describes a data-parallel group of a plan whose
  /// tensor/pipeline ranks are consecutive. Precondition: 1 <= ranks, 1 <= stride and
  /// (ranks-1)*stride < gpu_count().
  /// Reads figures precomputed at load, O(ranks) with no graph search, and remembers the result
  /// per (ranks, stride, concurrency), so repeated calls cost a lookup. Thread-safe.
  /// `concurrency` names the groups that share the NICs with this one (CommTiers::shared_nic_bw).
  [[nodiscard]] CommTiers tiers(int ranks, int stride = 1, Concurrency concurrency = {}) const;

  /// The first GPU of the group tiers() describes: of the groups of `ranks` GPUs `stride` apart
  /// that tile the GPUs, the first over the most nodes. O(GPUs).
  [[nodiscard]] int slowest_group_start(int ranks, int stride) const;

 private:
  // The constructor's indexes of the graph (topology.cpp), in the order it builds them.
  std::vector<BytesPerSecond> index_node_links();
  void index_intra_node(const std::vector<int>& first_gpu, const std::vector<int>& per_node);
  void index_gpu_nics(const std::vector<int>& first_gpu, const std::vector<BytesPerSecond>& uplink);
  void index_latency_from_first();
  [[nodiscard]] CommTiers compute_tiers(int ranks, int stride, Concurrency concurrency, int start) const;
  // Shortest route between two vertices through no GPU other than the ends (ties by vertex and link order).
  [[nodiscard]] std::vector<Hop> route_between(VertexId from, VertexId to) const;
  void add_nic_figures(CommTiers& t, int ranks, int stride, Concurrency concurrency, int start) const;

  struct Graph;  // Boost.Graph adjacency list, kept out of this header
  std::string name_;
  std::string source_;
  GpuSpec gpu_;
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::vector<VertexId> gpus_;
  int node_count_ = 0;
  int gpus_per_node_ = 0;
  double oversubscription_ = 1.0;
  int trays_per_node_ = 1;
  int gpus_per_tray_ = 0;
  std::optional<GpuHourPrice> price_;
  std::optional<HostLink> host_link_;
  std::optional<CollNet> collnet_;
  std::optional<NetworkTerms> network_;
  std::optional<GpuNicPath> gpu_nic_path_;
  std::optional<HostCpu> host_cpu_;
  std::unique_ptr<Graph> graph_;
};

/// The kind of a vertex as files spell it: "gpu", "nic", "switch".
std::string_view to_string(VertexKind kind);
/// The tier of a link as files spell it: "intra-node", "nic", "fabric".
std::string_view to_string(LinkTier tier);

/// Loads a topology file (compact "cluster" form or explicit "graph" form), expands it, and
/// validates it: positive bandwidths, known vertices, no duplicates, connected, every GPU reachable.
/// `nodes` overrides the node count of a cluster-form file. `gpus_per_domain` keeps that many GPUs
/// (whole trays, from the first) of each scale-up domain, with their NICs (check_gpus_per_domain
/// states the rule). Bad input throws InputError naming the file, the JSON pointer and the rule.
Topology load_topology(const std::filesystem::path& file, std::optional<int> nodes = std::nullopt,
                       std::optional<int> gpus_per_domain = std::nullopt);

/// Loads one GPU file of the catalogue (topologies/gpus/NAME.json), checked as a topology's named
/// GPU is; bad input throws InputError naming the file, the JSON pointer and the rule.
GpuSpec load_gpu_file(const std::filesystem::path& file);

}  // namespace stepcast::topology
