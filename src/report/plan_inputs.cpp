// Loading a plan command's inputs into a resolved, validated plan, and their JSON renderings.
#include "stepcast/report/plan_inputs.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/report/data_path.hpp"

namespace stepcast::report {

cost::StepOptions PlanInputs::step_options() const {
  cost::StepOptions options;
  options.memory = memory;
  options.calibration = calibration ? &*calibration : nullptr;
  return options;
}

PlanInputs load_plan_inputs(const PlanOptions& o) {
  PlanInputs in;
  in.workload = workload::load_workload(data_path(o.workload));
  if (!o.topology.empty()) {
    in.topology = topology::load_topology(data_path(o.topology), o.nodes > 0 ? std::optional<int>(o.nodes) : std::nullopt);
  } else if (o.nodes > 0) {
    throw InputError("--nodes", {}, "--nodes needs --topology");
  }
  const bool plan_is_file = o.plan.ends_with(".json");
  in.plan_origin = plan_is_file ? o.plan : std::string("--plan");
  plan::Plan p = o.plan.empty() ? plan::Plan{} : plan_is_file ? plan::load_plan(o.plan) : plan::parse_plan(o.plan, "--plan");
  if (o.global_batch > 0) p.global_batch = o.global_batch;
  if (o.seq > 0) p.seq_len = o.seq;
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
  const int gpus = in.topology ? in.topology->gpu_count() : 0;
  in.plan = plan::resolve(p, in.workload, gpus);
  plan::validate(in.plan, in.workload, gpus, in.plan_origin);
  return in;
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
  return j;
}

nlohmann::json explanation_json(const Explanation& terms) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : terms) out.push_back({{"label", t.label}, {"formula", t.formula}, {"value", t.value}});
  return out;
}

}  // namespace stepcast::report
