// Rendering NCCL's tuning model for `stepcast collective`: NCCL's choice per size, the time of
// every candidate (latency part and bandwidth part), and the sentence on why the winner won.
#include "stepcast/report/collective_nccl.hpp"

#include <fmt/format.h>
#include <cmath>

#include "stepcast/report/collective_format.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {
namespace {

using cost::NcclCandidate;
using cost::NcclChoice;

// The NCCL release whose tuning.cc the model restates (src/cost/nccl_tuning_tables.hpp).
constexpr std::string_view kModel = "NCCL 2.29 tuning model";

std::string name_of(const NcclCandidate& c) {
  return fmt::format("{}/{}", cost::to_string(c.algorithm), cost::to_string(c.protocol));
}

std::string request_text(const cost::NcclFilter& f) {
  return fmt::format("algorithm {}, protocol {}", f.algorithm ? cost::to_string(*f.algorithm) : "auto",
                     f.protocol ? cost::to_string(*f.protocol) : "auto");
}

// nccl-tests' algbw and busbw of the chosen candidate: size over the whole time (latency
// included), as nccl-tests reports them, not the candidate's bandwidth part alone.
BytesPerSecond algbw(Bytes size, const NcclCandidate& c) {
  return c.time.value() > 0.0 ? size / c.time : BytesPerSecond(0.0);
}

BytesPerSecond busbw(const NcclRun& run, Bytes size, const NcclCandidate& c) {
  return algbw(size, c) * cost::busbw_factor(run.op, run.tiers.ranks);
}

// Why a candidate lost to the chosen one: the part of its time that is longer.
std::string lost_because(const NcclCandidate& c, const NcclCandidate& w) {
  const Seconds more_latency = c.latency - w.latency;
  const Seconds more_bandwidth = c.bandwidth_time - w.bandwidth_time;
  if (more_bandwidth >= more_latency) return fmt::format("  +{} in its bandwidth part", format_seconds(more_bandwidth));
  return fmt::format("  +{} in its latency", format_seconds(more_latency));
}

std::string candidates_text(const NcclChoice& choice) {
  std::string out = fmt::format("  {:<20} {:>12}  {:>12}  {:>14}  {:>12}\n", "candidate", "time (us)", "latency (us)",
                                "bandwidth (us)", "algbw (GB/s)");
  for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
    const NcclCandidate& c = choice.candidates[i];
    const std::string mark = i == choice.winner ? " <- chosen" : c.enabled() ? lost_because(c, choice.chosen()) : "";
    if (!c.enabled()) {
      out += fmt::format("  {:<20} left out: {}\n", name_of(c), c.disabled_because);
      continue;
    }
    out += fmt::format("  {:<20} {:>12.2f}  {:>12.2f}  {:>14.2f}  {:>12.2f}{}\n", name_of(c),
                       c.time.value() * unit::kMega, c.latency.value() * unit::kMega,
                       c.bandwidth_time.value() * unit::kMega, c.algbw.value() / unit::kGiga, mark);
  }
  const NcclCandidate& w = choice.chosen();
  out += fmt::format("  {} latency: {} = {}\n", name_of(w), w.latency_formula, format_seconds(w.latency));
  out += fmt::format("  {} algbw (GB/s): {} = {}\n", name_of(w), w.bandwidth_formula, format_bandwidth(w.algbw));
  return out;
}

