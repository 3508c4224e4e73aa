// The inputs every plan-based command shares (workload, topology, nodes, plan and its overrides,
// calibration), and loading them into a resolved, validated plan. Used by predict, memory,
// simulate, resilience and search.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

struct PlanOptions {
  std::string workload;  ///< workload file or name, Hugging Face config.json, model folder or hub id (data_path.hpp)
  std::string topology;
  int nodes = 0;         ///< 0 = as the topology file says
  std::string plan;      ///< compact form, or a path to a plan JSON file
  int global_batch = 0;  ///< 0 = from the plan (gbs=) or its default
  int seq = 0;           ///< 0 = from the plan (seq=) or the workload
  std::string precision;
  std::string optimizer;
  std::string overhead;           ///< framework overhead per GPU, as "1 GiB"
  std::string calibration;        ///< calibration file from `stepcast calibrate`
  int gpus = 0;                   ///< --gpus: whole nodes, or part of one node; 0 = every GPU of the topology
  int gpus_per_domain = 0;        ///< --gpus-per-domain: GPUs used of each scale-up domain; 0 = all of it
  std::vector<std::string> sets;  ///< --set PATH=VALUE edits of the topology file
  std::string memory_margin;      ///< --memory-margin: "5%" or "2 GiB" kept free
};

/// The loaded inputs of a plan command; the plan is resolved and validated.
struct PlanInputs {
  workload::Workload workload;
  std::optional<topology::Topology> topology;
  plan::Plan plan;
  cost::MemoryOptions memory;
  std::string plan_origin;  ///< "--plan" or the plan file, for messages
  /// Where the sequence length came from when neither --seq nor seq= gave one; empty otherwise.
  std::string seq_len_origin;
  /// Set when the plan gave no global batch and stepcast chose one: the note saying so.
  std::string global_batch_note;
  /// Set when fused attention was assumed without a GPU to ask (memory without --topology).
  std::string flash_note;
  /// What the --set edits changed (report/set_echo.hpp), printed above the plan facts.
  std::string set_echo;
  std::optional<cost::Calibration> calibration;

  /// Step-model options for these inputs: the memory settings and the calibration, if any.
  /// The result points into this object, which must outlive it.
  [[nodiscard]] graph::StepOptions step_options() const;
};

/// Loads the workload (and topology), parses the plan, applies the option overrides, resolves
/// and validates it against the GPU count. The defaults every command shares: the GPUs the plan's
/// degrees span when neither --gpus nor --nodes says; the workload's training length when neither
/// --seq nor seq= says (required when it states none); FlashAttention where the GPU runs it (on,
/// and said, without a topology); default_memory_margin() with a topology and no --memory-margin.
/// Bad input throws InputError.
PlanInputs load_plan_inputs(const PlanOptions& options);

/// The sequence length of a command: `given` (--seq), else the workload's training length; an
/// InputError naming `option` when the workload states none (a Hugging Face config's
/// max_position_embeddings is the longest context the model supports, not the length it trains at).
int sequence_length(const workload::Workload& workload, int given, const std::string& option = "--seq");

/// The --doc-len of a search or table (0: not given): every plan packs documents of that many
/// tokens (plan key doc-len=). An InputError where no plan could take it: documents longer than
/// `seq` (0: not known yet), plans without fused attention, or context parallel searched
/// (--max-cp above 1).
int packed_documents(int doc_len, int seq, bool flash, int max_cp);

/// The note a search or table prints under its batch line for --doc-len (doc_len > 0).
std::string packed_documents_note(int doc_len);

/// The topology request of --nodes, --gpus, --set and --gpus-per-domain (0 = not given).
topology::TopologyRequest topology_request(int nodes, int gpus, const std::vector<std::string>& sets,
                                           int gpus_per_domain = 0);

/// The lines every plan command prints under its plan line: the model's parameter count, what a
/// Hugging Face config was read as, the part of each scale-up domain the plan uses where it is not
/// all of it, and notes on the defaults it took (sequence length, fused attention, and with
/// `batch_note` the global batch).
std::string plan_facts_text(const PlanInputs& in, bool batch_note = true);
/// The same as JSON keys: "parameters" (and "active_parameters" for MoE), "seq_len_origin",
/// "gpus_per_domain" and "domain_gpus" (part of each scale-up domain).
void add_plan_facts_json(nlohmann::json& j, const PlanInputs& in);

/// The memory terms as a JSON object with *_bytes keys.
nlohmann::json memory_json(const cost::MemoryBreakdown& memory);
/// The explanation as a JSON array of {label, formula, value}.
nlohmann::json explanation_json(const Explanation& terms);

}  // namespace stepcast::report
