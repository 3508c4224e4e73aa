// `stepcast validate --runs`: reads measured training runs, predicts each as `stepcast predict`
// (or, with --engine des, as `stepcast simulate`) would, and prints the comparison.
#include "cmd_validate_runs.hpp"

#include <fmt/format.h>
#include <filesystem>

#include "output.hpp"
#include "ranks.hpp"
#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/step.hpp"
#include "stepcast/planner/work_estimate.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/run_reports.hpp"
#include "stepcast/sim/step_from_plan.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::cli {

namespace {

/// What `stepcast simulate` runs for a plan without --straggler: the analytical prediction turned
/// into a step graph and simulated; memory comes from the analytical model, as simulate reports it.
/// (simulate's own refusal, interleaved micro-batches not divisible by pp, is a plan rule that
/// already made such a run inexpressible.)
calibrate::EnginePrediction simulate_run(const calibrate::TrainingRun& run, const cost::Calibration* calibration) {
  const plan::Plan& p = run.plan;
  cost::StepOptions options;
  options.calibration = calibration;
  options.explain = false;
  const cost::StepPrediction analytical = cost::predict_step(*run.workload, p, *run.topology, options);
  const sim::PlannedStep planned = sim::plan_step(p, analytical);
  // simulate's default seed; nothing random is drawn without a straggler.
  const sim::StepResult r = sim::simulate_step(*run.topology, planned.spec, sim::Perturbation{}, false);
  return {r.step_time, analytical.memory.total, analytical.fit};
}

/// Every compared run's prediction, the runs dealt over the ranks (by the analytical step time
/// with --engine des, where simulation is the work; evenly with --engine analytical, where the
/// unit is that prediction itself). Rank 0 gets one per run (inexpressible ones left default).
std::vector<calibrate::EnginePrediction> shared_predictions(const std::vector<calibrate::TrainingRun>& runs,
                                                            const calibrate::RunEngine& engine, bool des,
                                                            const cost::Calibration* calibration,
                                                            report::Progress& progress) {
  std::vector<double> costs;
  for (const auto& run : runs) {
    if (!run.inexpressible.empty())
      costs.push_back(0.0);
    else
      costs.push_back(des ? calibrate::predict_analytically(run, calibration).step_time.value() : 1.0);
  }
  const auto work = [&](std::size_t i) {
    ranks::WireWriter w;
    if (!runs[i].inexpressible.empty()) return w.take();
    const calibrate::EnginePrediction p = engine(runs[i]);
    w.f64(p.step_time.value())
        .f64(p.memory.value())
        .u64(p.fit.fits ? 1 : 0)
        .f64(p.fit.capacity.value())
        .f64(p.fit.headroom.value());
    return w.take();
  };
  const std::vector<std::string> bytes = ranks::share(costs, work, [&progress] { progress.advance(); });
  std::vector<calibrate::EnginePrediction> predictions(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!runs[i].inexpressible.empty()) continue;
    ranks::WireReader r(bytes[i]);
    calibrate::EnginePrediction& p = predictions[i];
    p.step_time = Seconds{r.f64()};
    p.memory = Bytes{r.f64()};
    p.fit.fits = r.u64() != 0;
    p.fit.capacity = Bytes{r.f64()};
    p.fit.headroom = Bytes{r.f64()};
  }
  return predictions;
}

}  // namespace

CLI::Option* add_runs_options(CLI::App& validate, RunsOptions& o) {
  CLI::Option* runs = validate.add_option(
      "--runs", o.files,
      "Measured training runs, CSV or JSON (repeatable): step time, tokens/s, FLOP/s, MFU, HFU or peak memory of a "
      "workload, topology and plan per row; see the README's \"Measured training runs\"");
  runs->expected(1, -1);
  CLI::Option* engine =
      validate.add_option("--engine", o.engine, "With --runs: analytical (as predict; default) or des (as simulate)");
  engine->check(CLI::IsMember({"analytical", "des"}));
  engine->needs(runs);
  add_budget_options(validate, o.budget);
  for (const char* name :
       {"--measured", "--topology", "--nodes", "--algorithm", "--min-size", "--max-size", "--holdout"}) {
    if (CLI::Option* other = validate.get_option_no_throw(name)) runs->excludes(other);
  }
  return runs;
}

bool run_validate_runs(const RunsOptions& o, const RunsOutput& out) {
  ranks::will_share();
  std::vector<std::filesystem::path> files;
  for (const auto& f : o.files) files.emplace_back(f);
  const std::vector<calibrate::TrainingRun> runs = calibrate::read_training_runs(files, STEPCAST_SOURCE_DIR);
  std::optional<cost::Calibration> calibration;
  if (!out.calibration.empty()) calibration = cost::load_calibration(out.calibration);
  const cost::Calibration* cal = calibration ? &*calibration : nullptr;
  const bool des = o.engine == "des";
  if (des) {
    planner::WorkEstimate work;
    for (const calibrate::TrainingRun& run : runs) {
      if (run.expressible()) work += planner::simulation_work(*run.workload, run.plan, false, false);
    }
    check_budget(work, o.budget, fmt::format("simulating the {} runs", runs.size()),
                 "validate fewer runs, or use --engine analytical");
  }
  const calibrate::RunEngine engine = [cal, des](const calibrate::TrainingRun& run) {
    return des ? simulate_run(run, cal) : calibrate::predict_analytically(run, cal);
  };
  report::Progress progress("runs", runs.size());
  calibrate::RunValidation result;
  if (ranks::count() > 1) {
    const std::vector<calibrate::EnginePrediction> predictions = shared_predictions(runs, engine, des, cal, progress);
    progress.finish();
    if (!ranks::is_root()) return true;
    const calibrate::RunEngine gathered = [&runs, &predictions](const calibrate::TrainingRun& run) {
      return predictions[static_cast<std::size_t>(&run - runs.data())];
    };
    result = calibrate::validate_runs(runs, gathered);
  } else {
    result = calibrate::validate_runs(runs, engine, [&progress] { progress.advance(); });
    progress.finish();
  }

  const report::RunReportContext context{o.files, o.engine, out.calibration};
  std::vector<OutputContent> plot;
  if (!out.plot.empty()) plot.push_back({out.plot, report::run_validation_svg(runs, result, context)});
  std::string text = out.json ? report::run_validation_json(runs, result, context)
                              : report::run_validation_text(runs, result, context);
  if (!out.json && !out.plot.empty()) text += fmt::format("wrote {}\n", out.plot);
  emit(text, out.output, plot);
  bool passed = true;
  for (const auto& s : result.metrics) passed = passed && s.median_abs_error_pct <= out.max_median_error;
  return !out.gate || passed;
}

}  // namespace stepcast::cli
