// `stepcast memory`: the memory per GPU of a plan, every term separate, and whether it fits; or,
// without a plan, the table of common plans a newcomer asks about first.
#include "stepcast/report/memory_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/fit_hint.hpp"

namespace stepcast::report {

namespace {

std::string memory_text(const PlanInputs& in, const cost::MemoryBreakdown& m, const std::optional<cost::MemoryFit>& fit,
                        bool explain) {
  std::string out = fmt::format("Memory per GPU: {} with {}\n", in.workload.name, plan::to_string(in.plan)) +
                    plan_facts_text(in, false);
  if (in.plan.pp > 1) {
    out += fmt::format("Pipeline stage {} of {}: the stage with the most bytes\n", m.stage, in.plan.pp);
  }
  const auto row = [&out](std::string_view label, Bytes b) {
    out += fmt::format("  {:<20} {:>12}  ({:.6g} B)\n", label, format_bytes(b), b.value());
  };
  row("parameters", m.parameters);
  row("gradients", m.gradients);
  row("optimizer state", m.optimizer_state);
  row("activations", m.activations);
  row("temporary buffers", m.temporary_buffers);
  row("working set", m.working_set);
  if (m.quantized_copies.value() > 0.0) row("low-precision copies", m.quantized_copies);
  row("framework overhead", m.framework_overhead);
  row("total (peak)", m.total);
  row("model state", m.model_state());
  if (!in.workload.shape) out += "  (activations unknown: the workload is a bare parameter count)\n";
  if (fit) out += fmt::format("On the {}: ", in.topology->gpu().name) + fit_text(in, *fit);
  if (explain) out += "\n" + render_explanation(m.explanation);
  return out;
}

/// The sequence lengths of the table: the one given or stated, else three common training
/// lengths the model supports.
std::vector<int> table_lengths(const workload::Workload& w, int given) {
  if (given > 0) return {given};
  if (!w.shape || w.shape->seq_len > 0) return {w.shape ? w.shape->seq_len : 0};
  std::vector<int> out;
  for (const int s : {2048, 4096, 8192}) {
    if (w.max_positions == 0 || s <= w.max_positions) out.push_back(s);
  }
  if (out.empty()) out.push_back(w.max_positions);
  return out;
}

struct Row {
  std::string plan;
  std::string label;
  std::string precision;
};

}  // namespace

CommandOutput memory_table(const MemoryRequest& c) {
  const PlanOptions& o = c.plan;
  const workload::Workload w = workload::load_workload(workload_path(o.workload));
  // "FSDP over the node": the GPUs asked for, else one node of the topology, else 8.
  int gpus = o.gpus;
  if (gpus == 0 && !o.topology.empty()) {
    const topology::SelectedTopology selected = topology::load_selected_topology(
        topology_path(o.topology), topology_request(o.nodes, 0, o.sets, o.gpus_per_domain));
    gpus = o.nodes > 0 ? selected.gpus : selected.topology.gpus_per_node();
  }
  if (gpus == 0) gpus = 8;
  const std::vector<int> lengths = table_lengths(w, o.seq);
  const std::vector<std::string> precisions =
      o.precision.empty() ? std::vector<std::string>{"bf16", "fp32"} : std::vector<std::string>{o.precision};
  std::vector<Row> rows;
  for (const std::string& precision : precisions) {
    const std::string label = precision == "bf16" ? "bf16 mixed" : precision;
    rows.push_back({fmt::format("dp={}", gpus), fmt::format("dp={} (DDP)", gpus), precision});
    if (gpus > 1) rows.push_back({fmt::format("fsdp={}", gpus), fmt::format("fsdp={}", gpus), precision});
    const std::string sharded = gpus > 1 ? fmt::format("fsdp={}", gpus) : fmt::format("dp={}", gpus);
    if (w.shape) {
      rows.push_back({sharded + ",recompute=selective", sharded + ",recompute=selective", precision});
      rows.push_back({sharded + ",recompute=full", sharded + ",recompute=full", precision});
    }
    for (Row& r : rows) {
      if (r.precision == precision) r.precision = label;
    }
  }
  // Each cell through the same loading as `memory --plan`, so a row is what that command prints.
  std::vector<std::vector<cost::MemoryBreakdown>> cells(rows.size());
  std::vector<std::vector<bool>> fits(rows.size());
  std::optional<PlanInputs> first;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const int s : lengths) {
      PlanOptions po = o;
      po.plan = rows[i].plan;
      po.seq = s;
      po.precision = rows[i].precision == "bf16 mixed" ? "bf16" : rows[i].precision;
      po.gpus = gpus;
      po.nodes = 0;
      PlanInputs in = load_plan_inputs(po);
      cells[i].push_back(cost::estimate_memory(in.workload, in.plan, in.memory));
      if (in.topology)
        fits[i].push_back(cost::check_fit(cells[i].back(), in.topology->gpu().memory, in.memory.margin).fits);
      if (!first) first.emplace(std::move(in));
    }
  }
  CommandOutput out;
  const bool stated = o.seq > 0 || (w.shape && w.shape->seq_len > 0);
  const std::string length_note =
      stated || !w.shape
          ? std::string()
          : fmt::format("the config states no training length{}: columns at common lengths; give --seq for yours",
                        w.max_positions > 0
                            ? fmt::format(" ({} positions is the longest context the model supports)", w.max_positions)
                            : std::string());
  std::optional<cost::MemoryFit> one_fit;
  if (first->topology) one_fit = cost::check_fit(cells[0][0], first->topology->gpu().memory, first->memory.margin);
  if (c.json) {
    nlohmann::json j;
    j["workload"] = w.name;
    j["gpus"] = gpus;
    add_plan_facts_json(j, *first);
    j.erase("global_batch_origin");
    if (!length_note.empty()) j["seq_len_note"] = length_note;
    if (one_fit) {
      j["gpu_memory_bytes"] = one_fit->capacity.value();
      j["memory_margin_bytes"] = one_fit->margin.value();
    }
    j["rows"] = nlohmann::json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (std::size_t k = 0; k < lengths.size(); ++k) {
        nlohmann::json r = {{"plan", rows[i].plan},
                            {"precision", rows[i].precision},
                            {"seq_len", lengths[k]},
                            {"total_bytes_per_gpu", cells[i][k].total.value()}};
        if (one_fit) r["fits"] = static_cast<bool>(fits[i][k]);
        j["rows"].push_back(r);
      }
    }
    out.text = j.dump(2) + "\n";
    return out;
  }
  // A bare parameter count has no attention to fuse or sequence to hold.
  const std::string kernels =
      w.shape ? fmt::format(", mbs=1, {}", first->plan.flash_attention ? "flash=on" : "flash=off") : std::string();
  std::string text = fmt::format("Memory per GPU: {} on {} GPUs, {}{}\n", w.name, gpus,
                                 plan::to_string(first->plan.optimizer), kernels) +
                     plan_facts_text(*first, false);
  if (!length_note.empty()) text += "Note: " + length_note + "\n";
  if (o.seq == 0 && w.shape && w.shape->seq_len > 0)
    text += fmt::format("Note: seq={} is taken from the {}; give --seq for the length you train with\n",
                        w.shape->seq_len, w.seq_len_origin);
  std::string header = fmt::format("{:<32} {:<11}", "plan", "precision");
  for (const int s : lengths) header += fmt::format(" {:>12}", w.shape ? fmt::format("seq {}", s) : "total");
  text += header + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line = fmt::format("{:<32} {:<11}", rows[i].label, rows[i].precision);
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      const std::string mark = one_fit && !fits[i][k] ? "*" : " ";
      line += fmt::format(" {:>11}{}", format_bytes(cells[i][k].total), mark);
    }
    while (line.ends_with(' ')) line.pop_back();
    text += line + "\n";
  }
  if (one_fit) {
    text += fmt::format("* does not fit the {}'s {} with {} kept free ({})\n", first->topology->gpu().name,
                        format_bytes(one_fit->capacity), format_bytes(one_fit->margin),
                        one_fit->default_margin ? "the default margin for allocator fragmentation" : "--memory-margin");
  }
  text += "Each cell is `stepcast memory --plan PLAN --precision P --seq S`, which shows every term.\n";
  out.text = text;
  return out;
}

