// Context parallel as Megatron-Core runs it through Transformer Engine's context-parallel
// attention (cp_comm_type p2p / all_gather / a2a): the attention each rank computes and what it
// exchanges per layer. Ring attention: Liu et al. 2023, "Ring Attention with Blockwise
// Transformers"; Ulysses: Jacobs et al. 2023, "DeepSpeed Ulysses", section 3.
#include "stepcast/cost/context_parallel.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/memory.hpp"

namespace stepcast::cost {

ContextAttention context_attention(double heads, double seq, double head_dim, const OperatorContext& c) {
  ContextAttention out;
  const double local = seq / c.cp;
  if (c.cp == 1.0) {
    out.shape = {heads, seq, seq, head_dim};
    return out;
  }
  switch (c.cp_comm) {
    case plan::ContextComm::kP2p:
      // One kernel per ring step, each over this rank's queries and one rank's chunk of keys
      // (TE AttnFuncWithCPAndKVP2P); causal load balancing gives every step the same work.
      out.shape = {heads, local, local, head_dim};
      out.kernels = c.cp;
      break;
    case plan::ContextComm::kAllGather:
      // The gathered keys, attended by each of the rank's two load-balanced query chunks in turn
      // (TE AttnFuncWithCPAndKVAllGather).
      out.shape = {heads, local / 2.0, seq, head_dim};
      out.kernels = 2.0;
      break;
    case plan::ContextComm::kA2a:
      out.shape = {heads / c.cp, seq, seq, head_dim};
      break;
  }
  return out;
}

std::vector<ContextMessage> context_exchange(const workload::TransformerShape& shape, const plan::Plan& plan) {
  std::vector<ContextMessage> out;
  if (plan.cp == 1) return out;
  const double e = state_bytes_per_parameter(plan.precision, plan.optimizer).parameters;      // activation element
  const double tokens = static_cast<double>(plan.micro_batch_size) * plan.seq_len / plan.cp;  // this rank's
  const double kv_width = static_cast<double>(shape.kv_heads) * shape.head_dim() / plan.tp;
  const double q_width = static_cast<double>(shape.hidden) / plan.tp;
  const Bytes kv = Bytes(2.0 * tokens * kv_width * e);  // this rank's K and V
  const double steps = plan.cp - 1.0;
  switch (plan.cp_comm) {
    case plan::ContextComm::kP2p:
      // Forward: cp-1 steps, each sending the K/V chunk held to the next rank while attending to
      // it. Backward: cp-1 steps pass K/V with the dK/dV accumulated so far (one buffer of twice
      // the chunk), and a last step returns each dK/dV to its owner (TE AttnFuncWithCPAndKVP2P).
      out.push_back({"CP ring K/V send/recv (forward)", CollectiveOp::kSendRecv, kv, steps, true, true});
      out.push_back(
          {"CP ring K/V + dK/dV send/recv (backward)", CollectiveOp::kSendRecv, kv * 2.0, steps, false, true});
      out.push_back({"CP ring dK/dV home (backward)", CollectiveOp::kSendRecv, kv, 1.0, false, false});
      break;
    case plan::ContextComm::kAllGather:
      // K/V of the whole sequence gathered before attention, again for the backward, and dK/dV
      // reduce-scattered back to the chunks' owners (TE AttnFuncWithCPAndKVAllGather).
      out.push_back({"CP K/V all-gather (forward)", CollectiveOp::kAllGather, kv * plan.cp, 1.0, true, false});
      out.push_back({"CP K/V all-gather (backward)", CollectiveOp::kAllGather, kv * plan.cp, 1.0, false, false});
      out.push_back(
          {"CP dK/dV reduce-scatter (backward)", CollectiveOp::kReduceScatter, kv * plan.cp, 1.0, false, false});
      break;
    case plan::ContextComm::kA2a: {
      // Ulysses: Q, K, V go from sequence shards to head shards before attention and O comes back
      // after it; the backward does the same with dO and dQ, dK, dV (Jacobs et al. 2023, section 3).
      const Bytes qkv = Bytes(tokens * (q_width + 2.0 * kv_width) * e);
      const Bytes o = Bytes(tokens * q_width * e);
      out.push_back({"CP all-to-all Q,K,V (forward)", CollectiveOp::kAllToAll, qkv, 1.0, true, false});
      out.push_back({"CP all-to-all O (forward)", CollectiveOp::kAllToAll, o, 1.0, true, false});
      out.push_back({"CP all-to-all dO (backward)", CollectiveOp::kAllToAll, o, 1.0, false, false});
      out.push_back({"CP all-to-all dQ,dK,dV (backward)", CollectiveOp::kAllToAll, qkv, 1.0, false, false});
      break;
    }
  }
  return out;
}

MambaSplit mamba_split(const workload::MambaShape& m, double tp, double cp) {
  MambaSplit out;
  const double groups = m.groups / tp;
  out.heads = m.heads / (tp * cp);
  out.groups = std::max(1.0, groups / cp);
  out.group_repeats = std::max(1.0, cp / groups);
  out.inner = out.heads * m.head_dim;
  out.conv_channels = out.inner + 2.0 * out.groups * m.state;
  out.in_width = 2.0 * out.inner + 2.0 * out.groups * m.state + out.heads;
  return out;
}

std::vector<ContextMessage> mamba_context_exchange(const workload::TransformerShape& shape, const plan::Plan& plan) {
  std::vector<ContextMessage> out;
  if (plan.cp == 1 || !shape.hybrid) return out;
  const workload::MambaShape& m = shape.hybrid->mamba;
  const double e = state_bytes_per_parameter(plan.precision, plan.optimizer).parameters;      // activation element
  const double tokens = static_cast<double>(plan.micro_batch_size) * plan.seq_len / plan.cp;  // this rank's
  const double tp = plan.tp;
  const MambaSplit split = mamba_split(m, tp, plan.cp);
  // Each all-to-all sends this rank's s/cp tokens of one tensor (nccl-tests' S): z and x of the
  // tensor rank's inner width, B and C of its groups (each repeated where cp exceeds them), dt one
  // a head; the scan's output y comes back at the inner width.
  const Bytes inner = Bytes(tokens * m.inner() / tp * e);
  const Bytes group = Bytes(tokens * m.groups / tp * split.group_repeats * m.state * e);
  const Bytes dt = Bytes(tokens * m.heads / tp * e);
  out.push_back({"CP Mamba all-to-all z, x (forward)", CollectiveOp::kAllToAll, inner, 2.0, true, false});
  out.push_back({"CP Mamba all-to-all B, C (forward)", CollectiveOp::kAllToAll, group, 2.0, true, false});
  out.push_back({"CP Mamba all-to-all dt (forward)", CollectiveOp::kAllToAll, dt, 1.0, true, false});
  out.push_back({"CP Mamba all-to-all y (forward)", CollectiveOp::kAllToAll, inner, 1.0, true, false});
  out.push_back({"CP Mamba all-to-all dy (backward)", CollectiveOp::kAllToAll, inner, 1.0, false, false});
  out.push_back({"CP Mamba all-to-all dz, dx (backward)", CollectiveOp::kAllToAll, inner, 2.0, false, false});
  out.push_back({"CP Mamba all-to-all dB, dC (backward)", CollectiveOp::kAllToAll, group, 2.0, false, false});
  out.push_back({"CP Mamba all-to-all d(dt) (backward)", CollectiveOp::kAllToAll, dt, 1.0, false, false});
  return out;
}

Seconds ring_exposed(Seconds transfer_per_step, double steps, Seconds attention_pass, int cp) {
  STEPCAST_ASSERT(cp >= 1, "cp is at least 1");
  const Seconds step_compute = attention_pass / static_cast<double>(cp);
  const Seconds beyond = transfer_per_step - step_compute;
  return beyond.value() > 0.0 ? beyond * steps : Seconds(0.0);
}

}  // namespace stepcast::cost
