// `stepcast simulate`: one training step of a plan run on the discrete-event engine (flows that
// share links, the pipeline schedule's task order, stragglers), beside the analytical figure.
#include "stepcast/report/simulate_command.hpp"

#include <fmt/format.h>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/chakra_step.hpp"
#include "stepcast/report/fit_hint.hpp"
#include "stepcast/report/seed_summary.hpp"
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
std::vector<std::string> notes(const plan::Plan& plan, const sim::StepResult& r, bool contention) {
  std::vector<std::string> out;
  if (!contention) {
    out.push_back(
        "--no-contention: every collective and send took the analytical engine's price for its group, on links of its "
        "own");
  }
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

nlohmann::json simulate_json(const PlanInputs& in, const graph::StepPrediction& p, const sim::StepResult& r,
                             std::uint64_t seed, const IntervalResult& interval, bool contention) {
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
  // The terms add up to step_time_s for the critical stage: the waits on calls inside the layers
  // and on parameter gathers are by the role of their group.
  nlohmann::json waits = nlohmann::json::object();
  for (const auto& [role, t] : r.breakdown.waits) waits[role] = t.value();
  j["breakdown"] = {{"compute_s", r.breakdown.compute.value()},
                    {"bubble_s", r.breakdown.bubble.value()},
                    {"waits_s", waits},
                    {"dp_communication_exposed_s", r.breakdown.dp_exposed.value()},
                    {"optimizer_s", r.breakdown.optimizer.value()}};
  j["straggler_wait_s"] = r.breakdown.straggler_wait.value();
  j["tier_utilization"] = {
      {"intra-node", r.tier_utilization[0]}, {"nic", r.tier_utilization[1]}, {"fabric", r.tier_utilization[2]}};
  j["critical_stage"] = r.critical_stage;
  j["critical_path"] = r.critical_path;
  j["simulated_ranks"] = r.simulated_ranks;
  j["notes"] = notes(in.plan, r, contention);
  j["memory_bytes_per_gpu"] = p.memory.total.value();
  j["gpu_memory_bytes"] = p.fit.capacity.value();
  j["fits"] = p.fit.fits;
  j["headroom_bytes"] = p.fit.headroom.value();
  j["memory_margin_bytes"] = p.fit.margin.value();
  return j;
}

// Node by node of the step graph: what the analytical engine leaves exposed and what the
// simulated critical rank's compute stream waits on. The stream's calls after the last task and
// the bubble are rows of their own: the simulation does not split them by node.
struct EngineRow {
  std::string label;
  Seconds analytical;
  Seconds simulated;
};

std::vector<EngineRow> engine_rows(const graph::StepPrediction& p, const sim::StepResult& r) {
  std::vector<EngineRow> rows;
  for (std::size_t n = 0; n < p.communication.size(); ++n) {
    const Seconds waited = n < r.breakdown.node_waits.size() ? r.breakdown.node_waits[n] : Seconds(0.0);
    rows.push_back({p.communication[n].name, p.communication[n].exposed, waited});
  }
  rows.push_back({"stage stream after the last task", Seconds(0.0), r.breakdown.dp_exposed});
  rows.push_back({"pipeline bubble", p.bubble, r.breakdown.bubble});
  rows.push_back({"compute", p.compute, r.breakdown.compute});
  return rows;
}

std::string engines_text(const std::vector<EngineRow>& rows) {
  std::string out =
      fmt::format("\nThe two engines on the same step graph, exposed time by node\n  {:<60} {:>12} {:>12}\n", "",
                  "analytical", "simulated");
  for (const EngineRow& row : rows) {
    out += fmt::format("  {:<60} {:>12} {:>12}\n", row.label, format_seconds(row.analytical),
                       format_seconds(row.simulated));
  }
  out +=
      "  (a stream's calls that run after the last task are exposed in their own row analytically, in the stream's "
      "row simulated)\n";
  return out;
}

nlohmann::json engines_json(const std::vector<EngineRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const EngineRow& row : rows) {
    out.push_back(
        {{"node", row.label}, {"analytical_s", row.analytical.value()}, {"simulated_s", row.simulated.value()}});
  }
  return out;
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

std::string simulate_text(const PlanInputs& in, const graph::StepPrediction& p, const sim::StepResult& r,
                          const IntervalResult& interval, bool contention) {
  std::string out = fmt::format("Simulation: {} on {} ({} GPUs)\nPlan: {}\n", in.workload.name, in.topology->name(),
                                in.plan.gpus(), plan::to_string(in.plan));
  out += plan_facts_text(in) + "\n";
  const auto row = [&](std::string_view label, Seconds t) {
    out += fmt::format("  {:<44} {:>12}  {:5.1f}%\n", label, format_seconds(t), 100.0 * (t / r.step_time));
  };
  out += fmt::format("Step time (critical stage {})\n", r.critical_stage);
  row("compute", r.breakdown.compute);
  for (const auto& [role, t] : r.breakdown.waits) row(fmt::format("waiting on {} calls", role), t);
  row("pipeline bubble and waiting on sends", r.breakdown.bubble);
  row("data-parallel communication (exposed)", r.breakdown.dp_exposed);
  row("optimizer step", r.breakdown.optimizer);
  row("step time (simulated)", r.step_time);
  out += fmt::format("  {}\n", interval_text(interval, r.step_time));
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
  for (const auto& n : notes(in.plan, r, contention)) out += "  - " + n + "\n";
  return out;
}

}  // namespace

