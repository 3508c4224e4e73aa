// `stepcast validate --runs`: its options, and under MPI the runs' predictions dealt over the
// ranks; report::validate_runs_command reads, predicts and compares.
#include "cmd_validate_runs.hpp"

#include <optional>
#include <vector>

#include "output.hpp"
#include "ranks.hpp"
#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/validate_runs_command.hpp"

namespace stepcast::cli {

namespace {

/// Every compared run's prediction, the runs dealt over the ranks (by the analytical step time
/// with --engine des, where simulation is the work; evenly with --engine analytical, where the
/// unit is that prediction itself). Rank 0 gets one per run (inexpressible ones left default), the
/// other ranks nothing.
std::optional<std::vector<calibrate::EnginePrediction>> shared_predictions(
    const std::vector<calibrate::TrainingRun>& runs, const calibrate::RunEngine& engine, bool des,
    const cost::Calibration* calibration, report::Progress& progress) {
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
  if (!ranks::is_root()) return std::nullopt;
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
  add_budget_options(validate, o.budget);
  CLI::Option* engine =
      validate.add_option("--engine", o.engine, "With --runs: analytical (as predict; default) or des (as simulate)");
  engine->check(CLI::IsMember({"analytical", "des"}));
  engine->needs(runs);
  for (const char* name :
       {"--measured", "--topology", "--nodes", "--algorithm", "--min-size", "--max-size", "--holdout"}) {
    if (CLI::Option* other = validate.get_option_no_throw(name)) runs->excludes(other);
  }
  return runs;
}

bool run_validate_runs(const RunsOptions& o, const RunsOutput& out) {
  ranks::will_share();
  report::ValidateRunsRequest request;
  request.files = o.files;
  request.engine = o.engine;
  request.calibration = out.calibration;
  request.json = out.json;
  request.plot = out.plot;
  request.max_median_error = out.max_median_error;
  request.approve_work = [&o](const planner::WorkEstimate& work, std::string_view what, std::string_view lower) {
    check_budget(work, o.budget, what, lower);
  };
  const report::SharedPredictions shared = ranks::count() > 1 ? report::SharedPredictions(shared_predictions) : nullptr;
  const report::ValidateOutput result = report::validate_runs_command(request, shared);
  emit(result.text, out.output, result.files);
  return !out.gate || result.within_gate;
}

}  // namespace stepcast::cli
