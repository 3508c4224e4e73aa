// `stepcast calibrate`: fits the alpha-beta tier figures to measured collectives (nccl-tests logs
// or stepcast-nccl-bench JSON) and the compute model's kernel parameters to measured operators
// (stepcast-kernel-bench JSON) and the host time per launch to eager PyTorch layers
// (scripts/measure-eager-host JSON), and writes a calibration file that --calibration reads.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cmd_calibrate_runs.hpp"
#include "commands.hpp"
#include "measured_options.hpp"
#include "output.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/report/calibrate_command.hpp"

namespace stepcast::cli {
namespace {

struct CalibrateOptions {
  MeasuredOptions in;
  std::string output;
};

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the latency (alpha) and bandwidth of the fabric tiers that measured collectives exercise,\n"
      "per collective and message-size regime, by least squares on relative error, and NCCL's tuning\n"
      "model's latency factor and bandwidth efficiency per protocol; write a calibration\n"
      "file for --calibration. Measurements: nccl-tests logs or stepcast-nccl-bench JSON. From\n"
      "stepcast-kernel-bench JSON, the compute model's GEMM efficiency per precision and HBM efficiency.\n"
      "From scripts/measure-eager-host JSON, the host time per kernel launch (host_overhead) of your\n"
      "framework and CPU.\n"
      "With --runs, the compute model's kernel parameters fitted to measured training runs, with the\n"
      "error on held-out runs.");
  add_measured_options(
      *cmd, options->in, "Fit",
      "Points left out of the fit and reported: none, every-other (odd-indexed sizes), sizes>=SIZE, ranks=N");
  // --runs (training runs) replaces --measured and --topology, which are then checked below.
  cmd->get_option("--measured")->required(false);
  cmd->get_option("--topology")->required(false);
  auto runs = std::make_shared<CalibrateRunsOptions>();
  CLI::Option* runs_option = add_calibrate_runs_options(*cmd, *runs);
  cmd->add_option("-o,--output", options->output, "Calibration file to write")->required();
  cmd->callback([options, runs, runs_option] {
    if (runs_option->count() > 0) {
      run_calibrate_runs(*runs, options->output);
      return;
    }
    const report::CalibrateOutput out = report::calibrate_command(options->in);
    write_file_atomically(options->output, out.calibration_json);
    emit(out.text + fmt::format("wrote {}\n", options->output), "");
  });
}

}  // namespace stepcast::cli
