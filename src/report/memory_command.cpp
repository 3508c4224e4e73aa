// `stepcast memory`: the memory per GPU of a plan, every term separate, and whether it fits.
#include "stepcast/report/memory_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/report/fit_hint.hpp"

namespace stepcast::report {

namespace {

std::string memory_text(const PlanInputs& in, const cost::MemoryBreakdown& m, const std::optional<cost::MemoryFit>& fit,
                        bool explain) {
  std::string out =
      fmt::format("Memory per GPU: {} with {}\n", in.workload.name, plan::to_string(in.plan)) + plan_facts_text(in);
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
  if (fit) {
    if (fit->within_margin())
      return out + fit_text(in.plan, m, *fit, in.workload) + (explain ? "\n" + render_explanation(m.explanation) : "");
    out += fit->fits ? fmt::format("Fits: yes, {} free of {} on {}\n", format_bytes(fit->headroom),
                                   format_bytes(fit->capacity), in.topology->gpu().name)
                     : fmt::format("Fits: NO, {} short of {} on {}\n", format_bytes(-fit->headroom),
                                   format_bytes(fit->capacity), in.topology->gpu().name);
    if (!fit->fits) out += fit_hint(in.plan, m, in.workload);
  }
  if (explain) out += "\n" + render_explanation(m.explanation);
  return out;
}

}  // namespace

CommandOutput memory_command(const MemoryRequest& c) {
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
