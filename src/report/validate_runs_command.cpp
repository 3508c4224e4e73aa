// `stepcast validate --runs`: reads measured training runs, predicts each as `stepcast predict`
// (or, with engine des, as `stepcast simulate`) would, and renders the comparison.
#include "stepcast/report/validate_runs_command.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "stepcast/core/output_file.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/planner/work_estimate.hpp"
#include "stepcast/report/run_reports.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::report {

namespace {

/// What `stepcast simulate` runs for a plan without --straggler: the plan's step graph on the
/// event engine; memory comes from the analytical model, as simulate reports it. (simulate's own
/// refusal, interleaved micro-batches not divisible by pp, is a plan rule that already made such a
/// run inexpressible.)
calibrate::EnginePrediction simulate_run(const calibrate::TrainingRun& run, const cost::Calibration* calibration) {
  const plan::Plan& p = run.plan;
  graph::StepOptions options;
  options.calibration = calibration;
  options.explain = false;
  const graph::StepGraph step = graph::plan_step_graph(*run.workload, p, *run.topology, options);
  const graph::StepPrediction analytical = graph::evaluate_step(step, *run.workload, p, *run.topology, options);
  // simulate's default seed; nothing random is drawn without a straggler.
  sim::SimOptions sim_options;
  sim_options.model.calibration = calibration;
  const sim::StepResult r = sim::simulate_step(*run.topology, step, sim_options);
  return {r.step_time, analytical.memory.total, analytical.fit, cost::allocated_bytes(analytical.memory)};
}

}  // namespace

ValidateOutput validate_runs_command(const ValidateRunsRequest& o, const SharedPredictions& shared_predictions) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : o.files) files.emplace_back(f);
  const std::vector<calibrate::TrainingRun> runs = calibrate::read_training_runs(files, STEPCAST_SOURCE_DIR);
  std::optional<cost::Calibration> calibration;
  if (!o.calibration.empty()) calibration = cost::load_calibration(o.calibration);
  const cost::Calibration* cal = calibration ? &*calibration : nullptr;
  const bool des = o.engine == "des";
  if (des && o.approve_work) {
    planner::WorkEstimate work;
    for (const calibrate::TrainingRun& run : runs) {
      // One run simulated after another: each frees its engine before the next.
      if (run.expressible()) work.then(planner::simulation_work(*run.workload, run.plan, false, false));
    }
    o.approve_work(work, fmt::format("simulating the {} runs", runs.size()),
                   "validate fewer runs, or use --engine analytical");
  }
  const calibrate::RunEngine engine = [cal, des](const calibrate::TrainingRun& run) {
    return des ? simulate_run(run, cal) : calibrate::predict_analytically(run, cal);
  };
  Progress progress("runs", runs.size());
  calibrate::RunValidation result;
  if (shared_predictions) {
    const std::optional<std::vector<calibrate::EnginePrediction>> predictions =
        shared_predictions(runs, engine, des, cal, progress);
    progress.finish();
    if (!predictions) return {};
    const calibrate::RunEngine gathered = [&runs, &predictions](const calibrate::TrainingRun& run) {
      return (*predictions)[static_cast<std::size_t>(&run - runs.data())];
    };
    result = calibrate::validate_runs(runs, gathered);
  } else {
    result = calibrate::validate_runs(runs, engine, [&progress] { progress.advance(); });
    progress.finish();
  }

  const RunReportContext context{o.files, o.engine, o.calibration};
  ValidateOutput out;
  if (!o.plot.empty()) out.files.push_back({o.plot, run_validation_svg(runs, result, context)});
  out.text = o.json ? run_validation_json(runs, result, context) : run_validation_text(runs, result, context);
  if (!o.json && !o.plot.empty()) out.text += fmt::format("wrote {}\n", o.plot);
  for (const auto& s : result.metrics)
    out.within_gate = out.within_gate && s.median_abs_error_pct <= o.max_median_error;
  return out;
}

}  // namespace stepcast::report
