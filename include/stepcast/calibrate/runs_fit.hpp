// Fitting the compute model's kernel parameters to measured training runs (`calibrate --runs`):
// least squares on the log of predicted over measured throughput, over the runs a split selects,
// the others held out and never read by the fit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/calibration.hpp"

namespace stepcast::calibrate {

/// A kernel parameter `calibrate --runs` can fit (cost::KernelParams).
enum class ComputeParameter {
  kHostOverhead,
  kKernelOverhead,
  kMemoryEfficiency,
  kGemmEfficiency,
  kAttentionEfficiency
};

/// "host-overhead", "kernel-overhead", "memory-efficiency", "gemm-efficiency", "attention-efficiency".
std::string_view to_string(ComputeParameter parameter);
std::optional<ComputeParameter> parse_compute_parameter(std::string_view name);
std::string accepted_compute_parameters();

/// Which runs the fit uses: those that meet every `key=value` condition (keys: gpus, group,
/// workload, topology, gpu, precision) and, with `every-other`, every other one of those (the 1st, 3rd, ...);
/// the rest are held out.
struct RunSplit {
  std::vector<std::pair<std::string, std::string>> conditions;  ///< none: every run
  bool every_other = false;
};

/// Parses comma-separated conditions: "gpus=2", "gpu=A100-SXM4-40GB,every-other", "every-other";
/// InputError(origin) otherwise.
RunSplit parse_run_split(std::string_view text, const std::string& origin);

/// Whether each run is a fit run (true) or held out (false). Inexpressible runs and runs without
/// a throughput figure are neither: they are false and not counted as held out either.
std::vector<bool> fit_mask(const std::vector<TrainingRun>& runs, const RunSplit& split);

/// Absolute throughput errors over a set of runs (percent).
struct RunErrors {
  std::size_t runs = 0;
  double median_abs_error_pct = 0.0;
  double mean_abs_error_pct = 0.0;
  double max_abs_error_pct = 0.0;
};

struct RunsFit {
  cost::ComputeCalibration compute;  ///< the fitted values, with what they were fitted on
  std::vector<ComputeParameter> parameters;
  std::string gpu;                    ///< the GPU model of the fit runs
  RunErrors fit_before, fit_after;    ///< on the fit runs: before, and the fit's residual
  RunErrors held_before, held_after;  ///< on the held-out runs of the same GPU model: the accuracy
  int iterations = 0;
};

/// Fits `parameters` on the runs `mask` selects, starting from `base`'s kernel parameters (the
/// GPU's defaults where it has none). The fit runs must share one GPU model, and one precision when
/// the GEMM efficiency is fitted (InputError naming them otherwise), and be at least as many as
/// the parameters. Held-out runs are predicted
/// only after the fit, to report its accuracy. `origin` names the input in messages and sources.
RunsFit fit_compute_to_runs(const std::vector<TrainingRun>& runs, const std::vector<bool>& mask,
                            const std::vector<ComputeParameter>& parameters, const cost::Calibration& base,
                            const std::string& origin);

}  // namespace stepcast::calibrate
