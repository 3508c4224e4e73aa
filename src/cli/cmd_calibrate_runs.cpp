// `stepcast calibrate --runs`: reads measured training runs, fits the chosen kernel parameters on
// the runs --fit-on selects, and reports the error before and after on those runs (a fit
// residual) and on the held-out runs of the same GPU (an accuracy).
#include "cmd_calibrate_runs.hpp"

#include <fmt/format.h>

#include "output.hpp"
#include "stepcast/calibrate/runs_fit.hpp"
#include "stepcast/core/output_file.hpp"

namespace stepcast::cli {

CLI::Option* add_calibrate_runs_options(CLI::App& calibrate, CalibrateRunsOptions& o) {
  CLI::Option* runs =
      calibrate.add_option("--runs", o.files,
                           "Measured training runs, CSV or JSON (repeatable), as validate --runs reads them: fit the "
                           "compute model's kernel parameters to their throughput");
  runs->expected(1, -1);
  calibrate
      .add_option(
          "--fit", o.fit,
          fmt::format(
              "With --runs: the parameters to fit, comma-separated ({}; default host-overhead,kernel-overhead); "
              "or defaults: every free parameter of the model on every run, written as a defaults file "
              "(topologies/model-defaults.json's form)",
              calibrate::accepted_compute_parameters()))
      ->delimiter(',')
      ->needs(runs);
  calibrate
      .add_option(
          "--fit-on", o.fit_on,
          "With --runs: the runs to fit on, the rest held out and reported: conditions joined by commas, every-other "
          "(default) and gpus=N, gpu=NAME, precision=P, workload=NAME, topology=NAME, group=NAME")
      ->needs(runs);
  calibrate.add_option("--base", o.base, "With --runs: a calibration file to start from; its other sections are kept")
      ->needs(runs);
  for (const char* name :
       {"--measured", "--topology", "--nodes", "--algorithm", "--min-size", "--max-size", "--holdout"}) {
    if (CLI::Option* other = calibrate.get_option_no_throw(name)) runs->excludes(other);
  }
  return runs;
}

void run_calibrate_runs(const CalibrateRunsOptions& o, const std::string& output) {
  const report::CalibrateOutput out = report::calibrate_runs_command(o);
  write_file_atomically(output, out.calibration_json);
  emit(out.text + fmt::format("wrote {}\n", output), "");
}

}  // namespace stepcast::cli
