// Checkpoints: what a plan's checkpoint holds per rank and in total, how long writing and
// restoring it take on a storage tier (synchronously or staged through host memory), and what
// restoring it under another plan costs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::cost {

/// The small items a resumable checkpoint holds besides model state; figures in checkpoint.cpp.
struct CheckpointExtras {
  Bytes scheduler;               ///< learning-rate scheduler and step counters, written once per job
  Bytes rng_per_rank;            ///< CPU and CUDA generator states, one set per rank
  Bytes data_position_per_rank;  ///< the data loader's sampler position, one per rank
};

/// PyTorch-sized defaults for the extras (sources in checkpoint.cpp).
CheckpointExtras default_checkpoint_extras();

struct CheckpointOptions {
  /// Frameworks checkpoint at a step boundary, after the optimizer step, and save no gradients:
  /// Megatron-LM's save_checkpoint writes the model, the optimizer (its fp32 main weights and
  /// moments), the scheduler and the RNG states; PyTorch DCP and DeepSpeed save the model's and
  /// the optimizer's state_dict. Set this for a job that must resume inside a gradient-accumulation
  /// window, which the full 2 + 2 + K state of ZeRO (Rajbhandari et al. 2020) needs.
  bool include_gradients = false;
  CheckpointExtras extras = default_checkpoint_extras();
};

/// What a checkpoint item holds (programs read this; the item's name is for people).
enum class CheckpointContent { kParameters, kGradients, kOptimizerState, kScheduler, kRngStates, kDataPosition };

/// One item of a checkpoint.
struct CheckpointItem {
  CheckpointContent content = CheckpointContent::kParameters;
  std::string name;        ///< "parameters", "gradients", "optimizer state", "rng states", ...
  Bytes held_per_rank;     ///< what each rank holds of it (and reads back on restore)
  Bytes written_per_rank;  ///< what the busiest writer writes of it
  Bytes total;             ///< written by the whole job, each replica once
  int sharded_over = 1;    ///< data-parallel ranks one copy is split over
  int replicas = 1;        ///< copies of it held across the data-parallel ranks
};

/// Convention: a replicated item is written once, by the first replica (data-parallel index 0, or
/// the first shard group of HYBRID_SHARD); a sharded item by every rank of the first copy. So
/// `total` counts each byte once, and `written_per_rank` is the busiest writer's share. Ranks are
/// laid out as plan.hpp says (tensor, then pipeline, then data parallel).
struct CheckpointSize {
  std::vector<CheckpointItem> items;
  Bytes model_state_per_rank;  ///< parameters + gradients + optimizer state held per rank
  Bytes held_per_rank;         ///< everything one rank holds
  Bytes written_per_rank;      ///< the busiest writer
  Bytes total;                 ///< deduplicated, whole job
  Bytes busiest_node_written;  ///< the node whose ranks write the most
  int gpus = 1;
  int gpus_per_node = 1;
  int writers = 1;  ///< ranks that write something
  Explanation explanation;
};

/// The checkpoint of `parameters` parameters under a resolved `plan`, with `bytes` per parameter of
/// each model-state part (from state_bytes_per_parameter). Parameters split evenly over tp x pp,
/// as the memory model splits them. Preconditions: parameters > 0, plan resolved, gpus_per_node >= 1.
CheckpointSize checkpoint_size(double parameters, const plan::Plan& plan, const StateBytesPerParameter& bytes,
                               int gpus_per_node, const CheckpointOptions& options = {});

/// How a storage tier's bandwidth is shared.
enum class StorageKind {
  kNodeLocal,  ///< each node has its own (local NVMe): the busiest node's bytes / bandwidth
  kShared,     ///< one aggregate bandwidth for all (parallel file system): total bytes / bandwidth
  kPerClient,  ///< each rank's client gets its own (object store): the busiest rank's bytes / bandwidth
};

struct StorageTier {
  std::string name;  ///< "nvme", "fsx", "s3" or "custom"
  StorageKind kind = StorageKind::kShared;
  BytesPerSecond bandwidth;  ///< per node, aggregate or per client, as `kind` says; reads as writes
  std::string source;        ///< where the figure comes from
};

/// Parses --storage: a bandwidth ("2 GB/s": a shared file system's aggregate), a kind and a
/// bandwidth ("node:3 GB/s", "shared:10 GB/s", "client:500 MB/s"), or a named tier ("nvme",
/// "fsx", "s3", figures and sources in checkpoint_storage.cpp). Throws InputError naming `option`
/// and the accepted forms.
StorageTier parse_storage(std::string_view text, std::string_view option = "--storage");

/// Who moves how many bytes to or from storage at once.
struct TransferLoad {
  Bytes busiest_rank;
  Bytes busiest_node;
  Bytes total;
};

/// Time to move `load` through `tier`, with the formula and its numbers. Precondition: bandwidth > 0.
struct TransferTime {
  Seconds time;
  ExplainTerm term;
};
TransferTime transfer_time(const TransferLoad& load, const StorageTier& tier, std::string_view what);

/// Staging a checkpoint in host memory so training continues while it is written.
struct AsyncStaging {
  BytesPerSecond copy_bandwidth_per_gpu;  ///< device-to-host copy rate of one GPU
  Bytes host_memory_per_node;             ///< host memory free for staging on one node
};

/// How long training stops for one checkpoint.
struct CheckpointStall {
  Seconds stall;             ///< training stopped: the whole write, or only the copy to host memory
  Seconds background_write;  ///< write that proceeds while training continues (async only)
  bool asynchronous = false;
  std::string note;  ///< why async was not possible, when asked for
  Explanation explanation;
};

/// The stall of a synchronous checkpoint (training waits for `write`), or, with `staging`, of an
/// asynchronous one: the busiest rank's bytes over its copy bandwidth, provided the busiest node's
/// bytes fit the host memory (otherwise it falls back to synchronous and says why).
CheckpointStall checkpoint_stall(const CheckpointSize& size, const TransferTime& write,
                                 const std::optional<AsyncStaging>& staging);

/// Bytes each rank reads to restore a checkpoint written under `saved` into `restored`.
struct RestoreReads {
  Bytes needed_per_rank;      ///< what a rank of the restored plan holds (ranged reads fetch only this)
  Bytes whole_file_per_rank;  ///< when each saved shard file must be read whole: every overlapping file
  int files_per_rank = 1;     ///< most saved shard files one restored rank's model state overlaps
  int gpus = 1;               ///< ranks of the restored plan
  Explanation explanation;
};

/// Compares a restored plan's shards with the saved one's. Each model-state part is treated as a flat
/// array cut into equal contiguous pieces, tp x pp x (shards of that part) of them; a restored piece
/// overlaps the saved pieces its byte range meets. Same precision and optimizer assumed.
/// Preconditions: both plans resolved, parameters > 0.
/// One line saying what the checkpoint holds and what it leaves out, as the frameworks save it.
std::string checkpoint_contents_note(const CheckpointSize& size);

RestoreReads restore_reads(double parameters, const plan::Plan& saved, const plan::Plan& restored,
                           const StateBytesPerParameter& bytes, const CheckpointOptions& options = {});

}  // namespace stepcast::cost