// The tier whose channels set the chosen candidate's bandwidth: NCCL's graph through the GPUs'
// NVLink (or PCIe) on one node, through the NICs the group's GPUs use across nodes.
std::string bound_text(const NcclRun& run, const NcclCandidate& w) {
  const cost::NcclSystem& s = run.system;
  if (w.algorithm == cost::NcclAlgorithm::kCollNetDirect || w.algorithm == cost::NcclAlgorithm::kCollNetChain) {
    const bool direct = w.algorithm == cost::NcclAlgorithm::kCollNetDirect;
    const auto& graph = direct ? s.collnet_direct : s.collnet_chain;
    return fmt::format(
        "in-network reduction (SHARP): {} CollNet {} channels, each head GPU's NIC {} a channel into the switches, {} "
        "at {}",
        graph.channels, direct ? "Direct" : "Chain", format_bandwidth(graph.bw_inter),
        direct ? "the node's GPUs exchanging with the heads" : "a chain of the node's GPUs behind it",
        format_bandwidth(graph.bw_intra));
  }
  if (w.algorithm == cost::NcclAlgorithm::kNvls && s.nodes > 1) {
    return fmt::format(
        "NVLink SHARP inside each node ({} channels x {}) and in-network reduction (SHARP, through CollNet) through "
        "each head GPU's NIC ({} a channel)",
        s.nvls_channels, format_bandwidth(s.nvls_channel_bw), format_bandwidth(s.nvls_inter_bw));
  }
  if (w.algorithm == cost::NcclAlgorithm::kNvls) {
    return fmt::format("NVLink SHARP: {} NVLS channels x {} through the NVSwitch", s.nvls_channels,
                       format_bandwidth(s.nvls_channel_bw));
  }
  if (w.algorithm == cost::NcclAlgorithm::kNvlsTree) {
    return fmt::format(
        "NVLink SHARP inside each node ({} channels x {}) and a tree of nodes through each head GPU's NIC ({} a "
        "channel)",
        s.nvls_channels, format_bandwidth(s.nvls_channel_bw), format_bandwidth(s.nvls_inter_bw));
  }
  if (s.nodes == 1) {
    return fmt::format("{}: {} channels x {} over each GPU's links", s.nvlink ? "NVLink" : "PCIe", s.channels,
                       format_bandwidth(s.channel_bw));
  }
  return fmt::format("the NICs: {} channels x {} through the {} NIC(s) of each node its GPUs use ({} in all)",
                     s.channels, format_bandwidth(s.channel_bw), run.tiers.nics,
                     format_bandwidth(run.tiers.group_nic_bw));
}

// What the discrete-event run saw beside the time it was given to play, the one the other commands
// charge: alone on idle links the two agree unless a link on the route is slower than NCCL's channels.
std::string simulated_text(const NcclRun& run, std::size_t i) {
  const Seconds des = run.simulated[i];
  const Seconds model = run.achieved[i].time;
  double gap = model.value() > 0.0 ? (des.value() - model.value()) / model.value() * 100.0 : 0.0;
  if (std::abs(gap) < 0.05) gap = 0.0;  // a rounding of the flows' ticks, printed as +0.0%, not -0.0%
  const std::string saw = std::abs(gap) < 1.0
                              ? "the flows met no link slower than NCCL's channels"
                              : "a link on the route is slower than NCCL's channels, so the flows took longer";
  return fmt::format("{} ({:+.1f}% against the {}: {})", format_seconds(des), gap,
                     run.network ? "achieved time" : "formula", saw);
}

std::string system_text(const NcclRun& run) {
  return fmt::format("what NCCL sees (derived from the topology; {}):\n{}", kModel,
                     render_explanation(run.system.derivation));
}

std::string single_text(const NcclRun& run, bool explain) {
  const NcclChoice& choice = run.choices.front();
  const NcclCandidate& w = choice.chosen();
  std::string out;
  out += fmt::format("collective   {}, NCCL's choice {} ({}; {}{})\n", cost::to_string(run.op), name_of(w),
                     request_text(run.filter), kModel, run.calibrated ? ", calibrated" : "");
  out += fmt::format("topology     {} ({})\n", run.topo->name(), run.topology_path);
  out += fmt::format("ranks        {}\n", placement_text(run.tiers));
  out += fmt::format("size         {}\n", bytes_text(run.sizes.front()));
  out += fmt::format("time         {} (latency {} + bandwidth {})\n", format_seconds(w.time), format_seconds(w.latency),
                     format_seconds(w.bandwidth_time));
  out += fmt::format("algbw        {}\n", format_bandwidth(algbw(run.sizes.front(), w)));
  out += fmt::format("busbw        {}\n", format_bandwidth(busbw(run, run.sizes.front(), w)));
  out += fmt::format("bound by     {}\n", bound_text(run, w));
  out += fmt::format("why          {}\n", choice.why);
  if (run.network) {
    const cost::CollectivePrice& a = run.achieved.front();
    out += fmt::format("network      {} ({}): NCCL's latency x {:.3g}, its bandwidth x {:.3g} across nodes\n",
                       run.network->name, run.network->file, run.network->factors.latency_factor,
                       run.network->factors.bandwidth_efficiency);
    out += fmt::format("achieved     {} (latency {} + bandwidth {}): what predict and simulate charge\n",
                       format_seconds(a.time), format_seconds(a.latency), format_seconds(a.bandwidth_time));
  }
  if (!run.simulated.empty()) out += fmt::format("simulated    {}\n", simulated_text(run, 0));
  if (explain)
    out += "\n" + system_text(run) + "\ncandidates (time = latency + S / algbw):\n" + candidates_text(choice);
  return out;
}

