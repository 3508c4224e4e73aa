// Checkpoint contents per rank and for the job: model state sharded as the plan shards it, plus
// the scheduler, RNG states and data-loader position a run needs to resume as the same run.
#include "stepcast/cost/checkpoint.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "checkpoint_parts.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::cost {
namespace {

// Sizes of the serialized extras in PyTorch. torch.get_rng_state() is a 5056-byte tensor (the
// CPU mt19937 generator); torch.cuda.get_rng_state() 16 bytes (Philox seed and offset); Python's
// random.getstate() holds 625 32-bit words and NumPy's MT19937 624 (Megatron-LM saves all four).
constexpr double kTorchCpuRngBytes = 5056.0;
constexpr double kTorchCudaRngBytes = 16.0;
constexpr double kPythonRngBytes = 625.0 * 4.0;
constexpr double kNumpyRngBytes = 624.0 * 4.0;
// A learning-rate scheduler's state_dict is a few dozen numbers (step, base and last rates,
// warm-up settings); 1 KiB covers it pickled.
constexpr double kSchedulerBytes = unit::kKibi;
// The sampler position: epoch, index in the epoch and shuffle seed, three 64-bit integers.
constexpr double kDataPositionBytes = 3.0 * 8.0;

}  // namespace

CheckpointExtras default_checkpoint_extras() {
  return CheckpointExtras{Bytes(kSchedulerBytes),
                          Bytes(kTorchCpuRngBytes + kTorchCudaRngBytes + kPythonRngBytes + kNumpyRngBytes),
                          Bytes(kDataPositionBytes)};
}

CheckpointSize checkpoint_size(double parameters, const plan::Plan& plan, const StateBytesPerParameter& bytes,
                               int gpus_per_node, const CheckpointOptions& options) {
  STEPCAST_ASSERT(parameters > 0.0 && plan.dp >= 1 && plan.tp >= 1 && plan.pp >= 1 && gpus_per_node >= 1,
                  "a resolved plan and a positive parameter count");
  const int mp = plan.tp * plan.pp;
  const double params_per_mp_rank = parameters / static_cast<double>(mp);
  CheckpointSize out;
  out.gpus = plan.gpus();
  out.gpus_per_node = gpus_per_node;

  // Which data-parallel indices write each part: the first copy (indices below its shard count).
  std::vector<int> writer_dp_limit;
  for (const CheckpointPart& part : checkpoint_parts(bytes, options)) {
    const int shards = data_parallel_shards(part, plan);
    CheckpointItem item;
    item.content = part.content;
    item.name = std::string(part.name);
    item.sharded_over = shards;
    item.replicas = plan.dp / shards;
    item.held_per_rank = Bytes(params_per_mp_rank * part.bytes_per_parameter / static_cast<double>(shards));
    item.written_per_rank = item.held_per_rank;
    item.total = Bytes(parameters * part.bytes_per_parameter);
    out.model_state_per_rank += item.held_per_rank;
    out.explanation.push_back(
        {fmt::format("{} per rank", part.name),
         fmt::format("P / (tp x pp) x {:g} B / {} shards = {:g} / {} x {:g} B / {}", part.bytes_per_parameter, shards,
                     parameters, mp, part.bytes_per_parameter, shards),
         format_bytes(item.held_per_rank)});
    out.items.push_back(item);
    writer_dp_limit.push_back(shards);
  }
  const CheckpointExtras& ex = options.extras;
  out.items.push_back(
      {CheckpointContent::kScheduler, "scheduler", ex.scheduler, ex.scheduler, ex.scheduler, 1, out.gpus});
  out.items.push_back({CheckpointContent::kRngStates, "rng states", ex.rng_per_rank, ex.rng_per_rank,
                       ex.rng_per_rank * out.gpus, 1, 1});
  out.items.push_back({CheckpointContent::kDataPosition, "data position", ex.data_position_per_rank,
                       ex.data_position_per_rank, ex.data_position_per_rank * out.gpus, 1, 1});

  for (const CheckpointItem& item : out.items) {
    out.held_per_rank += item.held_per_rank;
    out.written_per_rank += item.written_per_rank;
    out.total += item.total;
  }

  // Bytes each rank writes, summed per node (ranks fill nodes in order).
  std::vector<Bytes> node_bytes(static_cast<std::size_t>((out.gpus + gpus_per_node - 1) / gpus_per_node));
  out.writers = 0;
  for (int rank = 0; rank < out.gpus; ++rank) {
    const int dp_index = rank / mp;
    Bytes written = ex.rng_per_rank + ex.data_position_per_rank + (rank == 0 ? ex.scheduler : Bytes(0.0));
    bool writes_state = false;
    for (std::size_t i = 0; i < writer_dp_limit.size(); ++i) {
      if (dp_index < writer_dp_limit[i] && out.items[i].held_per_rank.value() > 0.0) {
        written += out.items[i].held_per_rank;
        writes_state = true;
      }
    }
    if (writes_state) ++out.writers;
    node_bytes[static_cast<std::size_t>(rank / gpus_per_node)] += written;
  }
  out.busiest_node_written = *std::max_element(node_bytes.begin(), node_bytes.end());

  out.explanation.push_back(
      {"model state per rank", "parameters + gradients + optimizer state", format_bytes(out.model_state_per_rank)});
  out.explanation.push_back(
      {"checkpoint per rank", "model state + scheduler + rng states + data position", format_bytes(out.held_per_rank)});
  out.explanation.push_back(
      {"checkpoint total", "each replicated item once, each shard once, extras per rank", format_bytes(out.total)});
  STEPCAST_ASSERT(out.written_per_rank <= out.held_per_rank, "a rank writes no more than it holds");
  return out;
}

std::string checkpoint_contents_note(const CheckpointSize& size) {
  const bool gradients = std::any_of(size.items.begin(), size.items.end(), [](const CheckpointItem& i) {
    return i.content == CheckpointContent::kGradients && i.total.value() > 0.0;
  });
  return gradients
             ? std::string(
                   "  saved: weights, gradients (--with-gradients), optimizer state, scheduler, RNG states, data "
                   "position")
             : std::string(
                   "  saved: weights, optimizer state (fp32 master weights and moments), scheduler, RNG states, data "
                   "position; not saved: gradients (Megatron-LM, PyTorch DCP and DeepSpeed checkpoint after the "
                   "optimizer step; --with-gradients counts them)");
}

}  // namespace stepcast::cost
