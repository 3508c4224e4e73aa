// `stepcast simulate`: one training step of a plan run on the discrete-event engine (flows that
// share links, the pipeline schedule's task order, stragglers), beside the analytical figure.
#include "stepcast/report/simulate_command.hpp"

#include <fmt/format.h>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/step.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/seed_summary.hpp"
#include "stepcast/sim/step_from_plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/sim/trace_json.hpp"

namespace stepcast::report {

namespace {

// Quoted in every --straggler error, so a refused form shows the accepted ones.
constexpr std::string_view kStragglerKeys =
    "keys: gpu, node, slowdown, cv, step-cv; e.g. \"gpu=3,slowdown=1.5\", \"node=1,slowdown=2\", \"cv=0.05\", "
    "\"step-cv=0.05\"";

double straggler_number(std::string_view key, std::string_view text) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw InputError("--straggler", {}, fmt::format("{}={} is not a number ({})", key, text, kStragglerKeys));
  }
  return v;
}

// "gpu=3,slowdown=1.5", "node=1,slowdown=2", "cv=0.05" (per task), "step-cv=0.05" (per GPU and
// step), or a combination.
sim::Perturbation parse_straggler(const std::string& text, std::uint64_t seed, int gpus, int nodes) {
  sim::Perturbation p;
  p.seed = seed;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw InputError("--straggler", {}, fmt::format("'{}' is not key=value ({})", item, kStragglerKeys));
    }
    const std::string_view key = item.substr(0, eq);
    const double v = straggler_number(key, item.substr(eq + 1));
    if (key == "gpu" || key == "node") {
      const int limit = key == "gpu" ? gpus : nodes;
      if (v < 0 || v >= limit || v != static_cast<double>(static_cast<int>(v))) {
        throw InputError("--straggler", {}, fmt::format("{}={} is not a {} index in 0..{}", key, v, key, limit - 1));
      }
      (key == "gpu" ? p.slow_gpu : p.slow_node) = static_cast<int>(v);
    } else if (key == "slowdown") {
      if (!(v >= 1.0))
        throw InputError("--straggler", {}, fmt::format("slowdown={} must be >= 1 (1.5 = 50% slower)", v));
      p.slowdown = v;
    } else if (key == "cv" || key == "step-cv") {
      if (!(v >= 0.0 && v < 1.0))
        throw InputError("--straggler", {}, fmt::format("{}={} must be in [0, 1) ({})", key, v, kStragglerKeys));
      (key == "cv" ? p.noise_cv : p.step_cv) = v;
    } else {
      throw InputError("--straggler", {}, fmt::format("unknown key '{}' ({})", key, kStragglerKeys));
    }
  }
  if ((p.slow_gpu || p.slow_node) && p.slowdown == 1.0) {
    throw InputError("--straggler", {}, "a slow gpu or node needs slowdown=X with X > 1");
  }
  return p;
}

// What each simulated rank stands for: with step noise the replicas differ, so all of them run.
std::vector<std::string> notes(const plan::Plan& plan, const sim::PlannedStep& planned, const sim::StepResult& r) {
  std::vector<std::string> out = planned.notes;
  if (r.simulated_ranks == plan.pp) {
    out.push_back(
        fmt::format("one representative rank per pipeline stage ({} simulated) stands for its {} tensor-{} and "
                    "data-parallel peers; their traffic is simulated as flows",
                    plan.pp, plan.tp * plan.dp * plan.cp, plan.cp > 1 ? ", context-" : ""));
  } else {
    out.push_back(
        fmt::format("every data-parallel replica's stages are simulated ({} ranks), each standing for its {} "
                    "tensor-parallel peers, because per-step noise makes the replicas differ",
                    r.simulated_ranks, plan.tp));
  }
  return out;
}