// The sizes where NCCL's choice changes, so users see the protocol and algorithm switch points.
std::string switch_points(const NcclRun& run) {
  std::string out;
  for (std::size_t i = 1; i < run.choices.size(); ++i) {
    const std::string before = name_of(run.choices[i - 1].chosen());
    const std::string after = name_of(run.choices[i].chosen());
    if (before != after)
      out += fmt::format("{}{} -> {} at {}", out.empty() ? "" : ", ", before, after, format_bytes(run.sizes[i]));
  }
  return out.empty() ? "# NCCL's choice is the same at every size\n" : "# NCCL's choice changes: " + out + "\n";
}

std::string sweep_text(const NcclRun& run, bool explain) {
  std::string out =
      fmt::format("# {}, NCCL's choice ({}) on {}: {}; {}{}\n", cost::to_string(run.op), request_text(run.filter),
                  run.topo->name(), placement_text(run.tiers), kModel, run.calibrated ? ", calibrated" : "");
  const bool des = !run.simulated.empty();
  if (run.network) {
    out += fmt::format(
        "# network {} ({}): across nodes NCCL's latency x {:.3g}, its bandwidth x {:.3g}; "
        "achieved is what predict and simulate charge\n",
        run.network->name, run.network->file, run.network->factors.latency_factor,
        run.network->factors.bandwidth_efficiency);
  }
  out += fmt::format("# {:>15}  {:>10}  {:>14}  {:>12}  {:>12}  {}{}{}\n", "size (B)", "size", "time (us)",
                     "algbw (GB/s)", "busbw (GB/s)", "algorithm/protocol", run.network ? "   achieved (us)" : "",
                     des ? "  simulated (us)" : "");
  for (std::size_t i = 0; i < run.sizes.size(); ++i) {
    const NcclCandidate& w = run.choices[i].chosen();
    const std::string achieved =
        run.network ? fmt::format(" {:>15.2f}", run.achieved[i].time.value() * unit::kMega) : "";
    const std::string simulated = des ? fmt::format("  {:>14.2f}", run.simulated[i].value() * unit::kMega) : "";
    out += fmt::format("  {:>15}  {:>10}  {:>14.2f}  {:>12.2f}  {:>12.2f}  {:<18}{}{}\n",
                       bytes_json(run.sizes[i]).dump(), format_bytes(run.sizes[i]), w.time.value() * unit::kMega,
                       algbw(run.sizes[i], w).value() / unit::kGiga, busbw(run, run.sizes[i], w).value() / unit::kGiga,
                       name_of(w), achieved, simulated);
  }
  out += switch_points(run);
  if (explain) {
    out += "\n" + system_text(run);
    for (std::size_t i = 0; i < run.sizes.size(); ++i) {
      out += fmt::format("\nat {}: {}\n{}", format_bytes(run.sizes[i]), run.choices[i].why,
                         candidates_text(run.choices[i]));
    }
  }
  return out;
}

nlohmann::json candidate_json(const NcclCandidate& c, bool explain) {
  nlohmann::json j = {{"algorithm", std::string(cost::to_string(c.algorithm))},
                      {"protocol", std::string(cost::to_string(c.protocol))},
                      {"enabled", c.enabled()}};
  if (!c.enabled()) {
    j["disabled_because"] = c.disabled_because;
    return j;
  }
  j["latency_s"] = sig9(c.latency.value());
  j["bandwidth_time_s"] = sig9(c.bandwidth_time.value());
  j["time_s"] = sig9(c.time.value());
  j["algbw_GBps"] = gbps(c.algbw);
  if (explain) {
    j["latency_formula"] = c.latency_formula;
    j["algbw_formula"] = c.bandwidth_formula;
  }
  return j;
}

