// `stepcast topology`: loads and validates a topology file and summarises it: the GPU model and
// its figures, nodes, GPUs, links per tier, and the per-tier figures a collective over all GPUs sees.
#include "stepcast/report/topology_command.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <array>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/report/collective_format.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

namespace {

using topology::CommTiers;
using topology::LinkTier;
using topology::Topology;
using topology::VertexKind;

constexpr std::array kTiers{LinkTier::kIntraNode, LinkTier::kNic, LinkTier::kFabric};
constexpr std::array kKinds{VertexKind::kGpu, VertexKind::kNic, VertexKind::kSwitch};

// Links of one tier: how many, and the smallest and largest bandwidth among them.
struct TierLinks {
  int count = 0;
  BytesPerSecond min_bw;
  BytesPerSecond max_bw;
};

TierLinks links_of(const Topology& t, LinkTier tier) {
  TierLinks out;
  for (const topology::Link& l : t.links()) {
    if (l.tier != tier) continue;
    out.min_bw = out.count == 0 ? l.bandwidth : std::min(out.min_bw, l.bandwidth);
    out.max_bw = out.count == 0 ? l.bandwidth : std::max(out.max_bw, l.bandwidth);
    ++out.count;
  }
  return out;
}

int vertices_of(const Topology& t, VertexKind kind) {
  int n = 0;
  for (const topology::Vertex& v : t.vertices()) n += v.kind == kind ? 1 : 0;
  return n;
}

std::string tflops(FlopsPerSecond f) { return f.value() > 0.0 ? fmt::format("{:g}", f.value() / unit::kTera) : "-"; }

std::string bw_range(const TierLinks& l) {
  if (l.count == 0) return "";
  if (l.min_bw == l.max_bw) return fmt::format(", {} each way", format_bandwidth(l.min_bw));
  return fmt::format(", {} to {} each way", format_bandwidth(l.min_bw), format_bandwidth(l.max_bw));
}

// What NCCL's tuning model does with the host CPU across nodes (nccl_tuning_tables.hpp).
std::string_view host_cpu_effect(topology::HostCpu cpu) {
  switch (cpu) {
    case topology::HostCpu::kAmd:
      return "NCCL's network post overhead 2 us a ring step and its AMD LL caps across nodes";
    case topology::HostCpu::kIntel:
      return "NCCL's network post overhead 1 us a ring step and its Intel LL caps across nodes";
    case topology::HostCpu::kArm:
      return "NCCL's network post overhead 1 us a ring step, its first (Intel's) LL caps across nodes, and no tree "
             "correction on NVLS-Tree (Blackwell)";
  }
  STEPCAST_UNREACHABLE("every HostCpu is named");
}

std::string summary_text(const Topology& t, const std::string& path, const CommTiers& c) {
  const topology::GpuSpec& g = t.gpu();
  std::string out;
  out += fmt::format("topology      {} ({})\n", t.name(), path);
  out += fmt::format("source        {}\n", t.source());
  out += fmt::format("gpu           {}: {} HBM at {}\n", g.name, format_bytes(g.memory),
                     format_bandwidth(g.memory_bandwidth));
  out += fmt::format("peak TFLOP/s  fp32 {}, tf32 {}, bf16 {}, fp16 {}, fp8 {}", tflops(g.peak_fp32),
                     tflops(g.peak_tf32), tflops(g.peak_bf16), tflops(g.peak_fp16), tflops(g.peak_fp8));
  // Blackwell's block-scaled formats, shown where the file gives them.
  if (g.peak_mxfp8.value() > 0.0) out += fmt::format(", mxfp8 {}", tflops(g.peak_mxfp8));
  if (g.peak_nvfp4.value() > 0.0) out += fmt::format(", nvfp4 {}", tflops(g.peak_nvfp4));
  out += "\n";
  out +=
      fmt::format("nodes         {} (up to {} GPUs each), {} GPUs\n", t.node_count(), t.gpus_per_node(), t.gpu_count());
  if (t.trays_per_node() > 1) {
    out += fmt::format(
        "scale-up      each node above is one NVLink domain of {} trays of {} GPUs (--nodes counts trays){}\n",
        t.trays_per_node(), t.gpus_per_tray(),
        t.gpus_per_node() < t.domain_gpus()
            ? fmt::format("; the plan uses {} trays of each ({} of {} GPUs, with their NICs)",
                          t.gpus_per_node() / t.gpus_per_tray(), t.gpus_per_node(), t.domain_gpus())
            : "");
  }
  out += fmt::format("vertices      {} gpu, {} nic, {} switch\n", vertices_of(t, VertexKind::kGpu),
                     vertices_of(t, VertexKind::kNic), vertices_of(t, VertexKind::kSwitch));
  for (const LinkTier tier : kTiers) {
    const TierLinks l = links_of(t, tier);
    out += fmt::format("links {:<11} {}{}\n", topology::to_string(tier), l.count, bw_range(l));
  }
  if (t.price()) out += fmt::format("price         {} USD per GPU-hour ({})\n", t.price()->usd, t.price()->source);
  if (t.host_link()) {
    out += fmt::format("host link     {} each way per GPU, every GPU copying at once ({})\n",
                       format_bandwidth(t.host_link()->bandwidth_per_gpu), t.host_link()->source);
  }
  if (t.collnet()) {
    out += fmt::format("collnet       the switches reduce in the network; NCCL's CollNet {} ({})\n",
                       t.collnet()->enabled ? "on" : "off, NCCL's default (--set collnet.enabled=true turns it on)",
                       t.collnet()->source);
  }
  if (const auto& n = t.network()) {
    out += fmt::format(
        "network       {}: across nodes NCCL's latency x {:.3g}, its bandwidth x {:.3g}, point-to-point x {:.3g} "
        "({})\n",
        n->name, n->factors.latency_factor, n->factors.bandwidth_efficiency, n->factors.p2p_bandwidth_efficiency,
        n->file);
  } else {
    out += "network       not named: collectives across nodes take NCCL's model as it is\n";
  }
  if (const auto nic_path = t.gpu_nic_path()) {
    out +=
        fmt::format("GPU to NIC    {} (nics/gpu_path): {}\n", topology::to_string(*nic_path),
                    topology::through_pcie_switches(*nic_path) ? "through PCIe switches, NCCL keeps LL128 across nodes"
                                                               : "through the CPU, NCCL runs no LL128 across nodes");
  }
  if (const auto cpu = t.host_cpu()) {
    out += fmt::format("host CPU      {} (node/host_cpu): {}\n", topology::to_string(*cpu), host_cpu_effect(*cpu));
  }
  out += fmt::format("\nwhat a collective over {}{} GPUs sees ({} nodes, {} per node), each way:\n",
                     c.ranks == t.gpu_count() ? "all " : "the first ", c.ranks, c.nodes, c.ranks_per_node);
  out += fmt::format("  intra-node    {} GPU to GPU, latency {}\n", format_bandwidth(c.intra_bw),
                     format_seconds(c.intra_latency));
  out += fmt::format("  node out      {} ({})\n", format_bandwidth(c.node_bw), format_gbps(c.node_bw));
  out += fmt::format("  one GPU out   {} ({})\n", format_bandwidth(c.gpu_nic_bw), format_gbps(c.gpu_nic_bw));
  out += fmt::format("  inter-node    latency {} (longest route from rank 0)\n", format_seconds(c.inter_latency));
  out += fmt::format("  oversubscription {:g}\n", c.oversubscription);
  return out;
}

nlohmann::json summary_json(const Topology& t, const CommTiers& c) {
  const topology::GpuSpec& g = t.gpu();
  nlohmann::json vertices = nlohmann::json::object();
  for (const VertexKind kind : kKinds) vertices[std::string(topology::to_string(kind))] = vertices_of(t, kind);
  nlohmann::json links = nlohmann::json::object();
  for (const LinkTier tier : kTiers) {
    const TierLinks l = links_of(t, tier);
    links[std::string(topology::to_string(tier))] = {
        {"count", l.count}, {"min_bw_Bps", sig9(l.min_bw.value())}, {"max_bw_Bps", sig9(l.max_bw.value())}};
  }
  nlohmann::json out = {
      {"name", t.name()},
      {"source", t.source()},
      {"gpu",
       {{"name", g.name},
        {"memory_bytes", sig9(g.memory.value())},
        {"memory_bw_Bps", sig9(g.memory_bandwidth.value())},
        {"peak_fp32_flops", sig9(g.peak_fp32.value())},
        {"peak_tf32_flops", sig9(g.peak_tf32.value())},
        {"peak_bf16_flops", sig9(g.peak_bf16.value())},
        {"peak_fp16_flops", sig9(g.peak_fp16.value())},
        {"peak_fp8_flops", sig9(g.peak_fp8.value())}}},
      {"nodes", t.node_count()},
      {"gpus_per_node", t.gpus_per_node()},
      {"gpus", t.gpu_count()},
      {"vertices", vertices},
      {"links", links},
      {"price", t.price() ? nlohmann::json{{"usd_per_gpu_hour", t.price()->usd}, {"source", t.price()->source}}
                          : nlohmann::json()},
      {"collnet", t.collnet() ? nlohmann::json{{"enabled", t.collnet()->enabled}, {"source", t.collnet()->source}}
                              : nlohmann::json()},
      {"network", t.network()
                      ? nlohmann::json{{"name", t.network()->name},
                                       {"latency_factor", t.network()->factors.latency_factor},
                                       {"bandwidth_efficiency", t.network()->factors.bandwidth_efficiency},
                                       {"p2p_bandwidth_efficiency", t.network()->factors.p2p_bandwidth_efficiency},
                                       {"file", t.network()->file},
                                       {"source", t.network()->source}}
                      : nlohmann::json()},
      {"gpu_nic_path", t.gpu_nic_path() ? nlohmann::json(topology::to_string(*t.gpu_nic_path())) : nlohmann::json()},
      {"host_cpu", t.host_cpu() ? nlohmann::json(topology::to_string(*t.host_cpu())) : nlohmann::json()},
      {"host_link", t.host_link()
                        ? nlohmann::json{{"bandwidth_per_gpu_bytes_per_s", t.host_link()->bandwidth_per_gpu.value()},
                                         {"source", t.host_link()->source}}
                        : nlohmann::json()},
      {"tiers",
       {{"ranks", c.ranks},
        {"nodes", c.nodes},
        {"ranks_per_node", c.ranks_per_node},
        {"intra_bw_Bps", sig9(c.intra_bw.value())},
        {"intra_latency_s", sig9(c.intra_latency.value())},
        {"node_bw_Bps", sig9(c.node_bw.value())},
        {"gpu_nic_bw_Bps", sig9(c.gpu_nic_bw.value())},
        {"inter_latency_s", sig9(c.inter_latency.value())},
        {"oversubscription", sig9(c.oversubscription)}}},
  };
  // A plan on part of each scale-up domain: gpus_per_node above is the part, of this many.
  if (t.gpus_per_node() < t.domain_gpus()) out["domain_gpus"] = t.domain_gpus();
  if (g.peak_mxfp8.value() > 0.0) out["gpu"]["peak_mxfp8_flops"] = sig9(g.peak_mxfp8.value());
  if (g.peak_nvfp4.value() > 0.0) out["gpu"]["peak_nvfp4_flops"] = sig9(g.peak_nvfp4.value());
  return out;
}

}  // namespace

std::string topology_command(const TopologyRequest& o) {
  const std::optional<int> nodes = o.nodes_given ? std::optional<int>(o.nodes) : std::nullopt;
  if (nodes && *nodes < 1) throw InputError(fmt::format("--nodes must be at least 1, got {}", *nodes));
  const topology::SelectedTopology selected = topology::load_selected_topology(
      topology_path(o.topology), topology_request(nodes.value_or(0), o.gpus, o.sets, o.gpus_per_domain));
  const Topology& t = selected.topology;
  const CommTiers c = t.tiers(selected.gpus);
  return o.json ? summary_json(t, c).dump(2) + "\n"
                : set_echo_text(topology_path(o.topology), o.sets) + summary_text(t, o.topology, c);
}

}  // namespace stepcast::report
