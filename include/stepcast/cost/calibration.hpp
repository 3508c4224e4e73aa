// Calibration: measured replacements for the alpha-beta tier figures and the compute model's
// kernel parameters that the cost model consumes (`--calibration FILE`). Every value carries its source.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

/// A calibrated bandwidth, each way, with what it was fitted from.
struct CalibratedBandwidth {
  BytesPerSecond value;
  std::string source;
};

/// A calibrated per-step latency (alpha), with what it was fitted from.
struct CalibratedLatency {
  Seconds value;
  std::string source;
};

/// Replacements for fields of topology::CommTiers; an empty field keeps the topology's figure.
struct TierOverrides {
  std::optional<CalibratedBandwidth> intra_bw;
  std::optional<CalibratedLatency> intra_latency;
  std::optional<CalibratedBandwidth> node_bw;
  std::optional<CalibratedBandwidth> gpu_nic_bw;
  std::optional<CalibratedLatency> inter_latency;

  [[nodiscard]] bool empty() const { return !intra_bw && !intra_latency && !node_bw && !gpu_nic_bw && !inter_latency; }
};

/// How well a fit matched the points it was fitted to (relative errors, in percent).
struct FitSummary {
  int points = 0;
  double median_abs_error_pct = 0.0;
  double max_abs_error_pct = 0.0;
};

/// Tier figures fitted for one collective over one message-size regime (NCCL switches protocol
/// with size, so one line rarely fits small and large messages alike).
struct CollectiveCalibration {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Bytes min_size;                 ///< applies to messages of at least this size (nccl-tests' S)
  std::optional<Bytes> max_size;  ///< and at most this size; none: no upper bound
  TierOverrides tiers;
  std::optional<FitSummary> fit;
  std::string source;
};

/// Measured replacements for the compute model's kernel parameters (cost::KernelParams); an
/// absent field keeps the GPU's default.
struct ComputeCalibration {
  std::map<std::string, double> gemm_efficiency;  ///< by precision name ("bf16", "fp8", ...), in (0, 1]
  std::optional<double> memory_efficiency;
  std::optional<double> attention_forward_efficiency;
  std::optional<double> attention_backward_efficiency;
  std::optional<Seconds> kernel_overhead;
  std::optional<Seconds> host_overhead;
  std::string source;  ///< what it was fitted on
  /// What each field was fitted on, by field name ("memory_efficiency", "kernel_overhead", and
  /// "gemm_efficiency.bf16" for one precision); every key names a field the section sets.
  std::map<std::string, std::string> fitted_on;
};

/// A measured correction of NCCL's tuning model for one protocol (see cost::NcclProtocolTuning),
/// fitted by `stepcast calibrate` to the points NCCL's choice runs in that protocol.
struct CalibratedNcclProtocol {
  NcclProtocolTuning tuning;
  std::optional<FitSummary> fit;
  std::string source;
};

/// What a calibration's collectives were fitted on: message sizes (nccl-tests' S), rank counts
/// and node counts of the measured points. Outside it, calibrated figures are an extrapolation.
struct FittedRange {
  Bytes min_size;
  Bytes max_size;
  int min_ranks = 0;
  int max_ranks = 0;
  int min_nodes = 0;
  int max_nodes = 0;
};

/// Fitted values of some of the model's free parameters (topology/model_parameters.hpp), which
/// replace the shipped defaults wherever a GPU file's figure names them.
struct CalibratedParameters {
  ParameterValues values;                      ///< by parameter name, in SI units
  std::map<std::string, std::string> sources;  ///< what each was fitted on, by name
  /// Those measured rather than fitted ("measured": true in the file): a fit of the defaults holds
  /// them at their value instead of freeing them.
  std::set<std::string> measured;
};

/// Everything a calibration file holds. Empty by default: applying it changes nothing.
struct Calibration {
  std::string source;                                             ///< what the file as a whole was made from
  TierOverrides tiers;                                            ///< for every collective
  std::vector<CollectiveCalibration> collectives;                 ///< per collective and size regime; later entries win
  std::optional<ComputeCalibration> compute;                      ///< the compute model's kernel parameters
  std::map<NcclProtocol, CalibratedNcclProtocol> nccl_protocols;  ///< NCCL's tuning model, per protocol
  std::optional<FittedRange> range;  ///< of the collectives; none in files written before stepcast recorded it
  CalibratedParameters parameters;   ///< free parameters of the model; empty: the shipped defaults
};

/// Whether a collective of `size` over `ranks` ranks on `nodes` nodes lies inside the range the
/// calibration's collectives were fitted on (true when the file records none).
bool within_fitted_range(const Calibration& calibration, Bytes size, int ranks, int nodes);

/// "sizes 32.00 MiB to 16.00 GiB, 8 ranks, 1 node", for warnings.
std::string to_string(const FittedRange& range);

/// The tiers with the calibration's general overrides applied.
topology::CommTiers apply(const Calibration& calibration, topology::CommTiers tiers);

/// The tiers for `op` at `size`: the general overrides, then every entry of `collectives` for
/// `op` whose size regime holds `size`, in file order.
topology::CommTiers apply(const Calibration& calibration, topology::CommTiers tiers, CollectiveOp op, Bytes size);

/// The GPU's default kernel parameters for the plan with the calibration's compute fields
/// applied (cost::default_kernel_params's errors apply).
KernelParams kernel_params(const Calibration& calibration, const topology::GpuSpec& gpu, const plan::Plan& plan);

/// NCCL's tuning model corrected by the calibration's protocols (1 and 1 for the others).
NcclTuning nccl_tuning(const Calibration& calibration);

/// Loads a calibration file; bad input throws InputError with the file and JSON pointer.
/// Unknown keys are errors; every value needs a "source".
Calibration load_calibration(const std::filesystem::path& file);

/// Parses calibration JSON text that came from `origin` (same rules as load_calibration).
Calibration parse_calibration(const std::string& text, const std::string& origin);

/// The calibration as JSON text (sorted keys, "%.9g" numbers with units), loadable again.
std::string to_json_text(const Calibration& calibration);

}  // namespace stepcast::cost
