// `stepcast validate`: predicted against measured for every point of nccl-tests logs or
// stepcast-nccl-bench JSON and every operator of stepcast-kernel-bench JSON, with the error of
// each, the median, p90 and worst error (per operator family too), and a bus-bandwidth plot on
// request.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cmd_validate_runs.hpp"
#include "commands.hpp"
#include "measured_options.hpp"
#include "output.hpp"
#include "stepcast/report/validate_command.hpp"

namespace stepcast::cli {

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<CommandOptions<report::ValidateRequest>>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Compare the model's predicted collective times with measured ones (nccl-tests logs or\n"
      "stepcast-nccl-bench JSON), and its kernel times with measured operators (stepcast-kernel-bench\n"
      "JSON): a table of every point with its error, then the median, 90th percentile and worst\n"
      "absolute error (per operator family for kernels). With --runs, measured training runs (step time,\n"
      "tokens/s, MFU, memory) against predict or simulate. Exit 1 when --max-median-error is exceeded.");
  add_measured_options(*cmd, options->request.in, "Compare",
                       "Compare only the points `calibrate --holdout` with the same value left out of its fit");
  // --runs (training runs) replaces --measured and --topology, which are then checked below.
  cmd->get_option("--measured")->required(false);
  cmd->get_option("--topology")->required(false);
  auto runs = std::make_shared<RunsOptions>();
  CLI::Option* runs_option = add_runs_options(*cmd, *runs);
  cmd->add_option("--calibration", options->request.calibration, "Calibration file from `stepcast calibrate`");
  CLI::Option* gate = cmd->add_option("--max-median-error", options->request.max_median_error,
                                      "Exit 1 when the median absolute error (percent) exceeds this");
  cmd->add_flag("--json", options->request.json, "Print one JSON object: points, median/p90/max_abs_error_pct");
  cmd->add_option("-o,--output", options->output, "Write the output to FILE (atomically) instead of stdout");
  cmd->add_option("--plot", options->request.plot,
                  "Also draw measured and predicted bus bandwidth against message size into FILE.svg (with "
                  "--runs: predicted against measured step time)");
  cmd->callback([options, gate, runs, runs_option] {
    bool passed = true;
    if (runs_option->count() > 0) {
      passed = run_validate_runs(*runs, {options->request.calibration, options->request.json, options->output,
                                         options->request.plot, options->request.max_median_error, gate->count() > 0});
    } else {
      const report::ValidateOutput out = report::validate_command(options->request);
      emit(out.text, options->output, out.files);
      passed = gate->count() == 0 || out.within_gate;
    }
    if (!passed) {
      fmt::print(stderr, "stepcast: validate: median |error| above --max-median-error {}%\n",
                 options->request.max_median_error);
      // Exit code 1 is the gate's verdict, not an error class of main's table.
      std::fflush(stdout);
      std::exit(1);
    }
  });
}

}  // namespace stepcast::cli