nlohmann::json result_json(const NcclRun& run, std::size_t i, bool explain) {
  const NcclChoice& choice = run.choices[i];
  const NcclCandidate& w = choice.chosen();
  nlohmann::json candidates = nlohmann::json::array();
  for (const NcclCandidate& c : choice.candidates) candidates.push_back(candidate_json(c, explain));
  nlohmann::json j = {{"size_bytes", bytes_json(run.sizes[i])},
                      {"chosen_algorithm", std::string(cost::to_string(w.algorithm))},
                      {"chosen_protocol", std::string(cost::to_string(w.protocol))},
                      {"latency_time_s", sig9(w.latency.value())},
                      {"bandwidth_time_s", sig9(w.bandwidth_time.value())},
                      {"time_s", sig9(w.time.value())},
                      {"algbw_GBps", gbps(algbw(run.sizes[i], w))},
                      {"busbw_GBps", gbps(busbw(run, run.sizes[i], w))},
                      {"bound_by", bound_text(run, w)},
                      {"why", choice.why},
                      {"candidates", std::move(candidates)}};
  if (!run.simulated.empty()) j["simulated_time_s"] = sig9(run.simulated[i].value());
  if (run.network) {
    const cost::CollectivePrice& a = run.achieved[i];
    j["achieved"] = {{"latency_time_s", sig9(a.latency.value())},
                     {"bandwidth_time_s", sig9(a.bandwidth_time.value())},
                     {"time_s", sig9(a.time.value())}};
  }
  return j;
}

}  // namespace

std::string nccl_text(const NcclRun& run, bool explain) {
  return run.sweep ? sweep_text(run, explain) : single_text(run, explain);
}

nlohmann::json nccl_json(const NcclRun& run, bool explain) {
  const cost::NcclSystem& s = run.system;
  nlohmann::json system = {{"compute_capability", s.compute_capability},
                           {"nvlink", s.nvlink},
                           {"nvswitch", s.nvswitch},
                           {"channels", s.channels},
                           {"channel_bw_GBps", gbps(s.channel_bw)},
                           {"nvls_channels", s.nvls_channels},
                           {"nvls_channel_bw_GBps", gbps(s.nvls_channel_bw)},
                           {"nvls_inter_bw_GBps", gbps(s.nvls_inter_bw)},
                           {"collnet", s.collnet},
                           {"comm_channels", s.comm_channels}};
  if (s.collnet) {
    const auto graph = [](const cost::NcclGraph& g) {
      return nlohmann::json{
          {"channels", g.channels}, {"bw_intra_GBps", gbps(g.bw_intra)}, {"bw_inter_GBps", gbps(g.bw_inter)}};
    };
    system["collnet_heads"] = s.collnet_heads;
    system["collnet_direct"] = graph(s.collnet_direct);
    system["collnet_chain"] = graph(s.collnet_chain);
  }
  if (explain) system["derivation"] = explanation_json(s.derivation);
  nlohmann::json j = {
      {"op", std::string(cost::to_string(run.op))},
      {"algorithm", run.filter.algorithm ? std::string(cost::to_string(*run.filter.algorithm)) : "auto"},
      {"protocol", run.filter.protocol ? std::string(cost::to_string(*run.filter.protocol)) : "auto"},
      {"model", std::string(kModel)},
      {"calibrated", run.calibrated},
      {"topology", run.topo->name()},
      {"ranks", run.tiers.ranks},
      {"nodes", run.tiers.nodes},
      {"ranks_per_node", run.tiers.ranks_per_node},
      {"nccl_system", std::move(system)}};
  if (run.network) {
    j["network"] = {{"name", run.network->name},
                    {"file", run.network->file},
                    {"latency_factor", sig9(run.network->factors.latency_factor)},
                    {"bandwidth_efficiency", sig9(run.network->factors.bandwidth_efficiency)},
                    {"p2p_bandwidth_efficiency", sig9(run.network->factors.p2p_bandwidth_efficiency)}};
  }
  if (run.sweep) {
    j["results"] = nlohmann::json::array();
    for (std::size_t i = 0; i < run.sizes.size(); ++i) j["results"].push_back(result_json(run, i, explain));
  } else {
    j.update(result_json(run, 0, explain));
  }
  return j;
}

}  // namespace stepcast::report
