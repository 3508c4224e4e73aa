// An honest interval around a predicted step time: the spread of the model's errors on measured
// runs like the one predicted (same GPU generation and plan family), read from runs files.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::calibrate {

/// The class whose measured errors stand for a plan's: its GPU's generation and its plan family,
/// "Ampere, dense 3D" (TP/PP/CP/DP, ZeRO-1/2), "Hopper, FSDP/ZeRO-3" or "Hopper, MoE" (a model
/// with routed experts, at any ep).
std::string run_class(const workload::Workload& workload, const plan::Plan& plan, const topology::GpuSpec& gpu);

/// The GPU's generation as run classes name it ("Hopper"); its name where its file states none.
std::string gpu_generation(const topology::GpuSpec& gpu);

/// One group's errors by source: the runs file a run comes from -> its errors, each sorted.
using ErrorsBySource = std::map<std::string, std::vector<double>>;

/// The model's errors on measured runs, log(predicted / measured step time), by run class.
struct ResidualSet {
  std::map<std::string, ErrorsBySource> by_class;
  /// Every run of a GPU generation once (gpu_generation).
  std::map<std::string, ErrorsBySource> by_generation;
  std::string source;  ///< the runs files they come from
};

/// Each run's error less its own source's median, sorted: the scatter of runs on one cluster,
/// without the offset between clusters.
std::vector<double> within_source_deviations(const ErrorsBySource& errors);

/// How far apart sources' median errors lie on runs of the same class: the root mean, over the
/// classes two or more sources share, of the sample variance of their medians (log step). Each
/// source is one cluster, framework and software stack, and on the classes they share the medians
/// lie further apart than one source's runs scatter; a user's cluster is one more draw of that
/// offset. Where no class holds two sources, the same over plan families (each source's runs of a
/// family on every GPU generation together); 0 where no family does either. Its degrees of
/// freedom: the sum over those groups of their sources less one (a pooled variance's).
struct SourceSpread {
  double tau = 0.0;
  std::size_t degrees_of_freedom = 0;
};
SourceSpread between_source_spread(const ResidualSet& residuals);

/// How far a source none of a class's `class_sources` sources is may lie from their mean median,
/// at `coverage` (each side): t x tau x sqrt(1 + 1 / class_sources), t Student's quantile on the
/// spread's degrees of freedom. The prediction interval of a new study in a random-effects
/// meta-analysis (Higgins, Thompson and Spiegelhalter 2009, J. R. Stat. Soc. A 172: mean +/-
/// t x sqrt(tau^2 + var(mean))): tau is estimated from a few sources, so its quantile is t's, not
/// the normal's, and the class's centre is itself a mean of class_sources draws of the offset.
/// 0 without a spread.
double new_source_offset(const SourceSpread& spread, std::size_t class_sources, double coverage);

/// The residuals of the compared runs of `validation` (made from `runs`) that measured
/// throughput; `use`, when given, picks which (by index into runs).
ResidualSet residuals_of(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                         const std::vector<bool>* use = nullptr);

/// A predicted step time's interval and what it comes from.
struct StepInterval {
  Seconds low;
  Seconds high;
  /// The step the comparable runs' central error gives (p / exp(c)), c the mean of the sources'
  /// median errors (one source: its median): where the point prediction lies outside
  /// [low, high], the model errs one way on runs like this plan.
  Seconds median;
  double coverage = 0.9;  ///< the share of comparable runs' errors it spans
  std::string run_class;  ///< the class whose errors were used
  std::size_t runs = 0;
  std::size_t sources = 0;             ///< the sources those runs come from
  double between_source = 0.0;         ///< between_source_spread of the residual set (log step)
  std::size_t between_source_dof = 0;  ///< its degrees of freedom
  std::string derived_from;            ///< one sentence: runs, class, source
};

/// Classes with fewer comparable runs than this give no interval.
inline constexpr std::size_t kMinIntervalRuns = 10;

/// The interval of a plan's step on a cluster none of the sources measured: the class's errors
/// (run_class) taken as centre c plus each run's deviation from its source's median; the
/// deviations' (1 - coverage) / 2 and (1 + coverage) / 2 quantiles, each combined root-sum-square
/// with new_source_offset for the offset of an unseen source. A run the model predicts p with
/// error r took p / exp(r). With one source and no spread, the class's own quantiles. None without
/// kMinIntervalRuns runs of the class.
std::optional<StepInterval> step_interval(const ResidualSet& residuals, const workload::Workload& workload,
                                          const plan::Plan& plan, const topology::GpuSpec& gpu, Seconds predicted,
                                          double coverage = 0.9);

/// How often the interval held: derived from every other compared run (the 1st, 3rd, ...), checked
/// on the others, per class and overall.
struct IntervalCoverage {
  struct Line {
    std::string run_class;
    std::size_t checked = 0;
    std::size_t inside = 0;
    std::size_t without_interval = 0;  ///< checked runs whose class had too few derivation runs
  };
  std::vector<Line> classes;
  Line overall;
};

IntervalCoverage interval_coverage(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                                   double coverage = 0.9);

}  // namespace stepcast::calibrate