nlohmann::json simulate_json(const PlanInputs& in, const cost::StepPrediction& p, const sim::PlannedStep& planned,
                             const sim::StepResult& r, std::uint64_t seed, const IntervalResult& interval) {
  nlohmann::json j;
  j["workload"] = in.workload.name;
  j["topology"] = in.topology->name();
  j["gpus"] = in.plan.gpus();
  j["plan"] = plan::to_string(in.plan);
  add_plan_facts_json(j, in);
  j["seed"] = seed;
  j["step_time_s"] = r.step_time.value();
  add_interval_json(j, interval);
  j["analytical_step_time_s"] = p.step_time.value();
  // The terms add up to step_time_s for the critical stage.
  j["breakdown"] = {{"compute_s", r.breakdown.compute.value()},
                    {"tp_communication_s", r.breakdown.tp_comm.value()},
                    {"bubble_s", r.breakdown.bubble.value()},
                    {"dp_communication_exposed_s", r.breakdown.dp_exposed.value()},
                    {"other_communication_exposed_s", r.breakdown.gather_wait.value()},
                    {"optimizer_s", r.breakdown.optimizer.value()}};
  if (in.plan.cp > 1) j["breakdown"]["cp_communication_exposed_s"] = r.breakdown.cp_comm.value();
  if (planned.spec.expert_parallel) j["breakdown"]["moe_communication_exposed_s"] = r.breakdown.moe_comm.value();
  j["straggler_wait_s"] = r.breakdown.straggler_wait.value();
  j["tier_utilization"] = {
      {"intra-node", r.tier_utilization[0]}, {"nic", r.tier_utilization[1]}, {"fabric", r.tier_utilization[2]}};
  j["critical_stage"] = r.critical_stage;
  j["critical_path"] = r.critical_path;
  j["simulated_ranks"] = r.simulated_ranks;
  j["notes"] = notes(in.plan, planned, r);
  j["memory_bytes_per_gpu"] = p.memory.total.value();
  j["gpu_memory_bytes"] = p.fit.capacity.value();
  j["fits"] = p.fit.fits;
  j["headroom_bytes"] = p.fit.headroom.value();
  j["memory_margin_bytes"] = p.fit.margin.value();
  return j;
}

void add_seeds_json(nlohmann::json& j, const SeedSummary& s) {
  nlohmann::json times = nlohmann::json::array();
  for (Seconds t : s.step_times) times.push_back(t.value());
  j["seeds"] = {{"first", s.first_seed},    {"count", s.step_times.size()}, {"step_time_s", times},
                {"mean_s", s.mean.value()}, {"p50_s", s.p50.value()},       {"p90_s", s.p90.value()},
                {"max_s", s.max.value()}};
}

std::string seeds_text(const SeedSummary& s) {
  return fmt::format("\nOver {} seeds ({}-{}; the table above is seed {}): step time mean {}, p50 {}, p90 {}, max {}\n",
                     s.step_times.size(), s.first_seed, s.first_seed + s.step_times.size() - 1, s.first_seed,
                     format_seconds(s.mean), format_seconds(s.p50), format_seconds(s.p90), format_seconds(s.max));
}

// A step time as its 8 bytes, bit for bit, so a result dealt to another process comes back exact.
std::string step_time_bytes(Seconds t) {
  const double v = t.value();
  std::string out(sizeof v, '\0');
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

Seconds step_time_of(const std::string& bytes) {
  double v = 0.0;
  std::memcpy(&v, bytes.data(), sizeof v);
  return Seconds(v);
}

std::string simulate_text(const PlanInputs& in, const cost::StepPrediction& p, const sim::PlannedStep& planned,
                          const sim::StepResult& r, const IntervalResult& interval) {
  std::string out = fmt::format("Simulation: {} on {} ({} GPUs)\nPlan: {}\n", in.workload.name, in.topology->name(),
                                in.plan.gpus(), plan::to_string(in.plan));
  out += plan_facts_text(in) + "\n";
  const auto row = [&](std::string_view label, Seconds t) {
    out += fmt::format("  {:<44} {:>12}  {:5.1f}%\n", label, format_seconds(t), 100.0 * (t / r.step_time));
  };
  out += fmt::format("Step time (critical stage {})\n", r.critical_stage);
  row("compute", r.breakdown.compute);
  row("TP communication (inside layers)", r.breakdown.tp_comm);
  row("pipeline bubble and waiting on sends", r.breakdown.bubble);
  row("data-parallel communication (exposed)", r.breakdown.dp_exposed);
  row("FSDP/ZeRO-3 parameter gathers (exposed)", r.breakdown.gather_wait);
  if (in.plan.cp > 1) row("context-parallel exchange (exposed)", r.breakdown.cp_comm);
  if (planned.spec.expert_parallel) row("MoE dispatch/combine (exposed)", r.breakdown.moe_comm);
  row("optimizer step", r.breakdown.optimizer);
  row("step time (simulated)", r.step_time);
  out += fmt::format("  {}\n", interval_text(interval));
  out += fmt::format("  {:<44} {:>12}\n", "step time (analytical)", format_seconds(p.step_time));
  if (r.breakdown.straggler_wait.value() != 0.0) {
    out +=
        fmt::format("  {:<44} {:>12}\n", "of which waiting on stragglers", format_seconds(r.breakdown.straggler_wait));
  }
  out += fmt::format("\nMemory per GPU: {}. ", format_bytes(p.memory.total)) + fit_text(in, p.fit);
  out += fmt::format("\nLink utilization: intra-node {:.1f}%, NIC {:.1f}%, fabric {:.1f}%\n",
                     100.0 * r.tier_utilization[0], 100.0 * r.tier_utilization[1], 100.0 * r.tier_utilization[2]);
  // The JSON lists the whole path; the table shows its two ends.
  constexpr std::size_t kEnds = 6;
  const std::vector<std::string>& path = r.critical_path;
  out += fmt::format("Critical path ({} steps): ", path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path.size() > 2 * kEnds + 1 && i == kEnds) {
      out += fmt::format(" -> ... {} more ...", path.size() - 2 * kEnds);
      i = path.size() - kEnds - 1;
      continue;
    }
    out += (i ? " -> " : "") + path[i];
  }
  out += "\n\nNotes:\n";
  for (const auto& n : notes(in.plan, planned, r)) out += "  - " + n + "\n";
  return out;
}

}  // namespace

