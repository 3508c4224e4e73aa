// Loading a plan command's inputs into a resolved, validated plan, and their JSON renderings.
#include "stepcast/report/plan_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/set_echo.hpp"

namespace stepcast::report {

graph::StepOptions PlanInputs::step_options() const {
  graph::StepOptions options;
  options.memory = memory;
  options.calibration = calibration ? &*calibration : nullptr;
  return options;
}

namespace {

/// The GPUs a plan's degrees span (0 when dp is left to derive), for commands given neither
/// --gpus nor --nodes: "fsdp=8" means 8 GPUs, not every GPU the topology file lists.
int plan_gpus(const plan::Plan& p, const std::vector<std::string>& sets) {
  // A --set of the node count chooses the GPUs itself.
  const bool sets_nodes = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
    return s.starts_with("nodes=") || s.find(".nodes=") != std::string::npos;
  });
  return p.dp > 0 && !sets_nodes ? p.dp * p.tp * p.cp * p.pp : 0;
}

}  // namespace

int sequence_length(const workload::Workload& w, int given, const std::string& option) {
  if (given > 0 || !w.shape) return given;
  if (w.shape->seq_len > 0) return w.shape->seq_len;
  throw InputError(option, {},
                   fmt::format("{} states no training sequence length{}: give {} N (or seq=N in the plan) with the "
                               "length you train at",
                               w.name,
                               w.max_positions > 0 ? fmt::format(" (its {} positions are the longest context the "
                                                                 "model supports, not a training length)",
                                                                 w.max_positions)
                                                   : std::string(),
                               option));
}

int packed_documents(int doc_len, int seq, bool flash, int max_cp) {
  if (doc_len == 0) return 0;
  if (seq > 0 && doc_len > seq) {
    throw InputError(
        "--doc-len", {},
        fmt::format("{} tokens exceed the {}-token sequence: a packed document fits in its sequence", doc_len, seq));
  }
  if (!flash) {
    throw InputError("--doc-len", {},
                     "packed sequences run in the fused attention kernels, and these plans run without them "
                     "(--no-flash, or a GPU that has none)");
  }
  if (max_cp > 1) {
    throw InputError(
        "--doc-len", {},
        fmt::format("with --max-cp {} is not modelled: stepcast splits whole sequences over context-parallel "
                    "ranks, not the documents of a pack",
                    max_cp));
  }
  return doc_len;
}

std::string packed_documents_note(int doc_len) {
  return fmt::format("each sequence packs documents of {} tokens, attention within each (doc-len={} in every plan)",
                     doc_len, doc_len);
}

PlanInputs load_plan_inputs(const PlanOptions& o) {
  PlanInputs in;
  in.workload = workload::load_workload(workload_path(o.workload));
  const bool plan_is_file = o.plan.ends_with(".json");
  in.plan_origin = plan_is_file ? o.plan : std::string("--plan");
  plan::Plan p = o.plan.empty() ? plan::Plan{}
                 : plan_is_file ? plan::load_plan(o.plan)
                                : plan::parse_plan(o.plan, "--plan");
  int gpus = o.gpus > 0 || o.nodes > 0 ? o.gpus : plan_gpus(p, o.sets);
  if (!o.topology.empty()) {
    topology::SelectedTopology selected = topology::load_selected_topology(
        topology_path(o.topology), topology_request(o.nodes, gpus, o.sets, o.gpus_per_domain));
    gpus = selected.gpus;
    in.topology = std::move(selected.topology);
    in.set_echo = set_echo_text(topology_path(o.topology), o.sets);
  } else if (o.nodes > 0) {
    throw InputError("--nodes", {}, "--nodes needs --topology");
  } else if (o.gpus_per_domain > 0) {
    throw InputError("--gpus-per-domain", {}, "--gpus-per-domain chooses GPUs of a topology: it needs --topology");
  } else if (!o.sets.empty()) {
    throw InputError("--set", {}, "--set edits the topology file: it needs --topology");
  }
  if (!o.memory_margin.empty()) {
    if (!in.topology)
      throw InputError("--memory-margin", {}, "a margin below the GPU's memory needs --topology (the GPU)");
    in.memory.margin = cost::parse_memory_margin(o.memory_margin, "--memory-margin");
  } else if (in.topology) {
    in.memory.margin = cost::default_memory_margin();
  }
  if (in.topology) in.memory.fp8_any_layout = cost::fp8_gemm_any_layout(in.topology->gpu());
  if (o.global_batch > 0) p.global_batch = o.global_batch;
  if (o.seq > 0) p.seq_len = o.seq;
  if (p.seq_len == 0 && in.workload.shape) {
    p.seq_len = sequence_length(in.workload, 0);
    in.seq_len_origin = in.workload.seq_len_origin;
  }
  const bool batch_defaulted = p.global_batch == 0;
  if (!o.precision.empty()) p.precision = plan::parse_precision(o.precision, "--precision");
  if (!o.optimizer.empty()) p.optimizer = plan::parse_optimizer(o.optimizer, "--optimizer");
  if (!o.overhead.empty()) {
    try {
      in.memory.framework_overhead = parse_bytes(o.overhead);
    } catch (const UnitError& e) {
      throw InputError("--overhead", {}, e.what());
    }
    if (in.memory.framework_overhead.value() < 0.0) throw InputError("--overhead", {}, "must not be negative");
  }
  if (!o.calibration.empty()) in.calibration = cost::load_calibration(o.calibration);
  if (in.topology) {
    p = cost::with_default_flash(p, in.topology->gpu());
  } else if (!p.flash_given && in.workload.shape) {
    // Without a GPU to ask: what every GPU since the A100 runs, and Megatron-LM, PyTorch and
    // DeepSpeed train with.
    p.flash_attention = true;
    in.flash_note =
        "flash=on: FlashAttention assumed, as every GPU from the A100 on runs it (--topology asks the GPU; flash=off "
        "stores the attention scores)";
  }
  in.plan = plan::resolve(p, in.workload, gpus);
  plan::validate(in.plan, in.workload, gpus, in.plan_origin);
  if (batch_defaulted) {
    in.global_batch_note = fmt::format(
        "gbs={} is a default, one micro-batch per data-parallel rank and stage (dp x mbs x pp = {} x {} x {}); give "
        "--global-batch for the batch you train with",
        in.plan.global_batch, in.plan.dp, in.plan.micro_batch_size, in.plan.pp);
  }
  return in;
}

