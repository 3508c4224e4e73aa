// `stepcast resilience`: its options parsed into a study's typed inputs, and the study rendered.
#include "stepcast/report/resilience_command.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/explain.hpp"
#include "stepcast/core/text.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/planner/resilience_study.hpp"
#include "stepcast/report/calibration_warning.hpp"

namespace stepcast::report {

namespace {

template <class Q>
Q parse_option(const std::string& text, const std::string& option, Q (*parse)(std::string_view)) {
  try {
    return parse(text);
  } catch (const UnitError& e) {
    throw InputError(fmt::format("{} {}", option, e.what()));
  }
}

Seconds positive_duration(const std::string& text, const std::string& option) {
  const Seconds t = parse_option<Seconds>(text, option, parse_duration);
  if (!(t.value() > 0.0))
    throw InputError(fmt::format("{} \"{}\": must be a positive duration such as \"24 h\"", option, text));
  return t;
}

planner::FailureRate failure_rate(const ResilienceRequest& c) {
  const int given = (c.mtbf.empty() ? 0 : 1) + (c.failure_rate > 0.0 ? 1 : 0) + (c.spot_rate > 0.0 ? 1 : 0);
  if (given != 1) {
    throw InputError(
        "give exactly one failure rate: --mtbf \"24 h\" (one node's mean time between failures), --failure-rate "
        "(failures per GPU-hour) or --spot-interruption-rate (interruptions per node-hour)");
  }
  planner::FailureRate f;
  if (!c.mtbf.empty()) f.node_mtbf = positive_duration(c.mtbf, "--mtbf");
  f.per_gpu_hour = c.failure_rate;
  f.spot_per_node_hour = c.spot_rate;
  return f;
}

plan::Plan restore_plan_of(const ResilienceRequest& c, const PlanInputs& in) {
  plan::Plan p = plan::parse_plan(c.restore_plan, "--restore-plan");
  // The restored run keeps the saved run's precision and optimizer; only the split changes.
  p.precision = in.plan.precision;
  p.optimizer = in.plan.optimizer;
  p = plan::resolve(p, in.workload, p.dp > 0 ? 0 : in.plan.gpus());
  plan::validate(p, in.workload, p.gpus(), "--restore-plan");
  return p;
}

planner::ResilienceInputs parse_inputs(const ResilienceRequest& c, const PlanInputs& in) {
  planner::ResilienceInputs r;
  r.checkpoint.include_gradients = c.with_gradients;
  r.tier = cost::parse_storage(c.storage, "--storage");
  if (c.async) {
    r.staging = cost::AsyncStaging{
        parse_option<BytesPerSecond>(c.host_copy_bandwidth, "--host-copy-bandwidth", parse_bandwidth),
        parse_option<Bytes>(c.host_memory, "--host-memory", parse_bytes)};
    if (!(r.staging->copy_bandwidth_per_gpu.value() > 0.0)) throw InputError("--host-copy-bandwidth must be positive");
  }
  r.relaunch = parse_option<Seconds>(c.restart, "--restart", parse_duration);
  if (r.relaunch.value() < 0.0) throw InputError(fmt::format("--restart \"{}\": must not be negative", c.restart));
  r.failures = failure_rate(c);
  if (!c.restore_plan.empty()) r.restored_plan = restore_plan_of(c, in);
  if (!c.step_time.empty()) {
    r.step_time = positive_duration(c.step_time, "--step-time");
    r.step_time_origin = "--step-time";
  } else if (in.workload.has_shape()) {
    graph::StepOptions step_options = in.step_options();
    step_options.explain = false;
    const graph::StepPrediction p = graph::predict_step(in.workload, in.plan, *in.topology, step_options);
    warn_outside_calibration(step_options.calibration, c.plan.calibration, outside_calibration(p));
    r.step_time = p.step_time;
    r.step_time_origin = "predicted";
  }
  r.step_cv = c.step_cv;
  r.slow_probability = c.slow_probability;
  r.slow_factor = c.slow_factor;
  if (!c.input_bandwidth.empty()) {
    r.input_bandwidth = parse_option<BytesPerSecond>(c.input_bandwidth, "--input-bandwidth", parse_bandwidth);
    if (!(r.input_bandwidth->value() > 0.0)) throw InputError("--input-bandwidth must be positive");
  }
  r.decode_rate = c.decode_rate;
  r.token_bytes = c.token_bytes;
  return r;
}

std::string report_text(const PlanInputs& in, const planner::ResilienceStudy& r, bool explain) {
  const auto& topo = *in.topology;
  std::string out = fmt::format("Resilience: {} on {} ({} GPUs, {})\nPlan: {}\n\n", in.workload.name, topo.name(),
                                in.plan.gpus(), topo.gpu().name, plan::to_string(in.plan));
  const auto row = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<34} {}\n", label, value);
  };
  out += "Checkpoint (replicated state written once by its first replica; sharded state by every shard)\n";
  for (const auto& item : r.size.items) {
    if (item.content == cost::CheckpointContent::kGradients && item.total.value() == 0.0) continue;
    row(fmt::format("{} per rank", item.name), fmt::format("{:>12}", format_bytes(item.held_per_rank)));
  }
  out += cost::checkpoint_contents_note(r.size) + "\n";
  if (r.frozen_base_per_rank.value() > 0.0) {
    out +=
        "  peft=lora: the adapters' state alone (Megatron-Bridge's PEFT checkpoints); a restore also reads the "
        "frozen base weights\n";
    row("frozen base read at restore", fmt::format("{:>12} per rank", format_bytes(r.frozen_base_per_rank)));
  }
  row("model and optimizer state per rank", fmt::format("{:>12}  ({:.6g} B)", format_bytes(r.size.model_state_per_rank),
                                                        r.size.model_state_per_rank.value()));
  row("checkpoint per rank", fmt::format("{:>12}", format_bytes(r.size.held_per_rank)));
  row("written by the busiest rank", fmt::format("{:>12}  ({} of {} ranks write model state)",
                                                 format_bytes(r.size.written_per_rank), r.size.writers, r.size.gpus));
  row("checkpoint total (deduplicated)",
      fmt::format("{:>12}  ({:.6g} B)", format_bytes(r.size.total), r.size.total.value()));
  out += fmt::format("\nStorage: {} ({})\n", r.tier.name, r.tier.source);
  row("write time", format_seconds(r.write.time));
  row("restore time (same plan)", format_seconds(r.restore.time));
  row(r.stall.asynchronous ? "stall per checkpoint (async copy)" : "stall per checkpoint (synchronous)",
      format_seconds(r.stall.stall));
  if (!r.stall.note.empty()) out += fmt::format("  note: {}\n", r.stall.note);
  out += "\nFailures\n";
  row("job MTBF", planner::hours(r.failures.job_mtbf));
  row("restart (relaunch + restore)", format_seconds(r.restart));
  row("Young's interval", planner::hours(r.young));
  row("optimal interval (Daly)", planner::hours(r.daly));
  if (!r.interval_note.empty())
    out += fmt::format("  note: {}; interval used {}\n", r.interval_note, planner::hours(r.interval));
  row("goodput at that interval", fmt::format("{:.4f}", r.at_interval.goodput));
  row("time lost", fmt::format("writes {:.2f}%, rework {:.2f}%, restart {:.2f}%", 100.0 * r.at_interval.write_fraction,
                               100.0 * r.at_interval.rework_fraction, 100.0 * r.at_interval.restart_fraction));
  out += "\nGoodput over intervals\n";
  out += fmt::format("  {:>22}  {:>8}  {:>8}  {:>8}  {:>8}\n", "interval", "goodput", "writes", "rework", "restart");
  for (const auto& g : r.curve) {
    out += fmt::format("  {:>22}  {:>8.4f}  {:>7.2f}%  {:>7.2f}%  {:>7.2f}%\n", planner::hours(g.interval), g.goodput,
                       100.0 * g.write_fraction, 100.0 * g.rework_fraction, 100.0 * g.restart_fraction);
  }
  if (r.reshard) {
    out += fmt::format("\nRestore under {} ({} GPUs)\n", plan::to_string(*r.restored_plan), r.reshard->gpus);
    row("read per rank, ranged reads",
        fmt::format("{:>12}  in {}", format_bytes(r.reshard->needed_per_rank), format_seconds(r.reshard_ranged->time)));
    row("read per rank, whole files",
        fmt::format("{:>12}  in {}  ({} saved files per rank)", format_bytes(r.reshard->whole_file_per_rank),
                    format_seconds(r.reshard_whole->time), r.reshard->files_per_rank));
    row("same plan", fmt::format("{:>12}  in {}", format_bytes(r.size.held_per_rank), format_seconds(r.restore.time)));
  }
  if (r.step_time) {
    out += fmt::format("\nStep time ({}): {}\n", r.step_time_origin, format_seconds(*r.step_time));
    if (r.normal) {
      row("stragglers, normal",
          fmt::format("{} expected, slowdown {:.4f}", format_seconds(r.normal->expected_step), r.normal->slowdown));
      row("stragglers, log-normal", fmt::format("{} expected, slowdown {:.4f}",
                                                format_seconds(r.lognormal->expected_step), r.lognormal->slowdown));
      // The same synchronous wait, with the plan's real sync points, is what the engine simulates.
      row("by simulation",
          "stepcast simulate with this plan and --straggler step-cv=<same cv>, mean over --seed values");
    }
    if (r.slow)
      row("stragglers, slow GPUs",
          fmt::format("{} expected, slowdown {:.4f}", format_seconds(r.slow->expected_step), r.slow->slowdown));
  }
  if (r.input) {
    out += "\nInput pipeline\n";
    row("demand", fmt::format("{:.1f} samples/s, {}", r.input->demand_samples_per_s,
                              format_bandwidth(r.input->demand_bandwidth)));
    if (r.input->storage_samples_per_s)
      row("storage supply", fmt::format("{:.1f} samples/s", *r.input->storage_samples_per_s));
    if (r.input->decode_samples_per_s)
      row("decode supply", fmt::format("{:.1f} samples/s", *r.input->decode_samples_per_s));
    row("bound step time",
        fmt::format("{} (limited by {})", format_seconds(r.input->bound_step_time), r.input->limiter));
    if (r.input->input_bound) {
      out += fmt::format(
          "  warning: the input pipeline ({}), not the GPUs, limits this job: GPUs busy {:.1f}% of the time\n",
          r.input->limiter, 100.0 * r.input->gpu_busy_fraction);
    }
  }
  if (!r.input_note.empty()) out += fmt::format("\nnote: {}\n", r.input_note);
  if (explain) {
    out += "\nCheckpoint terms\n" + render_explanation(r.size.explanation);
    Explanation terms = r.stall.explanation;
    terms.push_back(r.restore.term);
    terms.push_back({"job MTBF", r.failures.formula, planner::hours(r.failures.job_mtbf)});
    terms.push_back({"Young's interval",
                     fmt::format("sqrt(2 delta M) = sqrt(2 x {:.6g} s x {:.6g} s)", r.stall.stall.value(),
                                 r.failures.job_mtbf.value()),
                     planner::hours(r.young)});
    const double x = r.stall.stall.value() / (2.0 * r.failures.job_mtbf.value());
    terms.push_back(
        {"Daly's interval",
         x < 1.0 ? fmt::format("sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta, delta/2M = {:.6g}", x)
                 : std::string("M, since delta >= 2M"),
         planner::hours(r.daly)});
    terms.push_back({"goodput (Daly 2006)",
                     fmt::format("tau / (M e^(R/M) (e^((tau+delta)/M) - 1)), tau = {:.6g} s, R = {:.6g} s",
                                 r.interval.value(), r.restart.value()),
                     fmt::format("{:.4f}", r.at_interval.goodput)});
    out += "\nStorage and failure terms\n" + render_explanation(terms);
    if (r.reshard) out += "\nRestore terms\n" + render_explanation(r.reshard->explanation);
    if (r.normal) out += "\nStraggler terms (normal)\n" + render_explanation(r.normal->explanation);
    if (r.lognormal) out += "\nStraggler terms (log-normal)\n" + render_explanation(r.lognormal->explanation);
    if (r.slow) out += "\nStraggler terms (slow GPUs)\n" + render_explanation(r.slow->explanation);
    if (r.input) out += "\nInput-pipeline terms\n" + render_explanation(r.input->explanation);
  }
  return out;
}