CommandOutput memory_command(const MemoryRequest& c) {
  if (c.plan.plan.empty()) return memory_table(c);
  CommandOutput out;
  const PlanInputs in = load_plan_inputs(c.plan);
  const cost::MemoryBreakdown m = cost::estimate_memory(in.workload, in.plan, in.memory);
  std::optional<cost::MemoryFit> fit;
  if (in.topology) fit = cost::check_fit(m, in.topology->gpu().memory, in.memory.margin);
  if (c.json) {
    nlohmann::json j;
    j["workload"] = in.workload.name;
    j["plan"] = plan::to_string(in.plan);
    add_plan_facts_json(j, in);
    j.erase("global_batch_origin");
    j["gpus"] = in.plan.gpus();
    j["memory"] = memory_json(m);
    j["model_state_bytes_per_gpu"] = m.model_state().value();
    j["activation_bytes_per_gpu"] = m.activations.value();
    j["total_bytes_per_gpu"] = m.total.value();
    if (fit) {
      j["gpu_memory_bytes"] = fit->capacity.value();
      j["fits"] = fit->fits;
      j["headroom_bytes"] = fit->headroom.value();
      j["memory_margin_bytes"] = fit->margin.value();
    }
    if (c.explain) j["explanation"] = explanation_json(m.explanation);
    out.text = j.dump(2) + "\n";
  } else {
    out.text = memory_text(in, m, fit, c.explain);
  }
  if (fit) out.refusal = refusal(m, *fit, in.topology->gpu().name);
  return out;
}

}  // namespace stepcast::report
