// Reading topology files: the compact "cluster" form and the explicit "graph" form, told apart
// by the top-level "form" key. Every error names the file, the JSON pointer and the rule.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "connectivity.hpp"
#include "gpu_json.hpp"
#include "network_json.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/core/problems.hpp"
#include "stepcast/topology/cluster.hpp"
#include "stepcast/topology/topology.hpp"
#include "topology_document.hpp"

namespace stepcast::topology {
namespace {

Seconds latency_of(const JsonReader& r) {
  const Seconds s = r.quantity<Seconds>();
  if (s.value() < 0.0) r.fail(fmt::format("a latency must not be negative, got \"{}\"", r.string()));
  return s;
}

std::string source_of(const JsonReader& r) {
  std::string s = r.at("source").string();  // not const: returned by move
  if (s.empty()) r.at("source").fail("must say where the figures come from, got an empty string");
  return s;
}

int int_of(const JsonReader& r, std::int64_t limit) {
  const std::int64_t v = r.count();
  if (v > limit) r.fail(fmt::format("must be at most {}, got {}", limit, v));
  return static_cast<int>(v);
}

// Bounds that keep an expanded cluster within memory and int ranges. The largest clusters built
// hold about 200,000 GPUs; the graph and its routes take about 1 KB and 40 us per GPU to build.
constexpr std::int64_t kMaxNodes = 1 << 20;
constexpr std::int64_t kMaxGpus = 1 << 18;
constexpr std::int64_t kMaxPerNode = 1 << 10;
constexpr std::int64_t kMaxSms = 1 << 12;

// Ranges of real hardware, generous on both sides (an RTX 2080 Ti's 11 GB and 616 GB/s to a
// GB300's 288 GB and 8 TB/s; 1 Gbps Ethernet to 1.8 TB/s NVLink 5): a figure outside is a typo or
// a unit slip, refused rather than carried into every prediction.
constexpr Bytes kLeastGpuMemory = Bytes(1.0 * 1024 * 1024 * 1024);
constexpr Bytes kMostGpuMemory = Bytes(16.0 * 1024 * 1024 * 1024 * 1024);
constexpr std::string_view kGpuMemoryRange = "1 GiB to 16 TiB";
constexpr BytesPerSecond kLeastBandwidth = BytesPerSecond(1e8);
constexpr BytesPerSecond kMostBandwidth = BytesPerSecond(1e14);
constexpr std::string_view kBandwidthRange = "100 MB/s to 100 TB/s";

BytesPerSecond bandwidth_of(const JsonReader& r) {
  return r.plausible_quantity<BytesPerSecond>(kLeastBandwidth, kMostBandwidth, kBandwidthRange);
}

void read_peaks(const JsonReader& peak, GpuSpec& gpu) {
  ProblemList problems;
  problems.check([&] { peak.check_keys({"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"}); });
  problems.check([&] { gpu.peak_fp32 = peak.at("fp32").positive_quantity<FlopsPerSecond>(); });
  problems.check([&] { gpu.peak_tf32 = peak.at("tf32").positive_quantity<FlopsPerSecond>(); });
  problems.check([&] { gpu.peak_bf16 = peak.at("bf16").positive_quantity<FlopsPerSecond>(); });
  problems.check([&] { gpu.peak_fp16 = peak.at("fp16").positive_quantity<FlopsPerSecond>(); });
  // FP8 exists from Hopper on; an A100 file leaves it out and reads as zero.
  problems.check([&] {
    if (const auto fp8 = peak.find("fp8")) gpu.peak_fp8 = fp8->positive_quantity<FlopsPerSecond>();
  });
  // The block-scaled formats of Blackwell's tensor cores; a file for an older GPU leaves them out.
  problems.check([&] {
    if (const auto mx = peak.find("mxfp8")) gpu.peak_mxfp8 = mx->positive_quantity<FlopsPerSecond>();
  });
  problems.check([&] {
    if (const auto fp4 = peak.find("nvfp4")) gpu.peak_nvfp4 = fp4->positive_quantity<FlopsPerSecond>();
  });
  problems.throw_if_any();
}

// A GPU block: a catalogue file's whole document, or a topology's inline "gpu".
GpuSpec read_gpu_block(const JsonReader& r, bool in_catalogue) {
  GpuSpec gpu;
  ProblemList problems;
  problems.check([&] {
    r.check_keys({"name", "memory", "memory_bandwidth", "sm_count", "peak", "generation", "compute_capability",
                  "kernels", "source"});
  });
  problems.check([&] { gpu.name = r.at("name").string(); });
  problems.check([&] { (void)source_of(r); });
  problems.check(
      [&] { gpu.memory = r.at("memory").plausible_quantity<Bytes>(kLeastGpuMemory, kMostGpuMemory, kGpuMemoryRange); });
  problems.check([&] { gpu.memory_bandwidth = bandwidth_of(r.at("memory_bandwidth")); });
  problems.check([&] { gpu.sm_count = int_of(r.at("sm_count"), kMaxSms); });
  problems.check([&] { read_peaks(r.at("peak"), gpu); });
  problems.check([&] { read_gpu_extras(r, in_catalogue, gpu); });
  problems.throw_if_any();
  return gpu;
}

// The topology's "gpu": a name of the GPU catalogue (topologies/gpus/NAME.json) or an inline block.
GpuSpec read_gpu(const JsonReader& r) {
  if (!r.json().is_string()) return read_gpu_block(r, false);
  const std::filesystem::path file = catalogue_gpu_file(r);
  const nlohmann::json doc = read_json_file(file);
  return read_gpu_block(JsonReader(doc, file.string()), true);
}

void read_intra(const JsonReader& intra, ClusterSpec& spec) {
  intra.check_keys({"kind", "bandwidth_per_gpu", "latency", "source"});
  ProblemList problems;
  problems.check([&] {
    const JsonReader kind = intra.at("kind");
    const std::string kind_name = kind.string();
    if (kind_name == "nvswitch") {
      spec.intra_kind = IntraKind::kNvSwitch;
    } else if (kind_name == "pcie") {
      spec.intra_kind = IntraKind::kPcie;
    } else {
      kind.fail(fmt::format("unknown intra-node kind \"{}\" (expected nvswitch or pcie)", kind_name));
    }
  });
  problems.check([&] { spec.intra_bandwidth_per_gpu = bandwidth_of(intra.at("bandwidth_per_gpu")); });
  problems.check([&] { spec.intra_latency = latency_of(intra.at("latency")); });
  problems.check([&] { (void)source_of(intra); });
  problems.throw_if_any();
}

// "gpu_path": a GPU's path to its nearest NIC as `nvidia-smi topo -m` names it.
GpuNicPath read_gpu_nic_path(const JsonReader& r) {
  const std::string name = r.string();
  for (const GpuNicPath path :
       {GpuNicPath::kPix, GpuNicPath::kPxb, GpuNicPath::kPhb, GpuNicPath::kNode, GpuNicPath::kSys}) {
    if (name == to_string(path)) return path;
  }
  r.fail(
      fmt::format("unknown GPU-to-NIC path \"{}\" (expected PIX, PXB, PHB, NODE or SYS, as nvidia-smi topo -m "
                  "prints it)",
                  name));
}

// "host_cpu": {"vendor": "intel" | "amd" | "arm", "source": ...}, the nodes' host CPU.
HostCpu read_host_cpu(const JsonReader& r) {
  r.check_keys({"vendor", "source"});
  ProblemList problems;
  HostCpu cpu = HostCpu::kIntel;
  problems.check([&] {
    const JsonReader vendor = r.at("vendor");
    const std::string name = vendor.string();
    for (const HostCpu c : {HostCpu::kIntel, HostCpu::kAmd, HostCpu::kArm}) {
      if (name == to_string(c)) {
        cpu = c;
        return;
      }
    }
    vendor.fail(fmt::format(
        "unknown host CPU vendor \"{}\" (expected intel or amd for x86 hosts, arm for ARM ones such as NVIDIA Grace)",
        name));
  });
  problems.check([&] { (void)source_of(r); });
  problems.throw_if_any();
  return cpu;
}

void read_nics(const JsonReader& nics, ClusterSpec& spec) {
  nics.check_keys({"count", "bandwidth", "latency", "network", "gpu_path", "source"});
  ProblemList problems;
  problems.check([&] { spec.nics_per_node = int_of(nics.at("count"), kMaxPerNode); });
  problems.check([&] { spec.nic_bandwidth = bandwidth_of(nics.at("bandwidth")); });
  problems.check([&] { spec.nic_latency = latency_of(nics.at("latency")); });
  problems.check([&] {
    if (const auto network = nics.find("network")) spec.network = read_network(*network);
  });
  problems.check([&] {
    if (const auto path = nics.find("gpu_path")) spec.gpu_nic_path = read_gpu_nic_path(*path);
  });
  problems.check([&] { (void)source_of(nics); });
  problems.throw_if_any();
}

void read_gpu_to_nic(const JsonReader& g2n, ClusterSpec& spec) {
  g2n.check_keys({"bandwidth", "latency", "source"});
  ProblemList problems;
  problems.check([&] { spec.gpu_nic_bandwidth = bandwidth_of(g2n.at("bandwidth")); });
  problems.check([&] { spec.gpu_nic_latency = latency_of(g2n.at("latency")); });
  problems.check([&] { (void)source_of(g2n); });
  problems.throw_if_any();
}

HostLink read_host_link(const JsonReader& r) {
  r.check_keys({"bandwidth_per_gpu", "source"});
  HostLink link;
  ProblemList problems;
  problems.check([&] { link.bandwidth_per_gpu = bandwidth_of(r.at("bandwidth_per_gpu")); });
  problems.check([&] { link.source = source_of(r); });
  problems.throw_if_any();
  return link;
}

void read_node(const JsonReader& node, ClusterSpec& spec, bool in_scale_up_domain) {
  ProblemList problems;
  problems.check([&] {
    node.check_keys({"gpus_per_node", "intra", "nics", "gpu_to_nic", "host_link", "host_cpu", "source"});
  });
  problems.check([&] { spec.gpus_per_node = int_of(node.at("gpus_per_node"), kMaxPerNode); });
  problems.check([&] {
    if (!in_scale_up_domain) {
      read_intra(node.at("intra"), spec);
    } else if (const auto intra = node.find("intra")) {
      intra->fail(
          "a node inside a scale-up domain reaches every GPU of the domain through the domain's NVLink switches "
          "(/scale_up); drop \"intra\" or drop \"scale_up\"");
    }
  });
  problems.check([&] { read_nics(node.at("nics"), spec); });
  problems.check([&] {
    if (const auto g2n = node.find("gpu_to_nic")) read_gpu_to_nic(*g2n, spec);
  });
  problems.check([&] {
    if (const auto host = node.find("host_link")) spec.host_link = read_host_link(*host);
  });
  problems.check([&] {
    if (const auto cpu = node.find("host_cpu")) spec.host_cpu = read_host_cpu(*cpu);
  });
  problems.throw_if_any();
}

// The fabric's in-network reduction (topology.hpp, CollNet): whether NCCL's CollNet is on, and
// where the fact that the switches reduce comes from.
CollNet read_collnet(const JsonReader& r) {
  r.check_keys({"enabled", "source"});
  CollNet c;
  ProblemList problems;
  problems.check([&] { c.enabled = r.at("enabled").boolean(); });
  problems.check([&] { c.source = source_of(r); });
  problems.throw_if_any();
  return c;
}

void read_fabric(const JsonReader& fabric, ClusterSpec& spec) {
  const JsonReader fabric_kind = fabric.at("kind");
  const std::string fabric_name = fabric_kind.string();
  ProblemList problems;
  if (fabric_name == "single-switch") {
    problems.check([&] { fabric.check_keys({"kind", "collnet", "source"}); });
    spec.fabric = FabricKind::kSingleSwitch;
  } else if (fabric_name == "fat-tree") {
    problems.check([&] {
      fabric.check_keys({"kind", "nodes_per_leaf", "oversubscription", "switch_latency", "collnet", "source"});
    });
    spec.fabric = FabricKind::kFatTree;
    problems.check([&] { spec.nodes_per_leaf = int_of(fabric.at("nodes_per_leaf"), kMaxNodes); });
    problems.check([&] {
      const JsonReader ratio = fabric.at("oversubscription");
      spec.oversubscription = ratio.number();
      if (spec.oversubscription < 1.0) {
        ratio.fail(
            fmt::format("an oversubscription ratio is downlink over uplink capacity and must be at least 1, got {}",
                        spec.oversubscription));
      }
    });
    problems.check([&] { spec.switch_latency = latency_of(fabric.at("switch_latency")); });
  } else if (fabric_name == "rail-optimized") {
    problems.check([&] { fabric.check_keys({"kind", "switch_latency", "collnet", "source"}); });
    spec.fabric = FabricKind::kRailOptimized;
    problems.check([&] { spec.switch_latency = latency_of(fabric.at("switch_latency")); });
  } else {
    fabric_kind.fail(
        fmt::format("unknown fabric kind \"{}\" (expected single-switch, fat-tree or rail-optimized)", fabric_name));
  }
  problems.check([&] {
    if (const auto collnet = fabric.find("collnet")) spec.collnet = read_collnet(*collnet);
  });
  problems.check([&] { (void)source_of(fabric); });
  problems.throw_if_any();
}

// A scale-up (NVLink) domain of several nodes: its GPU count and each GPU's link to the domain's
// switches. The expansion then treats each domain as one node of the graph (cluster.hpp).
struct ScaleUp {
  int gpus = 0;
  BytesPerSecond bandwidth_per_gpu;
  Seconds latency;
};

ScaleUp read_scale_up(const JsonReader& r) {
  ScaleUp out;
  ProblemList problems;
  problems.check([&] { r.check_keys({"gpus", "bandwidth_per_gpu", "latency", "source"}); });
  problems.check([&] { out.gpus = int_of(r.at("gpus"), kMaxPerNode); });
  problems.check([&] { out.bandwidth_per_gpu = r.at("bandwidth_per_gpu").positive_quantity<BytesPerSecond>(); });
  problems.check([&] { out.latency = latency_of(r.at("latency")); });
  problems.check([&] { (void)source_of(r); });
  problems.throw_if_any();
  return out;
}

// --gpus-per-domain N: a plan uses the first N GPUs of every scale-up domain, in whole trays (a
// scheduler allocates nodes of the file, e.g. Slurm's --segment on NVL72 racks), at most one domain.
void check_gpus_per_domain(int used, const ClusterSpec& spec, int domain_gpus) {
  const int tray = spec.gpus_per_node;
  const auto refuse = [&](const std::string& why) {
    const std::string rule =
        domain_gpus > tray
            ? fmt::format("a plan uses whole trays of each domain of {} GPUs: {} to {} in steps of {}", domain_gpus,
                          tray, domain_gpus, tray)
            : fmt::format(
                  "each node of this file is its own domain of {} GPUs, so a plan uses all of it, or part of "
                  "one node with --gpus",
                  domain_gpus);
    throw InputError("--gpus-per-domain", {},
                     fmt::format("{} GPUs of each scale-up domain on {}: {} ({})", used, spec.name, why, rule));
  };
  if (used < 1) refuse("must be at least 1");
  if (used % tray != 0) {
    refuse(fmt::format("not a whole number of {} of {} GPUs (/node/gpus_per_node)",
                       domain_gpus > tray ? "trays" : "nodes", tray));
  }
  if (used > domain_gpus) refuse(fmt::format("more than the {} GPUs of one domain", domain_gpus));
}

// Folds the trays of each scale-up domain into one node of the expansion, after checking that the
// cluster is made of whole domains; with `used`, only the first `used` GPUs of each domain (whole
// trays, with their NICs) enter the graph.
void apply_scale_up(const JsonReader& root, const ScaleUp& domain, bool nodes_overridden, std::optional<int> used,
                    ClusterSpec& spec) {
  const JsonReader gpus = root.at("scale_up").at("gpus");
  if (domain.gpus % spec.gpus_per_node != 0) {
    gpus.fail(fmt::format(
        "a scale-up domain holds whole nodes: {} GPUs is not a multiple of the {} GPUs of /node/gpus_per_node",
        domain.gpus, spec.gpus_per_node));
  }
  const int trays = domain.gpus / spec.gpus_per_node;
  const std::string count = nodes_overridden ? std::string("--nodes") : std::string("/nodes");
  if (static_cast<std::int64_t>(spec.nodes) * spec.gpus_per_node < domain.gpus) {
    gpus.fail(fmt::format(
        "the scale-up domain of {} GPUs is larger than the cluster: {} ({}) x {} GPUs per node = {} GPUs", domain.gpus,
        count, spec.nodes, spec.gpus_per_node, static_cast<std::int64_t>(spec.nodes) * spec.gpus_per_node));
  }
  if (spec.nodes % trays != 0) {
    gpus.fail(fmt::format(
        "the cluster must hold whole scale-up domains: {} ({}) is not a multiple of the {} nodes of one domain "
        "({} GPUs / {} per node)",
        count, spec.nodes, trays, domain.gpus, spec.gpus_per_node));
  }
  if (spec.fabric == FabricKind::kFatTree) {
    // A leaf switch serves whole domains once the domain is the expansion's node.
    if (spec.nodes_per_leaf % trays != 0) {
      root.at("fabric")
          .at("nodes_per_leaf")
          .fail(fmt::format(
              "with a scale-up domain of {} nodes, a leaf must serve whole domains: {} is not a multiple of {}", trays,
              spec.nodes_per_leaf, trays));
    }
    spec.nodes_per_leaf /= trays;
  }
  if (used) check_gpus_per_domain(*used, spec, domain.gpus);
  const int kept_trays = used.value_or(domain.gpus) / spec.gpus_per_node;
  spec.gpus_per_tray = spec.gpus_per_node;
  spec.domain_trays = trays;
  spec.gpus_per_node = kept_trays * spec.gpus_per_tray;
  spec.nics_per_node *= kept_trays;
  spec.nodes /= trays;
  spec.intra_kind = IntraKind::kNvSwitch;
  spec.intra_bandwidth_per_gpu = domain.bandwidth_per_gpu;
  spec.intra_latency = domain.latency;
}

Topology read_cluster(const JsonReader& root, std::optional<int> nodes_override, std::optional<int> gpus_per_domain) {
  ClusterSpec spec;
  ProblemList problems;
  problems.check([&] {
    root.check_keys({"form", "name", "source", "gpu", "node", "nodes", "fabric", "scale_up", "price"});
  });
  problems.check([&] { spec.name = root.at("name").string(); });
  problems.check([&] { spec.source = source_of(root); });
  problems.check([&] { spec.gpu = read_gpu(root.at("gpu")); });
  std::optional<ScaleUp> scale_up;
  problems.check([&] {
    if (const auto r = root.find("scale_up")) scale_up = read_scale_up(*r);
  });
  problems.check([&] { read_node(root.at("node"), spec, root.has("scale_up")); });
  problems.check([&] {
    // The file's own count must be valid even when --nodes replaces it.
    const int in_file = int_of(root.at("nodes"), kMaxNodes);
    spec.nodes = nodes_override ? *nodes_override : in_file;
  });
  problems.check([&] { read_fabric(root.at("fabric"), spec); });
  problems.throw_if_any();
  const std::int64_t gpus = std::int64_t{spec.nodes} * spec.gpus_per_node;
  if (gpus > kMaxGpus) {
    const JsonReader where = nodes_override ? root : root.at("nodes");
    where.fail(
        fmt::format("{}{} nodes x {} GPUs per node = {} GPUs, above stepcast's limit of {} GPUs (beyond the largest "
                    "clusters built)",
                    nodes_override ? "--nodes: " : "", spec.nodes, spec.gpus_per_node, gpus, kMaxGpus));
  }
  if (scale_up) {
    apply_scale_up(root, *scale_up, nodes_override.has_value(), gpus_per_domain, spec);
  } else if (gpus_per_domain) {
    check_gpus_per_domain(*gpus_per_domain, spec, spec.gpus_per_node);
  }
  return make_cluster(spec);
}

VertexKind vertex_kind(const JsonReader& r) {
  const std::string k = r.string();
  if (k == "gpu") return VertexKind::kGpu;
  if (k == "nic") return VertexKind::kNic;
  if (k == "switch") return VertexKind::kSwitch;
  r.fail(fmt::format("unknown vertex kind \"{}\" (expected gpu, nic or switch)", k));
}

LinkTier link_tier(const JsonReader& r) {
  const std::string k = r.string();
  for (const LinkTier t : {LinkTier::kIntraNode, LinkTier::kNic, LinkTier::kFabric}) {
    if (k == to_string(t)) return t;
  }
  r.fail(fmt::format("unknown link tier \"{}\" (expected intra-node, nic or fabric)", k));
}

// A link's tier when the file leaves it out: inside one node, a NIC's link out, or the fabric.
LinkTier default_tier(const Vertex& a, const Vertex& b) {
  if (a.node >= 0 && a.node == b.node) return LinkTier::kIntraNode;
  if (a.kind == VertexKind::kSwitch && b.kind == VertexKind::kSwitch) return LinkTier::kFabric;
  return LinkTier::kNic;
}

Topology read_graph(const JsonReader& root) {
  ProblemList problems;
  problems.check([&] { root.check_keys({"form", "name", "source", "gpu", "vertices", "links", "collnet", "price"}); });
  std::string name;
  std::string source;
  GpuSpec gpu;
  problems.check([&] { name = root.at("name").string(); });
  problems.check([&] { source = source_of(root); });
  problems.check([&] { gpu = read_gpu(root.at("gpu")); });

  std::vector<Vertex> vertices;
  std::map<std::string, std::pair<VertexId, std::string>> by_name;  // name -> id, pointer
  int nodes = 0;
  const auto vertex_list = root.at("vertices").elements();
  for (const JsonReader& v : vertex_list) {
    Vertex vertex;
    problems.check([&] {
      v.check_keys({"name", "kind", "node"});
      const JsonReader name_r = v.at("name");
      vertex.name = name_r.string();
      if (vertex.name.empty()) name_r.fail("a vertex needs a non-empty name");
      vertex.kind = vertex_kind(v.at("kind"));
      if (const auto node = v.find("node")) {
        const std::int64_t n = node->integer();
        if (n < 0 || n >= kMaxNodes) node->fail(fmt::format("a node index must be in 0..{}, got {}", kMaxNodes - 1, n));
        vertex.node = static_cast<int>(n);
      } else if (vertex.kind == VertexKind::kGpu) {
        v.fail("missing required field \"node\" (every GPU sits in a node)");
      }
      const auto [it, inserted] =
          by_name.emplace(vertex.name, std::pair{static_cast<VertexId>(vertices.size()), v.pointer()});
      if (!inserted)
        name_r.fail(fmt::format("duplicate vertex name \"{}\" (first at {})", vertex.name, it->second.second));
    });
    if (vertex.kind == VertexKind::kGpu) nodes = std::max(nodes, vertex.node + 1);
    vertices.push_back(std::move(vertex));
  }
  // The checks below read the vertices, so they wait until every vertex is well formed.
  problems.throw_if_any();
  if (nodes == 0) root.at("vertices").fail("no GPU vertices (a topology needs at least one vertex of kind \"gpu\")");
  // Nodes are numbered 0..N-1 by their GPUs, so ranks run node by node without gaps.
  std::vector<bool> has_gpu(static_cast<std::size_t>(nodes), false);
  for (const Vertex& v : vertices) {
    if (v.kind == VertexKind::kGpu) has_gpu[static_cast<std::size_t>(v.node)] = true;
  }
  for (int n = 0; n < nodes; ++n) {
    if (has_gpu[static_cast<std::size_t>(n)]) continue;
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      if (vertices[i].kind != VertexKind::kGpu || vertices[i].node <= n) continue;
      vertex_list[i].at("node").fail(fmt::format(
          "node {} holds no GPU, yet this GPU sits in node {} (nodes are numbered 0..N-1 by the GPUs in them, "
          "without gaps)",
          n, vertices[i].node));
    }
  }
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (vertices[i].node >= nodes) {
      vertex_list[i].at("node").fail(
          fmt::format("node {} holds no GPU (nodes are numbered 0..N-1 by the GPUs in them; here N = {})",
                      vertices[i].node, nodes));
    }
  }