topology::TopologyRequest topology_request(int nodes, int gpus, const std::vector<std::string>& sets,
                                           int gpus_per_domain) {
  topology::TopologyRequest request;
  if (nodes > 0) request.nodes = nodes;
  if (gpus > 0) request.gpus = gpus;
  if (gpus_per_domain > 0) request.gpus_per_domain = gpus_per_domain;
  request.sets = sets;
  return request;
}

std::string plan_facts_text(const PlanInputs& in, bool batch_note) {
  const workload::Workload& w = in.workload;
  const auto count = [](double n) {
    return n < 1e9 ? fmt::format("{:.4g} million", n / 1e6) : fmt::format("{:.4g} billion", n / 1e9);
  };
  std::string out = in.set_echo + "Parameters: " + count(w.parameters);
  // The MTP modules are said apart: publishers often count the main model alone.
  std::vector<std::string> shares;
  if (w.active_parameters > 0.0 && w.active_parameters < w.parameters)
    shares.push_back(count(w.active_parameters) + " active per token");
  if (const double mtp = w.shape ? workload::mtp_parameter_count(*w.shape) : 0.0; mtp > 0.0)
    shares.push_back(count(mtp) + " of them in the MTP modules");
  if (!shares.empty()) out += fmt::format(" ({})", fmt::join(shares, "; "));
  out += "\n";
  if (!w.architecture.empty()) out += "Architecture: " + w.architecture + "\n";
  if (in.topology && in.topology->gpus_per_node() < in.topology->domain_gpus()) {
    const topology::Topology& t = *in.topology;
    out += fmt::format("Scale-up: {} of each NVLink domain's {} GPUs ({} of {} trays, with their NICs), {} domain(s)\n",
                       t.gpus_per_node(), t.domain_gpus(), t.gpus_per_node() / t.gpus_per_tray(), t.trays_per_node(),
                       t.node_count());
  }
  if (!in.seq_len_origin.empty()) {
    out += fmt::format("Note: seq={} is taken from the {}; give --seq for the length you train with\n", in.plan.seq_len,
                       in.seq_len_origin);
  }
  if (batch_note && !in.global_batch_note.empty()) out += "Note: " + in.global_batch_note + "\n";
  if (!in.flash_note.empty()) out += "Note: " + in.flash_note + "\n";
  return out;
}

void add_plan_facts_json(nlohmann::json& j, const PlanInputs& in) {
  j["parameters"] = in.workload.parameters;
  if (in.workload.active_parameters > 0.0 && in.workload.active_parameters < in.workload.parameters) {
    j["active_parameters"] = in.workload.active_parameters;
  }
  if (!in.seq_len_origin.empty()) j["seq_len_origin"] = in.seq_len_origin;
  if (!in.global_batch_note.empty()) j["global_batch_origin"] = "default";
  if (!in.workload.architecture.empty()) j["architecture"] = in.workload.architecture;
  if (in.topology && in.topology->gpus_per_node() < in.topology->domain_gpus()) {
    j["gpus_per_domain"] = in.topology->gpus_per_node();
    j["domain_gpus"] = in.topology->domain_gpus();
  }
}

nlohmann::json memory_json(const cost::MemoryBreakdown& m) {
  nlohmann::json j;
  j["parameters_bytes"] = m.parameters.value();
  j["gradients_bytes"] = m.gradients.value();
  j["optimizer_state_bytes"] = m.optimizer_state.value();
  j["activations_bytes"] = m.activations.value();
  j["temporary_buffers_bytes"] = m.temporary_buffers.value();
  j["working_set_bytes"] = m.working_set.value();
  if (m.quantized_copies.value() > 0.0) j["quantized_copies_bytes"] = m.quantized_copies.value();
  j["framework_overhead_bytes"] = m.framework_overhead.value();
  j["total_bytes"] = m.total.value();
  j["pipeline_stage"] = m.stage;
  return j;
}

nlohmann::json explanation_json(const Explanation& terms) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : terms) out.push_back({{"label", t.label}, {"formula", t.formula}, {"value", t.value}});
  return out;
}

}  // namespace stepcast::report
