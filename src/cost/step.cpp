// Step time = compute + pipeline bubble + exposed communication + optimizer update.
// Communication per Megatron-LM (Shoeybi et al. 2019; Narayanan et al. 2021; Korthikanti et al.
// 2022), PyTorch DDP/FSDP (Li et al. 2020; Zhao et al. 2023) and DeepSpeed ZeRO (Rajbhandari et
// al. 2020); each collective's time from estimate_collective on the group's tiers.
#include "stepcast/cost/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::cost {

namespace {

using plan::Sharding;

Seconds max0(Seconds t) { return t.value() > 0.0 ? t : Seconds(0.0); }

struct Group {
  CommGroup kind;
  int ranks;
  int stride;
  topology::CommTiers tiers;
  const Calibration* calibration;  // may be null
};

Group make_group(const topology::Topology& topo, const Calibration* calibration, CommGroup kind, int ranks, int stride) {
  return Group{kind, ranks, stride, topo.tiers(ranks, stride), calibration};
}

Seconds time_of(CollectiveOp op, Algorithm algorithm, Bytes size, const Group& g) {
  if (size.value() <= 0.0) return Seconds(0.0);
  const topology::CommTiers tiers = g.calibration ? apply(*g.calibration, g.tiers, op, size) : g.tiers;
  return estimate_collective(op, algorithm, size, tiers).time;
}

/// A term whose calls all have the same size.
CommTerm uniform_term(std::string name, CollectiveOp op, Algorithm algorithm, const Group& g, Bytes size, double calls) {
  CommTerm t;
  t.name = std::move(name);
  t.op = op;
  t.algorithm = algorithm;
  t.group = g.kind;
  t.ranks = g.ranks;
  t.stride = g.stride;
  t.size = size;
  t.calls = calls;
  t.time = time_of(op, algorithm, size, g) * calls;
  return t;
}

/// `total` bytes moved in pieces of `piece` bytes (DDP buckets, FSDP units): whole pieces plus
/// a partial last one, each paying its own latency.
CommTerm pieces_term(std::string name, CollectiveOp op, const Group& g, Bytes total, Bytes piece, double repeats) {
  const double whole = std::floor(total / piece);
  const Bytes rest = total - piece * whole;
  CommTerm t = uniform_term(std::move(name), op, Algorithm::kRing, g, piece, whole * repeats);
  t.time += time_of(op, Algorithm::kRing, rest, g) * repeats;
  t.calls = (total / piece) * repeats;
  return t;
}

}  // namespace

std::string_view to_string(CommGroup group) {
  switch (group) {
    case CommGroup::kTensor: return "tensor";
    case CommGroup::kPipeline: return "pipeline";
    case CommGroup::kData: return "data";
    case CommGroup::kShardGroup: return "shard group";
    case CommGroup::kReplicaGroup: return "replicas";
  }
  STEPCAST_UNREACHABLE("unknown group");
}

StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan, const topology::Topology& topology,
                            const StepOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "predict_step needs a workload with a shape");
  STEPCAST_ASSERT(plan.gpus() <= topology.gpu_count(), "the plan must fit the topology's GPUs");
  const auto& shape = *workload.shape;
  StepPrediction out;
  MemoryOptions memory_options = options.memory;
  memory_options.explain = options.explain;
  out.memory = estimate_memory(workload, plan, memory_options);
  out.fit = check_fit(out.memory, topology.gpu().memory);
  ComputeOptions compute_options;
  compute_options.achieved_fraction = options.achieved_fraction;
  if (options.calibration) compute_options.kernel_params = kernel_params(*options.calibration, topology.gpu(), plan);
  compute_options.explain = options.explain;
  out.compute_detail = estimate_compute(workload, plan, topology.gpu(), compute_options);
  out.compute = out.compute_detail.time;

  const int m = plan.micro_batches();
  const double layers_per_stage = static_cast<double>(shape.layers) / plan.pp;
  out.layers_per_stage = layers_per_stage;
  const StateBytesPerParameter per = state_bytes_per_parameter(plan.precision, plan.optimizer);
  // Activations travel in the training precision's storage type: 2 bytes in mixed precision.
  const double act_bytes = per.parameters;
  const Bytes activation = Bytes(static_cast<double>(plan.seq_len) * plan.micro_batch_size * shape.hidden * act_bytes);
  const double passes = plan.recompute == plan::Recompute::kFull ? 4.0 : 3.0;
  // The critical stage's forward and backward of one micro-batch: the windows that data-parallel
  // communication can hide behind.
  const StageCompute& critical = out.compute_detail.stages[static_cast<std::size_t>(out.compute_detail.critical_stage)];
  const Seconds forward_window = critical.forward;
  const Seconds backward_window = critical.backward;

  Seconds tensor_comm(0.0);
  // Tensor parallel: 2 all-reduces of sbh in the forward and 2 in the backward of each layer
  // (Shoeybi et al. 2019, Figure 4), a forward's worth more with full recompute. With sequence
  // parallel each all-reduce becomes a reduce-scatter plus an all-gather of the same S
  // (Korthikanti et al. 2022, section 4.2.2). They sit between dependent GEMMs: all exposed.
  if (plan.tp > 1) {
    const Group tp = make_group(topology, options.calibration, CommGroup::kTensor, plan.tp, 1);
    const double calls = layers_per_stage * m * (passes == 4.0 ? 6.0 : 4.0);
    if (plan.sequence_parallel) {
      out.communication.push_back(uniform_term("TP all-gather (sequence parallel)", CollectiveOp::kAllGather, Algorithm::kRing, tp, activation, calls));
      out.communication.push_back(
          uniform_term("TP reduce-scatter (sequence parallel)", CollectiveOp::kReduceScatter, Algorithm::kRing, tp, activation, calls));
    } else {
      out.communication.push_back(uniform_term("TP all-reduce", CollectiveOp::kAllReduce, Algorithm::kRing, tp, activation, calls));
    }
    for (auto& term : out.communication) {
      term.exposed = term.time;
      tensor_comm += term.time;
    }
  }
  // Pipeline: each stage sends every micro-batch's activations forward and gradients backward
  // once per model chunk, 2*m*v transfers of sbh/t (Megatron's scatter/gather optimisation,
  // Narayanan et al. 2021 section 4.1); 1F1B blocks on them, so they are exposed.
  if (plan.pp > 1) {
    const Group pp = make_group(topology, options.calibration, CommGroup::kPipeline, 2, plan.tp);
    CommTerm term = uniform_term("PP send/recv", CollectiveOp::kSendRecv, Algorithm::kDirect, pp, activation / plan.tp,
                                 2.0 * m * plan.vp);
    term.exposed = term.time;
    out.communication.push_back(term);
  }

  // Data parallel, by sharding strategy. Ranks of a data-parallel group are tp*pp apart.
  const int dp_stride = plan.tp * plan.pp;
  const double params = workload.parameters / dp_stride;
  const Bytes grads = Bytes(params * per.gradients);
  const Bytes weights = Bytes(params * per.parameters);
  if (plan.dp > 1) {
    const int stage = plan.zero_stage();
    const bool hybrid = plan.sharding == Sharding::kFsdpHybrid;
    const int shard_ranks = hybrid ? plan.shard_group : plan.dp;
    if (stage == 0) {
      // DDP: one all-reduce of all gradients per step in 25 MiB buckets (gradient accumulation
      // under no_sync), overlapped with the last micro-batch's backward; the last bucket is
      // ready only when the backward ends (Li et al. 2020, PyTorch Distributed, section 3.2).
      const Group dp = make_group(topology, options.calibration, CommGroup::kData, plan.dp, dp_stride);
      const Bytes bucket = options.memory.ddp_bucket;
      CommTerm term = pieces_term("DDP gradient all-reduce", CollectiveOp::kAllReduce, dp, grads, bucket, 1.0);
      const Seconds last = time_of(CollectiveOp::kAllReduce, Algorithm::kRing, std::min(grads, bucket), dp);
      term.exposed = std::max(max0(term.time - backward_window), last);
      out.communication.push_back(term);
    } else if (stage <= 2 && !plan.is_fsdp()) {
      // ZeRO-1/2 (DeepSpeed): gradients reduce-scattered to their owners (ZeRO-2 every
      // micro-batch, ZeRO-1 once per step) in buckets of reduce_bucket_size elements, overlapped
      // with backward except the last bucket, ready only when the backward ends; after the
      // optimizer step each owner's updated parameters are all-gathered, which nothing overlaps
      // (ZeRO section 7).
      const Group dp = make_group(topology, options.calibration, CommGroup::kData, plan.dp, dp_stride);
      const double reductions = stage == 2 ? m : 1.0;
      const Bytes bucket = std::min(grads, Bytes(options.memory.zero_bucket_elements * per.gradients));
      CommTerm rs = pieces_term("ZeRO gradient reduce-scatter", CollectiveOp::kReduceScatter, dp, grads, bucket, reductions);
      const Seconds last = time_of(CollectiveOp::kReduceScatter, Algorithm::kRing, bucket, dp);
      rs.exposed = std::max(max0(rs.time - backward_window * reductions), last);
      out.communication.push_back(rs);
      CommTerm ag = uniform_term("ZeRO parameter all-gather", CollectiveOp::kAllGather, Algorithm::kRing, dp, weights, 1.0);
      ag.exposed = ag.time;
      out.communication.push_back(ag);
    } else {
      // FSDP (FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD) and ZeRO-3: per micro-batch, gather each
      // unit (a transformer block) before its forward, again before its backward (not for
      // SHARD_GRAD_OP, which keeps them), and reduce-scatter its gradients; prefetching hides
      // them behind compute except the first unit's gather (Zhao et al. 2023, PyTorch FSDP).
      const Group shard = make_group(topology, options.calibration, CommGroup::kShardGroup, shard_ranks, dp_stride);
      const Bytes unit = Bytes(layer_parameter_count_per_rank(shape, plan) * per.parameters);
      const Bytes unit_grads = Bytes(layer_parameter_count_per_rank(shape, plan) * per.gradients);
      const double mb = m;
      CommTerm fwd = pieces_term("FSDP all-gather (forward)", CollectiveOp::kAllGather, shard, weights, unit, mb);
      const Seconds first_unit = time_of(CollectiveOp::kAllGather, Algorithm::kRing, unit, shard);
      fwd.exposed = (max0(fwd.time / mb - forward_window) + first_unit) * mb;
      const bool regather = stage == 3;
      CommTerm bwd;
      if (regather) bwd = pieces_term("FSDP all-gather (backward)", CollectiveOp::kAllGather, shard, weights, unit, mb);
      CommTerm rs = pieces_term("FSDP gradient reduce-scatter", CollectiveOp::kReduceScatter, shard, grads, unit_grads, mb);
      CommTerm replicas;
      if (hybrid && plan.dp / plan.shard_group > 1) {
        // HYBRID_SHARD all-reduces each shard's gradients across the replicas.
        const Group rep = make_group(topology, options.calibration, CommGroup::kReplicaGroup, plan.dp / plan.shard_group, dp_stride * plan.shard_group);
        replicas = pieces_term("HSDP gradient all-reduce (replicas)", CollectiveOp::kAllReduce, rep, grads / plan.shard_group,
                               unit_grads / plan.shard_group, mb);
      }
      const Seconds backward_comm = (bwd.time + rs.time + replicas.time) / mb;
      const Seconds backward_exposed = max0(backward_comm - backward_window) * mb;
      // Share the backward's exposed time among its collectives in proportion to their time.
      const Seconds backward_total = bwd.time + rs.time + replicas.time;
      const auto share = [&](CommTerm& t) {
        t.exposed = backward_total.value() > 0.0 ? backward_exposed * (t.time / backward_total) : Seconds(0.0);
      };
      out.communication.push_back(fwd);
      if (regather) {
        share(bwd);
        out.communication.push_back(bwd);
      }
      share(rs);
      out.communication.push_back(rs);
      if (replicas.calls > 0) {
        share(replicas);
        out.communication.push_back(replicas);
      }
    }
  }
  for (const auto& term : out.communication) out.exposed_communication += term.exposed;

  // The bubble is a fraction of the ideal pipeline time, which includes the tensor-parallel
  // collectives each stage runs (Narayanan et al. 2021, section 2.2).
  // With stages of unequal time (the first holds the embedding, the last the output layer and
  // loss), the fill and drain run every stage but the slowest once per micro-batch slot: 1F1B
  // takes m x slowest + (sum of the others), so the bubble's unit is the others' mean.
  out.bubble_fraction = bubble_fraction(plan.schedule, plan.pp, m, plan.vp);
  Seconds others(0.0);
  for (const StageCompute& st : out.compute_detail.stages) others += st.forward + st.backward;
  others -= critical.forward + critical.backward;
  const Seconds bubble_unit = plan.pp > 1 ? others / (plan.pp - 1) : critical.forward + critical.backward;
  out.bubble = (bubble_unit * m + tensor_comm) * out.bubble_fraction;
  out.optimizer = out.compute_detail.optimizer;
  out.step_time = out.compute + out.bubble + out.exposed_communication + out.optimizer;
  const double tokens = static_cast<double>(plan.global_batch) * plan.seq_len;
  out.tokens_per_s = tokens / out.step_time.value();
  // MFU (Chowdhery et al. 2022, Appendix B): model FLOPs per second over the peak of all GPUs.
  out.mfu = (out.compute_detail.flops.model / out.step_time) / (out.compute_detail.peak * plan.gpus());

  if (options.explain) {
    auto& ex = out.explanation;
    ex.push_back({"compute", out.compute_detail.operator_model ? "micro-batches x (forward + backward) of the slowest stage (kernel table)"
                                                                 : "hardware FLOPs / GPUs / achieved rate",
                  format_seconds(out.compute)});
    ex.push_back({"pipeline bubble", fmt::format("{:.4f} x (m x mean micro-batch of the other stages + TP communication); {} with p={}, m={}, v={}", out.bubble_fraction,
                                                 plan::to_string(plan.schedule), plan.pp, m, plan.vp),
                  format_seconds(out.bubble)});
    for (const auto& t : out.communication) {
      ex.push_back({fmt::format("{} (exposed)", t.name),
                    fmt::format("{:.4g} calls x {} over {} ranks (stride {}, {} {}): {} total", t.calls, format_bytes(t.size), t.ranks,
                                t.stride, to_string(t.op), to_string(t.algorithm), format_seconds(t.time)),
                    format_seconds(t.exposed)});
    }
    ex.push_back({"optimizer step", fmt::format("gradient norm, update and zeroing over {:.4g} parameters per GPU (memory-bound)",
                                                optimizer_parameters_per_gpu(workload, plan)),
                  format_seconds(out.optimizer)});
    ex.push_back({"step time", "compute + bubble + exposed communication + optimizer", format_seconds(out.step_time)});
    ex.push_back({"tokens/s", fmt::format("{} sequences x {} tokens / step time", plan.global_batch, plan.seq_len), fmt::format("{:.6g}", out.tokens_per_s)});
    ex.push_back({"MFU", fmt::format("{} / step time / ({} GPUs x {})", format_flops(out.compute_detail.flops.model), plan.gpus(),
                                     format_flops_rate(out.compute_detail.peak)),
                  fmt::format("{:.4f}", out.mfu)});
  }
  return out;
}

}  // namespace stepcast::cost