CommandOutput simulate_command(const SimulateRequest& c, const UnitRunner& run_units) {
  CommandOutput out;
  PlanInputs in = load_plan_inputs(c.plan);
  if (!in.workload.shape) {
    throw InputError(c.plan.workload, {},
                     "simulate needs the model's shape (layers, hidden, heads, ...), not only a parameter count");
  }
  const auto& topo = *in.topology;
  cost::check_precision_supported(topo.gpu(), in.plan.precision, c.plan.topology);
  const sim::Perturbation pert = parse_straggler(c.straggler, c.seed, in.plan.gpus(), topo.node_count());
  graph::StepOptions options = in.step_options();
  options.explain = false;
  // One step graph, evaluated by both engines: the analytical figure is shown beside the simulated one.
  graph::StepGraph step = graph::plan_step_graph(in.workload, in.plan, topo, options);
  const graph::StepPrediction p = graph::evaluate_step(step, in.workload, in.plan, topo, options);
  warn_outside_calibration(options.calibration, c.plan.calibration, outside_calibration(p));
  sim::SimOptions sim_options;
  sim_options.model.calibration = options.calibration;
  sim_options.perturbation = pert;
  sim_options.contention = !c.no_contention;
  if (c.approve_work) {
    // The seeds run one after another: their times add up, their memory does not.
    planner::WorkEstimate work = planner::simulation_work(in.workload, in.plan, pert.step_cv > 0.0, !c.trace.empty());
    work.time = work.time * static_cast<double>(c.seeds);
    c.approve_work(
        work, c.seeds > 1 ? fmt::format("simulating {} seeds of this plan", c.seeds) : "simulating this plan",
        c.seeds > 1 ? "lower --seeds, --global-batch or the layers per stage (more pp)"
                    : "lower --global-batch, or simulate fewer micro-batches per stage (a larger mbs= or dp=)");
  }
  // With --seeds, the seeds after the first are the units dealt out; the first is the full
  // simulation below, whose step time heads the summary.
  std::vector<std::string> later_seeds;
  if (c.seeds > 1) {
    // Every seed costs the same simulation, so the units are dealt evenly.
    later_seeds = run_units(std::vector<double>(static_cast<std::size_t>(c.seeds - 1), 1.0), [&](std::size_t i) {
      sim::SimOptions seeded = sim_options;
      seeded.perturbation.seed = c.seed + 1 + i;
      return step_time_bytes(sim::simulate_step(topo, step, seeded).step_time);
    });
    if (later_seeds.empty()) {  // another process writes the output; every one exits alike
      out.refusal = refusal(p.memory, p.fit, topo.gpu().name);
      return out;
    }
  }
  sim_options.record_trace = !c.trace.empty();
  const sim::StepResult r = sim::simulate_step(topo, step, sim_options);
  std::optional<SeedSummary> seeds;
  if (c.seeds > 1) {
    std::vector<Seconds> step_times{r.step_time};
    for (const std::string& t : later_seeds) step_times.push_back(step_time_of(t));
    seeds = summarize_seeds(c.seed, std::move(step_times));
  }
  if (!c.trace.empty()) out.files.push_back({c.trace, sim::chrome_trace_json(r)});
  // The interval comes from the analytical model's errors on measured runs, placed around the
  // simulated step time (the two agree closely on those runs: reports/accuracy.md).
  const IntervalResult interval = interval_for(in, r.step_time, c.interval, false);
  if (c.json) {
    nlohmann::json j = simulate_json(in, p, r, c.seed, interval, !c.no_contention);
    if (seeds) add_seeds_json(j, *seeds);
    if (c.explain) j["engines"] = engines_json(engine_rows(p, r));
    out.text = j.dump(2) + "\n";
  } else {
    out.text = simulate_text(in, p, r, interval, !c.no_contention) + (seeds ? seeds_text(*seeds) : std::string());
    if (c.explain) out.text += engines_text(engine_rows(p, r));
  }
  // Simulated like predict's plans: the step is shown, then a plan that cannot run exits 3 and
  // writes no file.
  out.refusal = refusal(p.memory, p.fit, topo.gpu().name);
  if (!c.chakra.empty() && !out.refusal) {
    // The traces go out with the report and the Chrome trace, in one commit (cli::emit).
    // The step and the topology are not needed past this point: the writer keeps them.
    out.write_with = [chakra = c.chakra, graph = std::make_shared<const graph::StepGraph>(std::move(step)),
                      cluster = std::make_shared<const topology::Topology>(std::move(*in.topology)),
                      model = sim_options.model](const std::vector<OutputContent>& files) {
      write_step_chakra(chakra, *graph, *cluster, model, 0, files);
    };
  }
  return out;
}

}  // namespace stepcast::report