CommandOutput simulate_command(const SimulateRequest& c, const UnitRunner& run_units) {
  CommandOutput out;
  const PlanInputs in = load_plan_inputs(c.plan);
  if (!in.workload.shape) {
    throw InputError(c.plan.workload, {},
                     "simulate needs the model's shape (layers, hidden, heads, ...), not only a parameter count");
  }
  const auto& topo = *in.topology;
  cost::check_precision_supported(topo.gpu(), in.plan.precision, c.plan.topology);
  if (in.plan.schedule == plan::Schedule::kInterleaved && in.plan.micro_batches() % in.plan.pp != 0) {
    throw InputError(in.plan_origin, {},
                     fmt::format("interleaved 1F1B needs micro-batches ({}) divisible by pp ({})",
                                 in.plan.micro_batches(), in.plan.pp));
  }
  const sim::Perturbation pert = parse_straggler(c.straggler, c.seed, in.plan.gpus(), topo.node_count());
  cost::StepOptions options = in.step_options();
  options.explain = false;
  const cost::StepPrediction p = cost::predict_step(in.workload, in.plan, topo, options);
  warn_outside_calibration(options.calibration, c.plan.calibration, outside_calibration(p));
  const sim::PlannedStep planned = sim::plan_step(in.plan, p, options.calibration);
  // With --seeds, the seeds after the first are the units dealt out; the first is the full
  // simulation below, whose step time heads the summary.
  std::vector<std::string> later_seeds;
  if (c.seeds > 1) {
    // Every seed costs the same simulation, so the units are dealt evenly.
    later_seeds = run_units(std::vector<double>(static_cast<std::size_t>(c.seeds - 1), 1.0), [&](std::size_t i) {
      sim::Perturbation seeded = pert;
      seeded.seed = c.seed + 1 + i;
      return step_time_bytes(sim::simulate_step(topo, planned.spec, seeded, false).step_time);
    });
    if (later_seeds.empty()) {  // another process writes the output; every one exits alike
      out.refusal = refusal(p.memory, p.fit, topo.gpu().name);
      return out;
    }
  }
  const sim::StepResult r = sim::simulate_step(topo, planned.spec, pert, !c.trace.empty());
  std::optional<SeedSummary> seeds;
  if (c.seeds > 1) {
    std::vector<Seconds> step_times{r.step_time};
    for (const std::string& t : later_seeds) step_times.push_back(step_time_of(t));
    seeds = summarize_seeds(c.seed, std::move(step_times));
  }
  if (!c.trace.empty()) write_file_atomically(c.trace, sim::chrome_trace_json(r));
  // The interval comes from the analytical model's errors on measured runs, placed around the
  // simulated step time (the two agree closely on those runs: reports/accuracy.md).
  const IntervalResult interval = interval_for(in, r.step_time, c.interval, false);
  if (c.json) {
    nlohmann::json j = simulate_json(in, p, planned, r, c.seed, interval);
    if (seeds) add_seeds_json(j, *seeds);
    out.text = j.dump(2) + "\n";
  } else {
    out.text = simulate_text(in, p, planned, r, interval) + (seeds ? seeds_text(*seeds) : std::string());
  }
  // Simulated like predict's plans: the step is shown, then a plan that cannot run exits 3.
  out.refusal = refusal(p.memory, p.fit, topo.gpu().name);
  return out;
}

}  // namespace stepcast::report
