// The collectives of a training step: Megatron-LM's tensor and pipeline parallelism (Shoeybi et
// al. 2019; Narayanan et al. 2021; Korthikanti et al. 2022), PyTorch DDP/FSDP (Li et al. 2020;
// Zhao et al. 2023) and DeepSpeed ZeRO (Rajbhandari et al. 2020); each collective's time from
// the collective model (NCCL's choice, NICs shared with the groups beside it), its exposed part
// from the compute windows it overlaps.
#include "stepcast/cost/step_communication.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/context_parallel.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::cost {

namespace {

using plan::Sharding;

Seconds max0(Seconds t) { return t.value() > 0.0 ? t : Seconds(0.0); }

using Priced = StepCommunicationCache::Priced;

struct Group {
  CommGroup kind;
  int ranks;
  int stride;
  StepCommunicationCache::GroupKey key;
  const CollectiveGroup* view;
  const CollectiveModel* model;
  StepCommunicationCache* cache;  // this step's own, or the caller's across steps
};

// `concurrency`: the other groups of the same kind that run the same collective at the same
// time, and so share the NICs (the data-parallel groups of a stage's other tensor ranks).
Group make_group(const topology::Topology& topo, const std::optional<NcclHardware>& hardware,
                 const CollectiveModel& model, StepCommunicationCache& cache, CommGroup kind, int ranks, int stride,
                 topology::Concurrency concurrency = {}) {
  const StepCommunicationCache::GroupKey key{ranks, stride, concurrency.groups,
                                             concurrency.groups > 1 ? concurrency.offset : 0};
  auto it = cache.groups.find(key);
  if (it == cache.groups.end()) {
    it = cache.groups.emplace(key, collective_group(hardware, topo.tiers(ranks, stride, concurrency))).first;
  }
  return Group{kind, ranks, stride, key, &it->second, &model, &cache};
}

Priced price_of(CollectiveOp op, Bytes size, const Group& g) {
  const std::tuple key{g.key, static_cast<int>(op), size.value()};
  auto it = g.cache->prices.find(key);
  if (it == g.cache->prices.end()) {
    const CollectivePrice price = price_collective(*g.view, op, size, *g.model);
    it = g.cache->prices.emplace(key, Priced{price.time, model_name(price), price.outside_calibration}).first;
  }
  return it->second;
}

Seconds time_of(CollectiveOp op, Bytes size, const Group& g) { return price_of(op, size, g).time; }

/// A term whose calls all have the same size.
CommTerm uniform_term(std::string name, CollectiveOp op, const Group& g, Bytes size, double calls) {
  const Priced price = price_of(op, size, g);
  CommTerm t;
  t.name = std::move(name);
  t.op = op;
  t.model = price.model;
  t.group = g.kind;
  t.ranks = g.ranks;
  t.stride = g.stride;
  t.size = size;
  t.calls = calls;
  t.time = price.time * calls;
  t.outside_calibration = price.outside_calibration;
  return t;
}

/// `total` bytes moved in pieces of `piece` bytes (DDP buckets, FSDP units): whole pieces plus
/// a partial last one, each paying its own latency.
CommTerm pieces_term(std::string name, CollectiveOp op, const Group& g, Bytes total, Bytes piece, double repeats) {
  const double whole = std::floor(total / piece);
  const Bytes rest = total - piece * whole;
  CommTerm t = uniform_term(std::move(name), op, g, piece, whole * repeats);
  t.time += time_of(op, rest, g) * repeats;
  t.calls = (total / piece) * repeats;
  return t;
}

// The exposed share of the tensor-parallel collectives under tp-overlap: per slice (a GEMM block
// of a layer's pass: 2 per layer forward, 2 or with full recompute 4 backward), what its
// collectives take beyond its compute, plus one chunk (1/tp) of them, over their time.
double tp_overlap_exposed_share(const std::vector<CommTerm>& terms, const ComputeWindows& w, double layers,
                                double backward_slices, int tp) {
  Seconds comm;  // per slice: one call of each term
  for (const CommTerm& t : terms) comm += t.time / t.calls;
  if (!(comm.value() > 0.0) || !(layers > 0.0)) return 1.0;
  const Seconds forward_slice = w.forward / (2.0 * layers);
  const Seconds backward_slice = w.backward / (backward_slices * layers);
  const Seconds chunk = comm / static_cast<double>(tp);
  const Seconds exposed =
      (max0(comm - forward_slice) + chunk) * 2.0 + (max0(comm - backward_slice) + chunk) * backward_slices;
  return std::min(1.0, exposed / (comm * (2.0 + backward_slices)));
}

// The context-parallel exchange of every layer (context_parallel.hpp): its messages priced on the
// group of cp ranks (stride tp*pp) beside the other tensor ranks' groups. The ring's transfers
// hide behind the attention step beside them; the all-gather and all-to-all variants block it.
void context_parallel_terms(StepCommunication& out, const workload::TransformerShape& shape, const plan::Plan& plan,
                            const topology::Topology& topology, const std::optional<NcclHardware>& hardware,
                            const CollectiveModel& model, StepCommunicationCache& cache, const ComputeWindows& windows,
                            double layers, int m) {
  const int stride = plan.tp * plan.pp;
  const topology::Concurrency beside_tensor_ranks{plan.tp, 1};
  // A ring step is as slow as its slowest hop: the wrap-around from the last cp rank to the
  // first, which crosses nodes whenever the group does.
  const Group hop =
      make_group(topology, hardware, model, cache, CommGroup::kContext, 2, stride * (plan.cp - 1), beside_tensor_ranks);
  const Group all =
      make_group(topology, hardware, model, cache, CommGroup::kContext, plan.cp, stride, beside_tensor_ranks);
  // The forward's exchange runs again when recompute repeats the attention.
  const double forward_passes = plan.recompute == plan::Recompute::kNone ? 1.0 : 2.0;
  for (const ContextMessage& msg : context_exchange(shape, plan)) {
    const Group& g = msg.op == CollectiveOp::kSendRecv ? hop : all;
    const double passes = msg.forward ? forward_passes : 1.0;
    CommTerm t = uniform_term(std::string(msg.name), msg.op, g, msg.size, msg.calls * passes * layers * m);
    const Seconds per_call = t.calls > 0.0 ? t.time / t.calls : Seconds(0.0);
    Seconds exposed_per_pass = per_call * msg.calls;
    if (msg.overlapped) {
      const Seconds attention = msg.forward ? windows.attention_forward : windows.attention_backward;
      exposed_per_pass = ring_exposed(per_call, msg.calls, attention, plan.cp);
    }
    t.exposed = exposed_per_pass * (passes * layers * m);
    t.context_calls = msg.calls;
    t.context_backward = !msg.forward;
    out.context.push_back(
        {t.name,
         fmt::format(
             "{:.4g} steps per layer x {} ({}), {} per step{}; {:.4g} layers x {} micro-batches x {:.4g} passes",
             msg.calls, format_bytes(msg.size), to_string(msg.op), format_seconds(per_call),
             msg.overlapped
                 ? fmt::format(
                       " beside an attention step of {}",
                       format_seconds((msg.forward ? windows.attention_forward : windows.attention_backward) / plan.cp))
                 : std::string(", blocking the attention"),
             layers, m, passes),
         fmt::format("{} exposed of {}", format_seconds(t.exposed), format_seconds(t.time))});
    out.terms.push_back(t);
  }
}

/// Where a group's ranks sit, for the explanation: "1 node, NVLink" or "4 nodes, 2 ranks each".
std::string tier_text(const Group& g) {
  const topology::CommTiers& t = g.view->tiers;
  if (t.nodes <= 1) return fmt::format("{} ranks on 1 node, intra-node fabric", g.ranks);
  return fmt::format("{} ranks over {} nodes, {} per node, NICs", g.ranks, t.nodes, t.ranks_per_node);
}

/// The expert data-parallel group (Megatron-core's expert_data_parallel_group): the edp ranks of
/// one expert-TP and expert-parallel position, etp x ep dense positions apart, which is etp x ep x
/// pp GPUs once a group reaches past a stage's tensor ranks; the tensor ranks' groups beside it.
Group expert_data_group(const topology::Topology& topology, const std::optional<NcclHardware>& hardware,
                        const CollectiveModel& model, StepCommunicationCache& cache, const plan::Plan& plan,
                        CommGroup kind) {
  const int fold = plan.expert_tp() * plan.ep;
  const int stride = fold >= plan.tp ? fold * plan.pp : fold;
  return make_group(topology, hardware, model, cache, kind, plan.expert_dp(), stride,
                    topology::Concurrency{fold >= plan.tp ? plan.tp : 1, 1});
}

/// The collectives an MoE plan adds (Megatron-core's token dispatchers; Megatron-LM's MoE guide):
/// per MoE block and micro-batch, a dispatch and a combine in the forward and their two
/// gradients in the backward (a forward's worth more under full recompute). With the all-to-all
/// dispatcher each rank sends its tokens' top-k copies, S = tokens x top-k x h x bytes (nccl-tests'
/// all-to-all size); the all-gather dispatcher gathers the hidden states of the whole EP group and
/// reduce-scatters the outputs back. The busiest rank's load factor stretches every call. They
/// sit between dependent kernels: all exposed, unless moe-overlap hides them behind the other
/// micro-batch's compute (DeepSeek-V3's DualPipe, section 3.2.1), what outlasts it exposed.
void add_expert_parallel_terms(StepCommunication& out, const workload::TransformerShape& shape, const plan::Plan& plan,
                               const topology::Topology& topology, const std::optional<NcclHardware>& hardware,
                               const CollectiveModel& model, StepCommunicationCache& cache,
                               const ComputeWindows& windows, double act_bytes) {
  if (plan.ep < 2 && plan.expert_tp() < 2) return;
  const int m = windows.micro_batches;
  // MoE blocks of the busiest stage, as the compute model places them (the plan's split; the
  // MTP modules ride on the last).
  const std::vector<int> split = plan::stage_layers(plan, shape.layers);
  int moe_blocks = 0;
  for (int s = 0; s < plan.pp; ++s) {
    int blocks = (s == plan.pp - 1) ? shape.mtp_layers : 0;
    for (const auto& [kind, count] : stage_layer_kinds(shape, split, s)) blocks += kind.moe ? count : 0;
    moe_blocks = std::max(moe_blocks, blocks);
  }
  const double forward_calls =
      static_cast<double>(moe_blocks) * m * (plan.recompute == plan::Recompute::kFull ? 2.0 : 1.0);
  const double backward_calls = static_cast<double>(moe_blocks) * m;
  const double load = plan.capacity_factor ? std::min(plan.moe_imbalance, *plan.capacity_factor) : plan.moe_imbalance;
  const double routed =
      static_cast<double>(plan.seq_len) * plan.micro_batch_size / (plan.sequence_parallel ? plan.tp : 1);
  const int etp = plan.expert_tp();
  std::vector<CommTerm> terms;
  if (plan.ep > 1) {
    // Expert groups lay ranks etp first, then ep (Megatron-core's RankGenerator): ep ranks etp
    // apart while they stay inside a stage's tensor ranks; beyond them stepcast's stage-major
    // layout puts pp x etp GPUs between them on average.
    const int stride = (plan.pp == 1 || etp * plan.ep <= plan.tp) ? etp : etp * plan.pp;
    const Group ep = make_group(topology, hardware, model, cache, CommGroup::kExpert, plan.ep, stride,
                                topology::Concurrency{etp, 1});
    const std::string where = tier_text(ep);
    if (plan.moe_dispatcher == plan::MoeDispatcher::kAllToAll) {
      const Bytes size = Bytes(routed * shape.moe->top_k * shape.hidden * act_bytes * load);
      terms.push_back(uniform_term(fmt::format("MoE dispatch+combine all-to-all (forward; {})", where),
                                   CollectiveOp::kAllToAll, ep, size, 2.0 * forward_calls));
      terms.back().moe_forward_calls = 2.0;
      terms.push_back(uniform_term(fmt::format("MoE dispatch+combine all-to-all (backward; {})", where),
                                   CollectiveOp::kAllToAll, ep, size, 2.0 * backward_calls));
      terms.back().moe_backward_calls = 2.0;
      for (std::size_t i = terms.size() - 2; i < terms.size(); ++i)
        terms[i].moe_inside_node = ep.view->tiers.nodes <= 1;
    } else {
      const Bytes size = Bytes(routed * plan.ep * shape.hidden * act_bytes * load);
      for (const bool backward : {false, true}) {
        const double calls = backward ? backward_calls : forward_calls;
        const char* pass = backward ? "backward" : "forward";
        terms.push_back(uniform_term(fmt::format("MoE dispatch all-gather ({}; {})", pass, where),
                                     CollectiveOp::kAllGather, ep, size, calls));
        (backward ? terms.back().moe_backward_calls : terms.back().moe_forward_calls) = 1.0;
        terms.push_back(uniform_term(fmt::format("MoE combine reduce-scatter ({}; {})", pass, where),
                                     CollectiveOp::kReduceScatter, ep, size, calls));
        (backward ? terms.back().moe_backward_calls : terms.back().moe_forward_calls) = 1.0;
      }
      for (std::size_t i = terms.size() - 4; i < terms.size(); ++i)
        terms[i].moe_inside_node = ep.view->tiers.nodes <= 1;
    }
  }
  if (etp > 1 && plan.sequence_parallel) {
    // With expert tensor parallel the dispatched rows are gathered inside the etp group before
    // the experts and reduce-scattered after (Megatron-core's alltoall dispatcher).
    const Group etp_group = make_group(topology, hardware, model, cache, CommGroup::kExpert, etp, 1);
    const Bytes size = Bytes(routed * etp * shape.moe->top_k * shape.hidden * act_bytes * load);
    terms.push_back(uniform_term(fmt::format("MoE expert-TP all-gather ({})", tier_text(etp_group)),
                                 CollectiveOp::kAllGather, etp_group, size, forward_calls + backward_calls));
    terms.push_back(uniform_term(fmt::format("MoE expert-TP reduce-scatter ({})", tier_text(etp_group)),
                                 CollectiveOp::kReduceScatter, etp_group, size, forward_calls + backward_calls));
    for (std::size_t i = terms.size() - 2; i < terms.size(); ++i) {
      terms[i].moe_forward_calls = 1.0;
      terms[i].moe_backward_calls = 1.0;
      terms[i].moe_expert_tp = true;
      terms[i].moe_inside_node = etp_group.view->tiers.nodes <= 1;
    }
  }
  for (CommTerm& t : terms) {
    t.exposed = t.time;
    if (plan.moe_overlap) {
      // Hidden behind the other micro-batch's pass of the same blocks: what outlasts it shows.
      const bool backward = t.name.find("backward") != std::string::npos;
      const Seconds window = (backward ? windows.backward : windows.forward) * m;
      t.exposed = max0(t.time - window);
      if (!backward && t.moe_forward_calls > 0.0 && plan.recompute == plan::Recompute::kFull) {
        // Full recompute runs the forward's calls again inside the backward pass (half of this
        // term's calls), beside the backward's compute, not the forward's.
        t.exposed = max0(t.time / 2.0 - windows.forward * m) + max0(t.time / 2.0 - windows.backward * m);
      }
    }
    // Like the tensor-parallel collectives, they lengthen every micro-batch slot (the bubble's unit).
    out.tensor += t.exposed;
    out.terms.push_back(std::move(t));
  }
}

// Megatron-LM's interleaved 1F1B posts each chunk's send and receive before the next chunk's
// compute and waits for them after it (--overlap-p2p-communication, its default; Megatron turns
// it off for the non-interleaved schedule, whose sends block: megatron/core/pipeline_parallel/
// schedules.py). In the steady state a transfer hides behind one chunk's forward or backward, and
// what it takes beyond is exposed; the fill and the drain wait for every hop of the first
// micro-batch through the p x v model chunks and back, 2(pv - 1) of them.
Seconds interleaved_send_exposed(const CommTerm& sends, const ComputeWindows& w, int pp, int vp) {
  if (!(sends.calls > 0.0)) return Seconds(0.0);
  const Seconds per_call = sends.time / sends.calls;
  const Seconds chunk = std::min(w.forward, w.backward) / vp;
  const double fill_and_drain = std::min(sends.calls, 2.0 * (pp * vp - 1));
  return per_call * fill_and_drain + max0(per_call - chunk) * (sends.calls - fill_and_drain);
}

// The compute a stage runs before it needs all of its parameters: the first micro-batch's
// forward, or with the interleaved schedule its first model chunk's.
Seconds first_forward_window(const plan::Plan& plan, const ComputeWindows& windows) {
  return plan.schedule == plan::Schedule::kInterleaved ? windows.forward / plan.vp : windows.forward;
}

/// ZeRO-1/2 under overlap-param-gather=on (Megatron-LM's distributed optimizer): the updated
/// parameters are gathered bucket by bucket beside the next step's first forward, each bucket
/// before the layers it holds (megatron/core/distributed/param_and_grad_buffer.py). Every stage
/// gathers at the step's start, so the stages' groups share the NICs. The first bucket is exposed,
/// and what the gathers take beyond the first forward.
CommTerm overlapped_parameter_gather(const plan::Plan& plan, const topology::Topology& topology,
                                     const std::optional<NcclHardware>& hardware, const CollectiveModel& model,
                                     StepCommunicationCache& cache, Bytes weights, Bytes bucket_limit,
                                     const ComputeWindows& windows) {
  const topology::Concurrency every_stage{plan.tp * plan.pp, 1};
  const Group dp = make_group(topology, hardware, model, cache, CommGroup::kData, plan.gradient_ranks(),
                              plan.tp * plan.pp, every_stage);
  const Bytes bucket = std::min(weights, bucket_limit);
  CommTerm ag = pieces_term("ZeRO parameter all-gather (beside the first forward: overlap-param-gather=on)",
                            CollectiveOp::kAllGather, dp, weights, bucket, 1.0);
  const Seconds first = time_of(CollectiveOp::kAllGather, bucket, dp);
  ag.exposed = std::min(ag.time, std::max(max0(ag.time - first_forward_window(plan, windows)), first));
  return ag;
}

}  // namespace