  std::vector<Link> links;
  for (const JsonReader& l : root.at("links").elements()) {
    problems.check([&] {
      l.check_keys({"a", "b", "bandwidth", "latency", "tier", "source"});
      Link link;
      VertexId ends[2] = {0, 0};
      for (int i = 0; i < 2; ++i) {
        const JsonReader end = l.at(i == 0 ? "a" : "b");
        const std::string vname = end.string();
        const auto it = by_name.find(vname);
        if (it == by_name.end())
          end.fail(
              fmt::format("link to unknown vertex \"{}\" (every link end must name a vertex of /vertices)", vname));
        ends[i] = it->second.first;
      }
      if (ends[0] == ends[1])
        l.fail(fmt::format("self-link: both ends are \"{}\" (a link joins two different vertices)",
                           vertices[ends[0]].name));
      link.a = ends[0];
      link.b = ends[1];
      link.bandwidth = bandwidth_of(l.at("bandwidth"));
      link.latency = latency_of(l.at("latency"));
      link.tier = l.has("tier") ? link_tier(l.at("tier")) : default_tier(vertices[link.a], vertices[link.b]);
      if (const auto s = l.find("source")) (void)s->string();
      links.push_back(link);
    });
  }
  problems.throw_if_any();
  if (auto problem = find_connectivity_problem(vertices, links)) root.at("links").fail(*problem);
  Topology topology(name, source, std::move(gpu), std::move(vertices), std::move(links), 1.0);
  // A graph has no fabric block: its switches' in-network reduction is stated at the top level.
  if (const auto collnet = root.find("collnet")) topology.set_collnet(read_collnet(*collnet));
  return topology;
}

