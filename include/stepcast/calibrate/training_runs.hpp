// Measured training runs (step time, tokens/s, FLOP/s, MFU, HFU, peak memory of a model, a
// cluster and a plan), read from CSV or JSON files whose units are explicit in every value or
// column name. The columns and their rules are listed in the README ("Measured training runs").
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::calibrate {

/// What a run measured; each figure is absent when its column is empty or missing.
struct RunMeasurement {
  std::optional<Seconds> step_time;    ///< one optimizer step over the global batch
  std::optional<double> tokens_per_s;  ///< all GPUs together
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<FlopsPerSecond> model_flops_per_gpu;     ///< the run's own model-FLOP count per second
  std::optional<FlopsPerSecond> hardware_flops_per_gpu;  ///< the same with recompute counted
  std::optional<double> mfu;                             ///< fraction of the GPU's peak (the file writes "41.25%")
  std::optional<double> hfu;
  std::optional<Bytes> peak_memory_per_gpu;

  /// Whether any throughput figure (step time or tokens/s) was measured.
  [[nodiscard]] bool has_throughput() const { return step_time || tokens_per_s || tokens_per_s_per_gpu; }
};

/// One row of a runs file: the inputs of its prediction, resolved, and what it measured.
struct TrainingRun {
  std::string id;                    ///< the `run` column, or "line N" (CSV) / "runs/N" (JSON)
  std::string where;                 ///< "file:line" or "file:/runs/N", for messages
  std::string file;                  ///< the runs file the row comes from, as given
  std::string group;                 ///< the `group` column, or "<workload> on <topology>, <gpus> GPUs"
  std::string source;                ///< free text of the `source` column
  std::string note;                  ///< free text of the `note` column: what its converter could not state
  std::string fsdp_mixed_precision;  ///< Composer's DEFAULT, PURE or FULL, recorded; the plan's grad-reduce= carries
                                     ///< what it changes
  std::string plan_text;             ///< the plan as the file wrote it
  std::string workload_name;
  std::string topology_name;
  int gpus = 0;                                        ///< GPUs the plan uses: the first `gpus` of the topology
  std::shared_ptr<const workload::Workload> workload;  ///< shared by the rows that name one file
  std::shared_ptr<const topology::Topology> topology;
  plan::Plan plan;  ///< resolved and valid when expressible()
  /// Why the model cannot predict this run (a plan key it does not model, a rule of the model the
  /// plan breaks, a missing input); empty when it can.
  std::string inexpressible;
  RunMeasurement measured;

  [[nodiscard]] bool expressible() const { return inexpressible.empty(); }
  /// Tokens of one step: global batch x sequence length. Precondition: expressible().
  [[nodiscard]] double tokens_per_step() const;
  /// The measured throughput over all GPUs, from whichever figure the row gives (tokens/s, tokens/s
  /// per GPU x GPUs, or tokens per step / step time); none when the row measured only memory.
  /// Precondition: expressible().
  [[nodiscard]] std::optional<double> measured_tokens_per_s() const;
};

/// Reads runs files (CSV, or JSON when the file starts with '{'); names of shipped workloads and
/// topologies ("llama2-7b", "dgx-a100") are looked up under `data_root`, paths relative to the
/// runs file's folder. A file that breaks the format (unknown or repeated column, a required
/// column missing from the header, a value without its unit or with a wrong one, a negative time,
/// a row that contradicts itself) throws InputError naming file:line (CSV) or file:/runs/N/key
/// (JSON) and the rule. Rows the model cannot express are returned with their reason.
std::vector<TrainingRun> read_training_runs(const std::vector<std::filesystem::path>& files,
                                            const std::filesystem::path& data_root);

}  // namespace stepcast::calibrate