std::string_view to_string(CommGroup group) {
  switch (group) {
    case CommGroup::kTensor:
      return "tensor";
    case CommGroup::kPipeline:
      return "pipeline";
    case CommGroup::kData:
      return "data";
    case CommGroup::kShardGroup:
      return "shard group";
    case CommGroup::kReplicaGroup:
      return "replicas";
    case CommGroup::kContext:
      return "context";
    case CommGroup::kExpert:
      return "expert parallel";
    case CommGroup::kExpertData:
      return "expert data parallel";
    case CommGroup::kExpertShardGroup:
      return "expert shard group";
  }
  STEPCAST_UNREACHABLE("unknown group");
}

StepCommunication step_communication(const workload::Workload& workload, const plan::Plan& plan,
                                     const topology::Topology& topology, const ComputeWindows& windows,
                                     const CommunicationOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "the step's communication needs a workload with a shape");
  const auto& shape = *workload.shape;
  StepCommunication out;
  const int m = windows.micro_batches;
  const double layers_per_stage = windows.layers_per_stage;
  const Seconds forward_window = windows.forward;
  const Seconds backward_window = windows.backward;
  const StateBytesPerParameter per = state_bytes_per_parameter(plan.precision, plan.optimizer);
  // Activations travel in the training precision's storage type: 2 bytes in mixed precision.
  const double act_bytes = per.parameters;
  // Each context-parallel rank holds s/cp tokens of every sequence.
  const Bytes activation =
      Bytes(static_cast<double>(plan.seq_len) / plan.cp * plan.micro_batch_size * shape.hidden * act_bytes);
  // Passes over the layers per micro-batch: forward, backward (two), and with full recompute the
  // forward again (Narayanan et al. 2021, section 3.5).
  const double passes = plan.recompute == plan::Recompute::kFull ? 4.0 : 3.0;
  CollectiveModel model;
  model.calibration = options.calibration;
  StepCommunicationCache own;
  StepCommunicationCache& cache = options.cache ? *options.cache : own;
  // What NCCL reads of the GPUs once, for every group (none where NCCL's model does not know them).
  if (!cache.hardware) {
    cache.hardware.emplace();
    if (nccl_compute_capability(topology.gpu().name)) *cache.hardware = nccl_hardware(topology);
  }
  const std::optional<NcclHardware>& hardware = *cache.hardware;
  // The groups of one kind that run at once: a stage's tensor ranks each have their own
  // data-parallel group (and pipeline send), which cross the node's NICs together.
  const topology::Concurrency beside_tensor_ranks{plan.tp, 1};
  // ZeRO-2's reduce-scatters, issued every micro-batch, run on every pipeline stage at once in the
  // steady state, so each stage's groups share the NICs with the other stages' too (once-a-step
  // traffic, DDP's and ZeRO-1's, comes as the stages finish their backward one after another).
  const topology::Concurrency every_stage{plan.tp * plan.pp, 1};

  // Tensor parallel: 2 all-reduces of sbh in the forward and 2 in the backward of each layer
  // (Shoeybi et al. 2019, Figure 4), a forward's worth more with full recompute. With sequence
  // parallel each all-reduce becomes a reduce-scatter plus an all-gather of the same S
  // (Korthikanti et al. 2022, section 4.2.2). They sit between dependent GEMMs: all exposed.
  if (plan.tp > 1) {
    const Group tp = make_group(topology, hardware, model, cache, CommGroup::kTensor, plan.tp, 1);
    const double calls = layers_per_stage * m * (passes == 4.0 ? 6.0 : 4.0);
    if (plan.sequence_parallel) {
      out.terms.push_back(
          uniform_term("TP all-gather (sequence parallel)", CollectiveOp::kAllGather, tp, activation, calls));
      out.terms.push_back(
          uniform_term("TP reduce-scatter (sequence parallel)", CollectiveOp::kReduceScatter, tp, activation, calls));
    } else {
      out.terms.push_back(uniform_term("TP all-reduce", CollectiveOp::kAllReduce, tp, activation, calls));
    }
    // Without overlap they sit between dependent GEMMs: all exposed. With tp-overlap each slice's
    // collectives run in tp chunks beside its GEMMs: what outlasts the slice's compute is exposed,
    // and one chunk always is (the first gathered or the last reduced: Wang et al. 2022,
    // "Overlap Communication with Dependent Computation via Decomposition", ASPLOS'23).
    const double per_slice = plan.tp_overlap ? tp_overlap_exposed_share(out.terms, windows, layers_per_stage,
                                                                        passes == 4.0 ? 4.0 : 2.0, plan.tp)
                                             : 1.0;
    for (auto& term : out.terms) {
      term.exposed = term.time * per_slice;
      out.tensor += term.exposed;
    }
  }
  // Pipeline: each stage sends every micro-batch's activations forward and gradients backward
  // once per model chunk, 2*m*v transfers of sbh/t (Megatron's scatter/gather optimisation,
  // Narayanan et al. 2021 section 4.1); 1F1B blocks on them, so they are exposed. The interleaved
  // schedule overlaps them with the next chunk's compute (interleaved_send_exposed).
  if (plan.pp > 1) {
    const Group pp =
        make_group(topology, hardware, model, cache, CommGroup::kPipeline, 2, plan.tp, beside_tensor_ranks);
    const bool interleaved = plan.schedule == plan::Schedule::kInterleaved;
    CommTerm term =
        uniform_term(interleaved ? "PP send/recv (beside the next chunk's compute: interleaved)" : "PP send/recv",
                     CollectiveOp::kSendRecv, pp, activation / plan.tp, 2.0 * m * plan.vp);
    term.exposed = interleaved ? interleaved_send_exposed(term, windows, plan.pp, plan.vp) : term.time;
    out.terms.push_back(term);
  }

  if (plan.cp > 1)
    context_parallel_terms(out, shape, plan, topology, hardware, model, cache, windows, layers_per_stage, m);
  if (shape.moe) add_expert_parallel_terms(out, shape, plan, topology, hardware, model, cache, windows, act_bytes);

  // Data parallel, by sharding strategy. Ranks of a data-parallel group are tp*pp apart; with
  // context parallel the group holds the cp ranks too (dp x cp, all holding the same weights).
  const int dp_stride = plan.tp * plan.pp;
  const int dp_ranks = plan.gradient_ranks();
  // FSDP / ZeRO-3 (and SHARD_GRAD_OP) gather and reduce-scatter per block: an MoE plan's routed
  // experts ride in the block's unit when they shard over dp (ep = 1), and are units of their own
  // over the expert data-parallel group with expert parallel (moe_memory.hpp, MoeShardUnits).
  const bool per_block_units = plan.zero_stage() == 3 || plan.sharding == Sharding::kFsdpGradOp;
  const bool experts_in_blocks = shape.moe && per_block_units && plan.ep == 1;
  // Otherwise an MoE plan reduces its routed experts' gradients over the expert data-parallel group (below).
  double params = workload.parameters / dp_stride;
  if (shape.moe) {
    const ExpertSplit split = expert_split(workload, plan);
    params = split.dense_per_gpu + (experts_in_blocks ? split.expert_per_gpu : 0.0);
  }
  // Gradients travel in the type they are reduced in (grad-reduce=), else their own.
  const double reduce_bytes =
      plan.grad_reduce ? (*plan.grad_reduce == plan::Precision::kFp32 ? 4.0 : 2.0) : per.gradients;
  const Bytes grads = Bytes(params * reduce_bytes);
  const Bytes weights = Bytes(params * per.parameters);
  // overlap-grad-reduce=off: every bucket waits for the backward's end (Megatron-LM without
  // --overlap-grad-reduce reduces them in finalize_model_grads, after the last backward).
  const bool grad_reduce_overlapped = plan.overlap_grad_reduce.value_or(true);
  const std::string grad_reduce_note = grad_reduce_overlapped ? "" : " (after the backward: overlap-grad-reduce=off)";
  if (dp_ranks > 1) {
    const int stage = plan.zero_stage();
    const bool hybrid = plan.sharding == Sharding::kFsdpHybrid;
    const int shard_ranks = hybrid ? plan.shard_group : dp_ranks;
    if (stage == 0) {
      // DDP: one all-reduce of all gradients per step in 25 MiB buckets (gradient accumulation
      // under no_sync), overlapped with the last micro-batch's backward; the last bucket is
      // ready only when the backward ends (Li et al. 2020, PyTorch Distributed, section 3.2).
      const Group dp =
          make_group(topology, hardware, model, cache, CommGroup::kData, dp_ranks, dp_stride, beside_tensor_ranks);
      const Bytes bucket = options.ddp_bucket;
      CommTerm term = pieces_term(fmt::format("DDP gradient all-reduce{}", grad_reduce_note), CollectiveOp::kAllReduce,
                                  dp, grads, bucket, 1.0);
      const Seconds last = time_of(CollectiveOp::kAllReduce, std::min(grads, bucket), dp);
      term.exposed = grad_reduce_overlapped ? std::max(max0(term.time - backward_window), last) : term.time;
      out.terms.push_back(term);
    } else if (stage <= 2 && !plan.is_fsdp()) {
      // ZeRO-1/2 (DeepSpeed): gradients reduce-scattered to their owners (ZeRO-2 every
      // micro-batch, ZeRO-1 once per step) in buckets of reduce_bucket_size elements, overlapped
      // with backward except the last bucket, ready only when the backward ends; after the
      // optimizer step each owner's updated parameters are all-gathered, which nothing overlaps
      // (ZeRO section 7).
      const bool every_micro_batch = stage == 2;
      const bool stages_share = every_micro_batch && plan.pp > 1;
      const Group dp = make_group(topology, hardware, model, cache, CommGroup::kData, dp_ranks, dp_stride,
                                  stages_share ? every_stage : beside_tensor_ranks);
      const double reductions = every_micro_batch ? m : 1.0;
      const Bytes bucket = std::min(grads, Bytes(options.zero_bucket_elements * reduce_bytes));
      CommTerm rs = pieces_term(fmt::format("ZeRO gradient reduce-scatter{}", grad_reduce_note),
                                CollectiveOp::kReduceScatter, dp, grads, bucket, reductions);
      const Seconds last = time_of(CollectiveOp::kReduceScatter, bucket, dp);
      // Alone, a stage hides its reduce-scatters behind its backward passes; sharing the NICs with
      // the other stages, its stream keeps running through their forwards too, so the whole
      // micro-batch slot is the window.
      const Seconds window = stages_share ? forward_window + backward_window : backward_window;
      Seconds backlog = max0(rs.time - window * reductions);
      if (stages_share) {
        // But in the pipeline's cooldown the first stage, which ends the step, runs backward passes
        // only: each one's reduce-scatters have that backward alone to hide behind, and what they
        // take beyond it piles up to the step's end (as does any backlog from before).
        const double cooldown =
            std::min(cooldown_microbatches(plan.schedule, plan.pp, m, plan.vp), static_cast<double>(m));
        const Seconds per_micro_batch = rs.time / reductions;
        backlog = std::max(max0(per_micro_batch - backward_window) * cooldown,
                           max0(rs.time - window * (m - cooldown) - backward_window * cooldown));
      }
      rs.exposed = grad_reduce_overlapped ? std::max(backlog, last) : rs.time;
      out.terms.push_back(rs);
      if (plan.overlap_param_gather.value_or(false)) {
        out.terms.push_back(overlapped_parameter_gather(plan, topology, hardware, model, cache, weights,
                                                        Bytes(options.zero_bucket_elements * per.parameters), windows));
      } else {
        CommTerm ag = uniform_term("ZeRO parameter all-gather", CollectiveOp::kAllGather, dp, weights, 1.0);
        ag.exposed = ag.time;
        out.terms.push_back(ag);
      }
    } else {
      // FSDP (FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD) and ZeRO-3: per micro-batch, gather each
      // unit (a transformer block) before its forward, again before its backward (not for
      // SHARD_GRAD_OP, which keeps them), and reduce-scatter its gradients; prefetching the next
      // unit while one computes hides them behind compute, except the gather of the first unit
      // of each pass over a model chunk (Zhao et al. 2023, PyTorch FSDP), and except what the
      // gathers take beyond the compute when the group's share of the NICs is too slow.
      const Group shard = make_group(topology, hardware, model, cache, CommGroup::kShardGroup, shard_ranks, dp_stride,
                                     beside_tensor_ranks);
      double unit_parameters = layer_parameter_count_per_rank(shape, plan);
      std::optional<MoeShardUnits> moe_units;
      if (shape.moe) {
        moe_units = moe_shard_units(shape, plan);
        // A block's mean on one GPU, its routed experts in it when they shard over dp.
        unit_parameters =
            moe_units->dense_block + (experts_in_blocks ? moe_units->expert_block * moe_units->moe_share : 0.0);
      }
      const Bytes unit = Bytes(unit_parameters * per.parameters);
      const Bytes unit_grads = Bytes(unit_parameters * reduce_bytes);
      const double mb = m;
      CommTerm fwd = pieces_term("FSDP all-gather (forward)", CollectiveOp::kAllGather, shard, weights, unit, mb);
      Seconds first_unit = time_of(CollectiveOp::kAllGather, unit, shard);
      // An interleaved stage runs its micro-batch as vp model chunks, each pass starting cold.
      const double chunks = plan.schedule == plan::Schedule::kInterleaved ? plan.vp : 1.0;
      const bool regather = stage == 3;
      CommTerm bwd;
      if (regather) bwd = pieces_term("FSDP all-gather (backward)", CollectiveOp::kAllGather, shard, weights, unit, mb);
      CommTerm rs =
          pieces_term("FSDP gradient reduce-scatter", CollectiveOp::kReduceScatter, shard, grads, unit_grads, mb);
      // With expert parallel each MoE block's routed experts are a unit of their own over the expert
      // data-parallel group, gathered and reduce-scattered beside the block's dense unit on the same
      // stream (TorchTitan's FSDP2 over the expert-data-parallel mesh).
      CommTerm expert_fwd;
      CommTerm expert_bwd;
      CommTerm expert_rs;
      if (moe_units && !experts_in_blocks && plan.expert_dp() > 1) {
        const Group eg = expert_data_group(topology, hardware, model, cache, plan, CommGroup::kExpertShardGroup);
        const double expert_per_gpu = expert_split(workload, plan).expert_per_gpu;
        const Bytes expert_unit = Bytes(moe_units->expert_block * per.parameters);
        const Bytes expert_weights = Bytes(expert_per_gpu * per.parameters);
        const std::string where = tier_text(eg);
        expert_fwd = pieces_term(fmt::format("FSDP expert all-gather (forward; edp; {})", where),
                                 CollectiveOp::kAllGather, eg, expert_weights, expert_unit, mb);
        if (regather) {
          expert_bwd = pieces_term(fmt::format("FSDP expert all-gather (backward; edp; {})", where),
                                   CollectiveOp::kAllGather, eg, expert_weights, expert_unit, mb);
        }
        expert_rs = pieces_term(fmt::format("FSDP expert gradient reduce-scatter (edp; {})", where),
                                CollectiveOp::kReduceScatter, eg, Bytes(expert_per_gpu * reduce_bytes),
                                Bytes(moe_units->expert_block * reduce_bytes), mb);
        // The first block of a pass waits for its experts too.
        first_unit += time_of(CollectiveOp::kAllGather, expert_unit, eg);
      }
      // The forward's gathers hide behind the forward, but for each pass's first unit.
      // The prefetched gathers keep running while the compute stream waits on an MoE block's
      // dispatch and combine, so those waits widen the windows, when the expert group stays
      // inside a node; across nodes its all-to-alls take the NICs the gathers need.
      Seconds moe_forward_wait(0.0);
      Seconds moe_backward_wait(0.0);
      for (const CommTerm& t : out.terms) {
        if (t.group != CommGroup::kExpert || !t.moe_inside_node) continue;
        // Under full recompute the forward's calls run again inside the backward; the expert-TP
        // terms hold both passes' calls.
        const bool full = plan.recompute == plan::Recompute::kFull;
        double in_backward = 1.0;
        if (t.moe_forward_calls > 0.0)
          in_backward = t.moe_backward_calls > 0.0 ? (full ? 2.0 / 3.0 : 0.5) : (full ? 0.5 : 0.0);
        moe_forward_wait += t.exposed * (1.0 - in_backward) / mb;
        moe_backward_wait += t.exposed * in_backward / mb;
      }
      const Seconds forward_total = fwd.time + expert_fwd.time;
      const Seconds forward_exposed = std::min(
          forward_total, (max0(forward_total / mb - forward_window - moe_forward_wait) + first_unit * chunks) * mb);
      fwd.exposed = forward_total.value() > 0.0 ? forward_exposed * (fwd.time / forward_total) : Seconds(0.0);
      expert_fwd.exposed =
          forward_total.value() > 0.0 ? forward_exposed * (expert_fwd.time / forward_total) : Seconds(0.0);
      CommTerm replicas;
      if (hybrid && plan.dp / plan.shard_group > 1) {
        // HYBRID_SHARD all-reduces each shard's gradients across the replicas; every position in
        // the shard group (and every tensor rank) has its replica group, consecutive GPUs when
        // tp x shard positions are (pp = 1).
        const topology::Concurrency replicas_beside =
            plan.pp == 1 ? topology::Concurrency{plan.tp * plan.shard_group, 1} : beside_tensor_ranks;
        const Group rep = make_group(topology, hardware, model, cache, CommGroup::kReplicaGroup,
                                     plan.dp / plan.shard_group, dp_stride * plan.shard_group, replicas_beside);
        replicas = pieces_term("HSDP gradient all-reduce (replicas)", CollectiveOp::kAllReduce, rep,
                               grads / plan.shard_group, unit_grads / plan.shard_group, mb);
      }
      // Share the backward's exposed time among its collectives in proportion to their time.
      const Seconds backward_total = bwd.time + rs.time + replicas.time + expert_bwd.time + expert_rs.time;
      const Seconds backward_exposed = max0(backward_total / mb - backward_window - moe_backward_wait) * mb;
      const auto share = [&](CommTerm& t) {
        t.exposed = backward_total.value() > 0.0 ? backward_exposed * (t.time / backward_total) : Seconds(0.0);
      };
      out.terms.push_back(fwd);
      if (expert_fwd.calls > 0) out.terms.push_back(expert_fwd);
      if (regather) {
        share(bwd);
        share(expert_bwd);
        // Each backward pass's first gather is exposed, as the forward's, shared between the dense
        // and the expert unit as their time.
        const Seconds gathers = bwd.time + expert_bwd.time;
        const Seconds first = gathers.value() > 0.0 ? first_unit * chunks * mb : Seconds(0.0);
        if (gathers.value() > 0.0) bwd.exposed = std::min(bwd.time, bwd.exposed + first * (bwd.time / gathers));
        out.terms.push_back(bwd);
        if (expert_bwd.calls > 0) {
          expert_bwd.exposed = std::min(expert_bwd.time, expert_bwd.exposed + first * (expert_bwd.time / gathers));
          out.terms.push_back(expert_bwd);
        }
      }
      share(rs);
      out.terms.push_back(rs);
      if (expert_rs.calls > 0) {
        share(expert_rs);
        out.terms.push_back(expert_rs);
      }
      if (replicas.calls > 0) {
        share(replicas);
        out.terms.push_back(replicas);
      }
    }
  }
  if (shape.moe && plan.expert_dp() > 1 && !per_block_units) {
    // The routed experts' gradients are reduced over the expert data-parallel group (Megatron-core:
    // expert_data_parallel_group), as the dense ones over dp; behind the backward that the dense
    // reduction leaves free, the last bucket exposed at least.
    const Group g = expert_data_group(topology, hardware, model, cache, plan, CommGroup::kExpertData);
    const Bytes expert_grads = Bytes(expert_split(workload, plan).expert_per_gpu * reduce_bytes);
    const bool sharded = plan.zero_stage() >= 1;
    const CollectiveOp op = sharded ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    const Bytes bucket =
        std::min(expert_grads, sharded ? Bytes(options.zero_bucket_elements * reduce_bytes) : options.ddp_bucket);
    const double reductions = plan.zero_stage() == 2 ? m : 1.0;
    CommTerm term = pieces_term(fmt::format("expert gradient {} (edp; {}){}", sharded ? "reduce-scatter" : "all-reduce",
                                            tier_text(g), grad_reduce_note),
                                op, g, expert_grads, bucket, reductions);
    Seconds dense_time(0.0);
    for (const auto& t : out.terms) {
      if (t.group == CommGroup::kData && t.op != CollectiveOp::kAllGather) dense_time += t.time;
    }
    term.exposed = grad_reduce_overlapped ? std::max(max0(term.time - max0(backward_window * reductions - dense_time)),
                                                     time_of(op, bucket, g))
                                          : term.time;
    out.terms.push_back(term);
    if (sharded) {
      CommTerm ag =
          uniform_term(fmt::format("expert parameter all-gather (edp; {})", tier_text(g)), CollectiveOp::kAllGather, g,
                       Bytes(expert_split(workload, plan).expert_per_gpu * per.parameters), 1.0);
      ag.exposed = ag.time;
      if (plan.overlap_param_gather.value_or(false)) {
        // Gathered after the dense parameters, beside what of the first forward they leave free.
        Seconds dense_gather(0.0);
        for (const auto& t : out.terms) {
          if (t.group == CommGroup::kData && t.op == CollectiveOp::kAllGather) dense_gather += t.time;
        }
        ag.exposed = max0(ag.time - max0(first_forward_window(plan, windows) - dense_gather));
      }
      out.terms.push_back(ag);
    }
  }
  for (const auto& term : out.terms) out.exposed += term.exposed;
  return out;
}

}  // namespace stepcast::cost
