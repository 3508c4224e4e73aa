// `stepcast predict`: step time, tokens/s, MFU and memory per GPU of a plan on a topology, with
// a breakdown that sums to the totals. A plan that does not fit still prints, then exits 3.
#include "stepcast/report/predict_command.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/group_spans.hpp"
#include "stepcast/report/kernel_table.hpp"
#include "stepcast/report/mfu_basis.hpp"
#include "stepcast/report/writers.hpp"

namespace stepcast::report {

namespace {

std::string predict_text(const PlanInputs& in, const graph::StepPrediction& p, const IntervalResult& interval,
                         const std::vector<GroupSpan>& spans, bool explain) {
  const auto& topo = *in.topology;
  std::string out = fmt::format("Prediction: {} on {} ({} GPUs, {})\nPlan: {}\n", in.workload.name, topo.name(),
                                in.plan.gpus(), topo.gpu().name, plan::to_string(in.plan));
  out += plan_facts_text(in) + "\n";
  const auto share = [&p](Seconds t) { return 100.0 * (t / p.step_time); };
  out += "Step time\n";
  const auto row = [&](std::string_view label, Seconds t) {
    out += fmt::format("  {:<40} {:>12}  {:5.1f}%\n", label, format_seconds(t), share(t));
  };
  row("compute", p.compute);
  row(fmt::format("pipeline bubble ({:.4f} of ideal)", p.bubble_fraction), p.bubble);
  for (const auto& term : p.communication) row(fmt::format("{} (exposed)", term.name), term.exposed);
  row("optimizer step", p.optimizer);
  row("step time", p.step_time);
  out += fmt::format("  {}\n", interval_text(interval, p.step_time));
  out += fmt::format("  {:<40} {:>12.6g}\n  {:<40} {:>12.4f}  ({})\n\n", "tokens/s", p.tokens_per_s, "MFU", p.mfu,
                     mfu_attention_basis(in.plan, in.workload));
  out += in.plan.pp == 1 ? std::string("Memory per GPU\n")
                         : fmt::format("Memory per GPU (pipeline stage {} of {}: the stage with the most bytes)\n",
                                       p.memory.stage, in.plan.pp);
  const auto mem = [&out](std::string_view label, Bytes b) {
    out += fmt::format("  {:<40} {:>12}\n", label, format_bytes(b));
  };
  mem("parameters", p.memory.parameters);
  mem("gradients", p.memory.gradients);
  mem("optimizer state", p.memory.optimizer_state);
  mem("activations", p.memory.activations);
  mem("temporary buffers", p.memory.temporary_buffers);
  mem("working set", p.memory.working_set);
  if (p.memory.quantized_copies.value() > 0.0) mem("low-precision weight copies + scaling", p.memory.quantized_copies);
  mem("framework overhead", p.memory.framework_overhead);
  mem("total (peak)", p.memory.total);
  out += fit_text(in, p.fit);
  if (explain) {
    out += "\nStep time terms\n" + render_explanation(p.explanation);
    out += "\nCompute terms\n" + render_explanation(p.compute_detail.explanation);
    if (!p.compute_detail.kernels.empty()) {
      Report kernels;
      kernels.tables.push_back(kernel_table(p.compute_detail, p.step_time));
      out += "\n" + render_text(kernels);
    }
    out += "\nMemory terms\n" + render_explanation(p.memory.explanation);
    Report groups;
    groups.tables.push_back(group_span_table(spans));
    out += "\n" + render_text(groups);
  }
  return out;
}

nlohmann::json predict_json(const PlanInputs& in, const graph::StepPrediction& p, const IntervalResult& interval,
                            const std::vector<GroupSpan>& spans, bool explain) {
  nlohmann::json j;
  j["workload"] = in.workload.name;
  j["topology"] = in.topology->name();
  j["gpu"] = in.topology->gpu().name;
  j["gpus"] = in.plan.gpus();
  j["plan"] = plan::to_string(in.plan);
  add_plan_facts_json(j, in);
  j["step_time_s"] = p.step_time.value();
  add_interval_json(j, interval);
  j["tokens_per_s"] = p.tokens_per_s;
  j["mfu"] = p.mfu;
  j["memory_per_gpu_bytes"] = p.memory.total.value();
  j["gpu_memory_bytes"] = p.fit.capacity.value();
  j["fits"] = p.fit.fits;
  j["headroom_bytes"] = p.fit.headroom.value();
  j["memory_margin_bytes"] = p.fit.margin.value();
  nlohmann::json comm = nlohmann::json::array();
  for (const auto& t : p.communication) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const graph::CallGroup& g : t.calls.groups)
      sizes.push_back({{"calls", g.count}, {"size_bytes", g.size.value()}});
    comm.push_back({{"name", t.name},
                    {"op", cost::to_string(t.op)},
                    {"algorithm", t.model},
                    {"group", t.role},
                    {"ranks", t.ranks},
                    {"stride", t.stride},
                    {"size_bytes", t.size.value()},
                    {"calls", t.calls.count()},
                    {"call_sizes", sizes},
                    {"time_s", t.time.value()},
                    {"exposed_s", t.exposed.value()},
                    {"sm_blocks", t.blocks}});
  }
  // The four time terms add up to step_time_s (compute_s holds compute_beside_collectives_s);
  // memory's terms add up to memory_per_gpu_bytes.
  j["breakdown"] = {
      {"compute_s", p.compute.value()},     {"compute_beside_collectives_s", p.compute_beside_collectives.value()},
      {"bubble_s", p.bubble.value()},       {"exposed_communication_s", p.exposed_communication.value()},
      {"optimizer_s", p.optimizer.value()}, {"communication", comm}};
  j["memory"] = memory_json(p.memory);
  j["groups"] = group_spans_json(spans);
  j["bubble_fraction"] = p.bubble_fraction;
  j["model_flops"] = p.compute_detail.flops.model.value();
  j["hardware_flops"] = p.compute_detail.flops.hardware.value();
  j["achieved_fraction"] = p.compute_detail.achieved_fraction;
  if (explain) {
    j["explanation"] = {{"step", explanation_json(p.explanation)},
                        {"compute", explanation_json(p.compute_detail.explanation)},
                        {"memory", explanation_json(p.memory.explanation)}};
    Report kernels;
    kernels.tables.push_back(kernel_table(p.compute_detail, p.step_time));
    j["kernels"] = nlohmann::json::parse(render_json(kernels)).at("tables").at(0).at("rows");
  }
  return j;
}

}  // namespace