// The optional price of a GPU-hour: a plain number under a key that names its unit (money has no
// unit string in stepcast's parser), and where it comes from.
Topology with_price(const JsonReader& root, Topology topology) {
  if (const auto price = root.find("price")) {
    price->check_keys({"usd_per_gpu_hour", "source"});
    GpuHourPrice p;
    p.usd = price->at("usd_per_gpu_hour").positive_number();
    p.source = source_of(*price);
    topology.set_price(std::move(p));
  }
  return topology;
}

}  // namespace

GpuSpec load_gpu_file(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  return read_gpu_block(JsonReader(doc, file.string()), true);
}

Topology load_topology(const std::filesystem::path& file, std::optional<int> nodes,
                       std::optional<int> gpus_per_domain) {
  return topology_from_document(read_json_file(file), file, nodes, gpus_per_domain);
}

Topology topology_from_document(const nlohmann::json& doc, const std::filesystem::path& file, std::optional<int> nodes,
                                std::optional<int> gpus_per_domain) {
  const JsonReader root(doc, file.string());
  if (!doc.is_object()) root.fail(fmt::format("expected a JSON object at the top level, got {}", doc.type_name()));
  if (nodes && (*nodes < 1 || *nodes > kMaxNodes)) {
    throw InputError(file.string(), {}, fmt::format("--nodes must be in 1..{}, got {}", kMaxNodes, *nodes));
  }
  if (!root.has("form") &&
      (root.has("shape") || root.has("parameters") || root.has("model_type") || root.has("hidden_size"))) {
    root.fail(
        "this file is a workload (a model's shape), not a topology: pass it as --workload, and the cluster as "
        "--topology");
  }
  const JsonReader form = root.at("form");
  const std::string form_name = form.string();
  if (form_name == "cluster") return with_price(root, read_cluster(root, nodes, gpus_per_domain));
  if (form_name == "graph") {
    if (nodes || gpus_per_domain) {
      throw InputError(file.string(), "/form",
                       fmt::format("{} applies to cluster-form files only; this file is in graph form, whose nodes "
                                   "are the \"node\" fields of /vertices",
                                   nodes ? "--nodes" : "--gpus-per-domain"));
    }
    return with_price(root, read_graph(root));
  }
  form.fail(
      fmt::format("unknown form \"{}\" (expected \"cluster\": a node template times a node count, or "
                  "\"graph\": explicit vertices and links)",
                  form_name));
}

}  // namespace stepcast::topology