nlohmann::json straggler_json(const cost::StragglerEstimate& s) {
  return {{"expected_step_s", s.expected_step.value()}, {"slowdown", s.slowdown}};
}

nlohmann::json report_json(const PlanInputs& in, const planner::ResilienceStudy& r, bool explain) {
  nlohmann::json j;
  j["workload"] = in.workload.name;
  j["topology"] = in.topology->name();
  j["gpus"] = in.plan.gpus();
  j["plan"] = plan::to_string(in.plan);
  j["checkpoint_bytes_per_gpu"] = r.size.held_per_rank.value();
  j["model_state_bytes_per_gpu"] = r.size.model_state_per_rank.value();
  j["checkpoint_bytes_written_busiest_gpu"] = r.size.written_per_rank.value();
  j["checkpoint_bytes_total"] = r.size.total.value();
  j["checkpoint_writers"] = r.size.writers;
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : r.size.items) {
    items.push_back({{"name", item.name},
                     {"bytes_per_gpu", item.held_per_rank.value()},
                     {"total_bytes", item.total.value()},
                     {"sharded_over", item.sharded_over},
                     {"replicas", item.replicas}});
  }
  j["checkpoint_items"] = items;
  j["checkpoint_contents"] = std::string(trim(cost::checkpoint_contents_note(r.size)));
  j["frozen_base_read_per_rank_bytes"] = r.frozen_base_per_rank.value();
  j["storage"] = {{"name", r.tier.name}, {"bandwidth_Bps", r.tier.bandwidth.value()}, {"source", r.tier.source}};
  j["write_time_s"] = r.write.time.value();
  j["restore_time_s"] = r.restore.time.value();
  j["stall_s"] = r.stall.stall.value();
  j["asynchronous"] = r.stall.asynchronous;
  j["restart_s"] = r.restart.value();
  j["job_mtbf_s"] = r.failures.job_mtbf.value();
  j["young_interval_s"] = r.young.value();
  j["daly_interval_s"] = r.daly.value();
  j["optimal_interval_s"] = r.interval.value();
  j["goodput"] = r.at_interval.goodput;
  j["lost_fraction"] = {{"writes", r.at_interval.write_fraction},
                        {"rework", r.at_interval.rework_fraction},
                        {"restart", r.at_interval.restart_fraction}};
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& g : r.curve) curve.push_back({{"interval_s", g.interval.value()}, {"goodput", g.goodput}});
  j["goodput_curve"] = curve;
  if (r.reshard) {
    j["restore_under"] = {{"plan", plan::to_string(*r.restored_plan)},
                          {"gpus", r.reshard->gpus},
                          {"ranged_bytes_per_gpu", r.reshard->needed_per_rank.value()},
                          {"whole_file_bytes_per_gpu", r.reshard->whole_file_per_rank.value()},
                          {"files_per_gpu", r.reshard->files_per_rank},
                          {"ranged_time_s", r.reshard_ranged->time.value()},
                          {"whole_file_time_s", r.reshard_whole->time.value()}};
  }
  if (r.step_time) j["step_time_s"] = r.step_time->value();
  if (r.normal) j["stragglers_normal"] = straggler_json(*r.normal);
  if (r.lognormal) j["stragglers_lognormal"] = straggler_json(*r.lognormal);
  if (r.slow) j["stragglers_slow_gpus"] = straggler_json(*r.slow);
  if (r.input) {
    j["input_pipeline"] = {{"demand_samples_per_s", r.input->demand_samples_per_s},
                           {"demand_Bps", r.input->demand_bandwidth.value()},
                           {"bound_step_time_s", r.input->bound_step_time.value()},
                           {"limiter", r.input->limiter},
                           {"input_bound", r.input->input_bound}};
  }
  if (explain) {
    Explanation terms = r.size.explanation;
    for (const auto& t : r.stall.explanation) terms.push_back(t);
    j["explanation"] = explanation_json(terms);
  }
  return j;
}

}  // namespace

std::string resilience_command(const ResilienceRequest& c) {
  const PlanInputs in = load_plan_inputs(c.plan);
  const planner::ResilienceStudy r = planner::study_resilience(in.workload, in.plan, *in.topology, parse_inputs(c, in));
  return c.json ? report_json(in, r, c.explain).dump(2) + "\n" : report_text(in, r, c.explain);
}

}  // namespace stepcast::report