CommandOutput predict_command(const PredictRequest& c) {
  CommandOutput out;
  const PlanInputs in = load_plan_inputs(c.plan);
  if (!in.workload.shape) {
    throw InputError(c.plan.workload, {},
                     "predict needs the model's shape (layers, hidden, heads, ...), not only a parameter count");
  }
  const auto& gpu = in.topology->gpu();
  cost::check_precision_supported(gpu, in.plan.precision, c.plan.topology);
  graph::StepOptions options = in.step_options();
  if (c.achieved_fraction > 0.0) options.achieved_fraction = c.achieved_fraction;
  const graph::StepGraph graph = graph::plan_step_graph(in.workload, in.plan, *in.topology, options);
  const graph::StepPrediction p = graph::evaluate_step(graph, in.workload, in.plan, *in.topology, options);
  const std::vector<GroupSpan> spans = group_spans(graph, *in.topology);
  warn_outside_calibration(options.calibration, c.plan.calibration, outside_calibration(p));
  const IntervalResult interval = interval_for(in, p.step_time, c.interval, c.achieved_fraction > 0.0);
  out.text = c.json ? predict_json(in, p, interval, spans, c.explain).dump(2) + "\n"
                    : predict_text(in, p, interval, spans, c.explain);
  out.refusal = refusal(p.memory, p.fit, gpu.name);
  return out;
}

}  // namespace stepcast::report
