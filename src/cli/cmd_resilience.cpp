// `stepcast resilience`: checkpoint size and write/restore time, the optimal checkpoint interval
// for a failure or preemption rate and the goodput it yields, stragglers and the input-pipeline bound.
#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <optional>

#include "calibration_warning.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/text.hpp"
#include "stepcast/cost/checkpoint.hpp"
#include "stepcast/cost/failure.hpp"
#include "stepcast/cost/input_pipeline.hpp"
#include "stepcast/cost/step.hpp"
#include "stepcast/cost/straggler.hpp"

namespace stepcast::cli {

namespace {

// The interval factors of the goodput curve, around the optimum.
constexpr std::array kCurveFactors{0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0};
// Token ids fit uint16 below this vocabulary size (Megatron-LM's indexed datasets pick uint16
// then, int32 otherwise).
constexpr int kUint16Vocab = 65536;

struct ResilienceCommand {
  PlanOptions plan;
  std::string storage;
  std::string mtbf;
  double failure_rate = 0.0;
  double spot_rate = 0.0;
  // Daly (2006) uses R = 10 min in his worked examples; a job relaunch on a managed cluster
  // (scheduling, container start, NCCL init) is of that order. The restore read is added to it.
  std::string restart = "10 min";
  bool async = false;
  // PCIe 4.0 x16, the A100/H100 SXM host link: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s per
  // direction, an upper bound for a pinned device-to-host copy.
  std::string host_copy_bandwidth = "31.5 GB/s";
  // p4d.24xlarge: 1152 GiB of host memory per node (AWS instance specifications).
  std::string host_memory = "1152 GiB";
  bool with_gradients = false;
  std::string restore_plan;
  std::string step_time;
  std::string input_bandwidth;
  double decode_rate = 0.0;
  double token_bytes = 0.0;
  double step_cv = 0.0;
  double slow_probability = 0.0;
  double slow_factor = 2.0;
  bool json = false;
  bool explain = false;
  std::string output;
};

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
  if (!(t.value() > 0.0)) throw InputError(fmt::format("{} \"{}\": must be a positive duration such as \"24 h\"", option, text));
  return t;
}

std::string hours(Seconds t) { return fmt::format("{} ({:.2f} h)", format_seconds(t), t.value() / unit::kSecondsPerHour); }

struct FailureSource {
  Seconds job_mtbf;
  std::string formula;
};

FailureSource failure_source(const ResilienceCommand& c, int nodes, int gpus) {
  const int given = (c.mtbf.empty() ? 0 : 1) + (c.failure_rate > 0.0 ? 1 : 0) + (c.spot_rate > 0.0 ? 1 : 0);
  if (given != 1) {
    throw InputError(
        "give exactly one failure rate: --mtbf \"24 h\" (one node's mean time between failures), --failure-rate "
        "(failures per GPU-hour) or --spot-interruption-rate (interruptions per node-hour)");
  }
  if (!c.mtbf.empty()) {
    const Seconds node = positive_duration(c.mtbf, "--mtbf");
    return {cost::job_mtbf_from_node_mtbf(node, nodes), fmt::format("node MTBF / nodes = {} / {}", hours(node), nodes)};
  }
  if (c.failure_rate > 0.0) {
    return {cost::job_mtbf_from_gpu_rate(c.failure_rate, gpus),
            fmt::format("1 h / (failures per GPU-hour x GPUs) = 1 h / ({:g} x {})", c.failure_rate, gpus)};
  }
  return {cost::job_mtbf_from_spot_rate(c.spot_rate, nodes),
          fmt::format("1 h / (interruptions per node-hour x nodes) = 1 h / ({:g} x {})", c.spot_rate, nodes)};
}

plan::Plan restore_plan_of(const ResilienceCommand& c, const PlanInputs& in) {
  plan::Plan p = plan::parse_plan(c.restore_plan, "--restore-plan");
  // The restored run keeps the saved run's precision and optimizer; only the split changes.
  p.precision = in.plan.precision;
  p.optimizer = in.plan.optimizer;
  p = plan::resolve(p, in.workload, p.dp > 0 ? 0 : in.plan.gpus());
  plan::validate(p, in.workload, p.gpus(), "--restore-plan");
  return p;
}

// The restore of one rank's `per_rank` bytes by every rank of a `gpus`-rank plan at once.
cost::TransferLoad all_ranks_read(Bytes per_rank, int gpus, int gpus_per_node) {
  return {per_rank, per_rank * static_cast<double>(std::min(gpus, gpus_per_node)), per_rank * static_cast<double>(gpus)};
}

struct Report {
  cost::CheckpointSize size;
  cost::StorageTier tier;
  cost::TransferTime write;
  cost::TransferTime restore;
  cost::CheckpointStall stall;
  Seconds relaunch;
  Seconds restart;  // relaunch + restore
  FailureSource failures;
  Seconds young;
  Seconds daly;
  Seconds interval;  // Daly's, or the background write time when that is longer
  std::string interval_note;
  cost::GoodputBreakdown at_interval;
  std::vector<cost::GoodputBreakdown> curve;
  std::optional<plan::Plan> restored_plan;
  std::optional<cost::RestoreReads> reshard;
  std::optional<cost::TransferTime> reshard_ranged;
  std::optional<cost::TransferTime> reshard_whole;
  std::optional<Seconds> step_time;
  std::string step_time_origin;
  std::optional<cost::StragglerEstimate> normal;
  std::optional<cost::StragglerEstimate> lognormal;
  std::optional<cost::StragglerEstimate> slow;
  std::optional<cost::InputPipelineBound> input;
  std::string input_note;
};

Report compute(const ResilienceCommand& c, const PlanInputs& in) {
  const topology::Topology& topo = *in.topology;
  const int gpus = in.plan.gpus();
  const int gpn = topo.gpus_per_node();
  const int nodes = (gpus + gpn - 1) / gpn;
  const cost::StateBytesPerParameter bytes = cost::state_bytes_per_parameter(in.plan.precision, in.plan.optimizer);
  cost::CheckpointOptions options;
  options.include_gradients = c.with_gradients;

  Report r;
  r.size = cost::checkpoint_size(in.workload.parameters, in.plan, bytes, gpn, options);
  r.tier = cost::parse_storage(c.storage, "--storage");
  r.write = cost::transfer_time({r.size.written_per_rank, r.size.busiest_node_written, r.size.total}, r.tier, "write time");
  r.restore = cost::transfer_time(all_ranks_read(r.size.held_per_rank, gpus, gpn), r.tier, "restore time");
  std::optional<cost::AsyncStaging> staging;
  if (c.async) {
    staging = cost::AsyncStaging{parse_option<BytesPerSecond>(c.host_copy_bandwidth, "--host-copy-bandwidth", parse_bandwidth),
                                 parse_option<Bytes>(c.host_memory, "--host-memory", parse_bytes)};
    if (!(staging->copy_bandwidth_per_gpu.value() > 0.0)) throw InputError("--host-copy-bandwidth must be positive");
  }
  r.stall = cost::checkpoint_stall(r.size, r.write, staging);

  r.relaunch = parse_option<Seconds>(c.restart, "--restart", parse_duration);
  if (r.relaunch.value() < 0.0) throw InputError(fmt::format("--restart \"{}\": must not be negative", c.restart));
  r.restart = r.relaunch + r.restore.time;
  r.failures = failure_source(c, nodes, gpus);
  // A stall of zero (nothing to write) would make every interval optimal; the write of a few
  // bytes still takes longer than this floor.
  const Seconds stall = std::max(r.stall.stall, Seconds(1e-9));
  r.young = cost::young_interval(stall, r.failures.job_mtbf);
  r.daly = cost::daly_interval(stall, r.failures.job_mtbf);
  r.interval = r.daly;
  if (r.stall.asynchronous && r.stall.background_write > r.interval) {
    r.interval = r.stall.background_write;
    r.interval_note = fmt::format("the background write ({}) outlasts Daly's interval ({}): checkpoints cannot come "
                                  "more often than one write each",
                                  format_seconds(r.stall.background_write), format_seconds(r.daly));
  }
  r.at_interval = cost::expected_goodput(r.interval, r.stall.stall, r.restart, r.failures.job_mtbf);
  r.curve = cost::goodput_curve(r.interval, kCurveFactors, r.stall.stall, r.restart, r.failures.job_mtbf);

  if (!c.restore_plan.empty()) {
    r.restored_plan = restore_plan_of(c, in);
    r.reshard = cost::restore_reads(in.workload.parameters, in.plan, *r.restored_plan, bytes, options);
    r.reshard_ranged = cost::transfer_time(all_ranks_read(r.reshard->needed_per_rank, r.reshard->gpus, gpn), r.tier,
                                           "restore, ranged reads");
    r.reshard_whole = cost::transfer_time(all_ranks_read(r.reshard->whole_file_per_rank, r.reshard->gpus, gpn), r.tier,
                                          "restore, whole files");
  }

  if (!c.step_time.empty()) {
    r.step_time = positive_duration(c.step_time, "--step-time");
    r.step_time_origin = "--step-time";
  } else if (in.workload.has_shape()) {
    cost::StepOptions step_options = in.step_options();
    step_options.explain = false;
    const cost::StepPrediction p = cost::predict_step(in.workload, in.plan, topo, step_options);
    warn_outside_calibration(step_options.calibration, c.plan.calibration, outside_calibration(p));
    r.step_time = p.step_time;
    r.step_time_origin = "predicted";
  }
  if (r.step_time) {
    if (c.step_cv > 0.0) {
      r.normal = cost::normal_stragglers(*r.step_time, *r.step_time * c.step_cv, gpus);
      r.lognormal = cost::lognormal_stragglers(*r.step_time, c.step_cv, gpus);
    }
    if (c.slow_probability > 0.0) r.slow = cost::slow_fraction_stragglers(*r.step_time, c.slow_probability, c.slow_factor, gpus);
    const int seq = in.plan.seq_len > 0 ? in.plan.seq_len : 0;
    if (seq == 0) {
      r.input_note = "input pipeline: no sequence length (give --seq)";
    } else {
      double token_bytes = c.token_bytes;
      if (token_bytes <= 0.0) token_bytes = in.workload.shape && in.workload.shape->vocab <= kUint16Vocab ? 2.0 : 4.0;
      cost::InputPipelineInputs ip;
      ip.global_batch_samples = static_cast<double>(in.plan.global_batch);
      ip.step_time = *r.step_time;
      ip.bytes_per_sample = cost::tokenized_sample_bytes(seq, token_bytes);
      ip.nodes = nodes;
      if (!c.input_bandwidth.empty()) {
        ip.read_bandwidth = parse_option<BytesPerSecond>(c.input_bandwidth, "--input-bandwidth", parse_bandwidth);
        if (!(ip.read_bandwidth->value() > 0.0)) throw InputError("--input-bandwidth must be positive");
      }
      if (c.decode_rate > 0.0) ip.decode_samples_per_s_per_node = c.decode_rate;
      r.input = cost::input_pipeline_bound(ip);
    }
  } else {
    r.input_note =
        "stragglers and input pipeline: no step time (the workload is a bare parameter count; give --step-time)";
  }
  return r;
}

std::string report_text(const PlanInputs& in, const Report& r, bool explain) {
  const auto& topo = *in.topology;
  std::string out = fmt::format("Resilience: {} on {} ({} GPUs, {})\nPlan: {}\n\n", in.workload.name, topo.name(),
                                in.plan.gpus(), topo.gpu().name, plan::to_string(in.plan));
  const auto row = [&out](std::string_view label, const std::string& value) { out += fmt::format("  {:<34} {}\n", label, value); };
  out += "Checkpoint (replicated state written once by its first replica; sharded state by every shard)\n";
  for (const auto& item : r.size.items) {
    if (item.name == "gradients" && item.total.value() == 0.0) continue;
    row(fmt::format("{} per rank", item.name), fmt::format("{:>12}", format_bytes(item.held_per_rank)));
  }
  out += cost::checkpoint_contents_note(r.size) + "\n";
  row("model and optimizer state per rank", fmt::format("{:>12}  ({:.6g} B)", format_bytes(r.size.model_state_per_rank),
                                                        r.size.model_state_per_rank.value()));
  row("checkpoint per rank", fmt::format("{:>12}", format_bytes(r.size.held_per_rank)));
  row("written by the busiest rank", fmt::format("{:>12}  ({} of {} ranks write model state)", format_bytes(r.size.written_per_rank),
                                                 r.size.writers, r.size.gpus));
  row("checkpoint total (deduplicated)", fmt::format("{:>12}  ({:.6g} B)", format_bytes(r.size.total), r.size.total.value()));
  out += fmt::format("\nStorage: {} ({})\n", r.tier.name, r.tier.source);
  row("write time", format_seconds(r.write.time));
  row("restore time (same plan)", format_seconds(r.restore.time));
  row(r.stall.asynchronous ? "stall per checkpoint (async copy)" : "stall per checkpoint (synchronous)",
      format_seconds(r.stall.stall));
  if (!r.stall.note.empty()) out += fmt::format("  note: {}\n", r.stall.note);
  out += "\nFailures\n";
  row("job MTBF", hours(r.failures.job_mtbf));
  row("restart (relaunch + restore)", format_seconds(r.restart));
  row("Young's interval", hours(r.young));
  row("optimal interval (Daly)", hours(r.daly));
  if (!r.interval_note.empty()) out += fmt::format("  note: {}; interval used {}\n", r.interval_note, hours(r.interval));
  row("goodput at that interval", fmt::format("{:.4f}", r.at_interval.goodput));
  row("time lost", fmt::format("writes {:.2f}%, rework {:.2f}%, restart {:.2f}%", 100.0 * r.at_interval.write_fraction,
                               100.0 * r.at_interval.rework_fraction, 100.0 * r.at_interval.restart_fraction));
  out += "\nGoodput over intervals\n";
  out += fmt::format("  {:>22}  {:>8}  {:>8}  {:>8}  {:>8}\n", "interval", "goodput", "writes", "rework", "restart");
  for (const auto& g : r.curve) {
    out += fmt::format("  {:>22}  {:>8.4f}  {:>7.2f}%  {:>7.2f}%  {:>7.2f}%\n", hours(g.interval), g.goodput,
                       100.0 * g.write_fraction, 100.0 * g.rework_fraction, 100.0 * g.restart_fraction);
  }
  if (r.reshard) {
    out += fmt::format("\nRestore under {} ({} GPUs)\n", plan::to_string(*r.restored_plan), r.reshard->gpus);
    row("read per rank, ranged reads", fmt::format("{:>12}  in {}", format_bytes(r.reshard->needed_per_rank),
                                                   format_seconds(r.reshard_ranged->time)));
    row("read per rank, whole files", fmt::format("{:>12}  in {}  ({} saved files per rank)",
                                                  format_bytes(r.reshard->whole_file_per_rank),
                                                  format_seconds(r.reshard_whole->time), r.reshard->files_per_rank));
    row("same plan", fmt::format("{:>12}  in {}", format_bytes(r.size.held_per_rank), format_seconds(r.restore.time)));
  }
  if (r.step_time) {
    out += fmt::format("\nStep time ({}): {}\n", r.step_time_origin, format_seconds(*r.step_time));
    if (r.normal) {
      row("stragglers, normal", fmt::format("{} expected, slowdown {:.4f}", format_seconds(r.normal->expected_step), r.normal->slowdown));
      row("stragglers, log-normal", fmt::format("{} expected, slowdown {:.4f}", format_seconds(r.lognormal->expected_step),
                                                r.lognormal->slowdown));
      // The same synchronous wait, with the plan's real sync points, is what the engine simulates.
      row("by simulation", "stepcast simulate with this plan and --straggler step-cv=<same cv>, mean over --seed values");
    }
    if (r.slow) row("stragglers, slow GPUs", fmt::format("{} expected, slowdown {:.4f}", format_seconds(r.slow->expected_step), r.slow->slowdown));
  }
  if (r.input) {
    out += "\nInput pipeline\n";
    row("demand", fmt::format("{:.1f} samples/s, {}", r.input->demand_samples_per_s, format_bandwidth(r.input->demand_bandwidth)));
    if (r.input->storage_samples_per_s) row("storage supply", fmt::format("{:.1f} samples/s", *r.input->storage_samples_per_s));
    if (r.input->decode_samples_per_s) row("decode supply", fmt::format("{:.1f} samples/s", *r.input->decode_samples_per_s));
    row("bound step time", fmt::format("{} (limited by {})", format_seconds(r.input->bound_step_time), r.input->limiter));
    if (r.input->input_bound) {
      out += fmt::format("  warning: the input pipeline ({}), not the GPUs, limits this job: GPUs busy {:.1f}% of the time\n",
                         r.input->limiter, 100.0 * r.input->gpu_busy_fraction);
    }
  }
  if (!r.input_note.empty()) out += fmt::format("\nnote: {}\n", r.input_note);
  if (explain) {
    out += "\nCheckpoint terms\n" + render_explanation(r.size.explanation);
    Explanation terms = r.stall.explanation;
    terms.push_back(r.restore.term);
    terms.push_back({"job MTBF", r.failures.formula, hours(r.failures.job_mtbf)});
    terms.push_back({"Young's interval", fmt::format("sqrt(2 delta M) = sqrt(2 x {:.6g} s x {:.6g} s)", r.stall.stall.value(),
                                                     r.failures.job_mtbf.value()),
                     hours(r.young)});
    const double x = r.stall.stall.value() / (2.0 * r.failures.job_mtbf.value());
    terms.push_back({"Daly's interval",
                     x < 1.0 ? fmt::format("sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta, delta/2M = {:.6g}", x)
                             : std::string("M, since delta >= 2M"),
                     hours(r.daly)});
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

nlohmann::json report_json(const PlanInputs& in, const Report& r, bool explain) {
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
    items.push_back({{"name", item.name}, {"bytes_per_gpu", item.held_per_rank.value()}, {"total_bytes", item.total.value()},
                     {"sharded_over", item.sharded_over}, {"replicas", item.replicas}});
  }
  j["checkpoint_items"] = items;
  j["checkpoint_contents"] = std::string(trim(cost::checkpoint_contents_note(r.size)));
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

void run(const ResilienceCommand& c) {
  const PlanInputs in = load_plan_inputs(c.plan);
  const Report r = compute(c, in);
  emit(c.json ? report_json(in, r, c.explain).dump(2) + "\n" : report_text(in, r, c.explain), c.output);
}

}  // namespace

void add_resilience_command(CLI::App& app) {
  auto command = std::make_shared<ResilienceCommand>();
  CLI::App* sub = app.add_subcommand(
      "resilience",
      "Checkpoint size and write/restore time, the optimal checkpoint interval (Young 1974, Daly 2006) and goodput, "
      "stragglers and the input-pipeline bound of a plan");
  add_plan_options(*sub, command->plan, true, false);
  sub->add_option("--storage", command->storage,
                  "Checkpoint storage: a bandwidth (\"2 GB/s\", a shared file system's aggregate), node:<bw> (local NVMe "
                  "per node), shared:<bw>, client:<bw> (object store, per rank), or nvme, fsx, s3")
      ->required();
  sub->add_option("--mtbf", command->mtbf, "Mean time between failures of ONE node, e.g. \"24 h\"; the job's is this / nodes");
  sub->add_option("--failure-rate", command->failure_rate, "Failures per GPU-hour (instead of --mtbf)")
      ->check(positive_number());
  sub->add_option("--spot-interruption-rate", command->spot_rate,
                  "Spot interruptions per node-hour, e.g. 0.05 (instead of --mtbf)")
      ->check(positive_number());
  sub->add_option("--restart", command->restart, "Relaunch time after a failure, before the restore read")
      ->capture_default_str();
  sub->add_flag("--async", command->async, "Stage the checkpoint in host memory; only the copy stalls training");
  sub->add_option("--host-copy-bandwidth", command->host_copy_bandwidth, "Device-to-host copy rate per GPU (--async)")
      ->capture_default_str();
  sub->add_option("--host-memory", command->host_memory, "Host memory per node free for staging (--async)")
      ->capture_default_str();
  sub->add_flag("--with-gradients", command->with_gradients,
                "Save gradients too (to resume inside a gradient-accumulation window); Megatron-LM, PyTorch DCP and "
                "DeepSpeed save none");
  sub->add_option("--restore-plan", command->restore_plan, "Also restore under this plan, e.g. \"fsdp=16\" or \"tp=4\"");
  sub->add_option("--step-time", command->step_time, "Step time, e.g. \"2.5 s\" (default: predicted, when the workload has a shape)");
  sub->add_option("--input-bandwidth", command->input_bandwidth, "Aggregate read bandwidth of the training data, e.g. \"5 GB/s\"");
  sub->add_option("--decode-rate", command->decode_rate, "Samples per second one node's data loaders decode")
      ->check(positive_number());
  sub->add_option("--token-bytes", command->token_bytes,
                  "Bytes per stored token id (default 2 when the vocabulary fits uint16, else 4)")
      ->check(positive_number());
  sub->add_option("--step-cv", command->step_cv, "Coefficient of variation of one GPU's step time, for stragglers")
      ->check(non_negative_number());
  sub->add_option("--slow-gpu-probability", command->slow_probability, "Chance that a GPU runs a step slowly")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--slow-gpu-factor", command->slow_factor, "How many times slower a slow GPU is")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  sub->add_flag("--json", command->json, "One JSON object instead of the text report");
  sub->add_flag("--explain", command->explain, "Show each figure's formula and inputs");
  sub->add_option("-o,--output", command->output, "Write to this file (atomically) instead of stdout");
  sub->callback([command] { run(*command); });
}

}  // namespace stepcast::cli
