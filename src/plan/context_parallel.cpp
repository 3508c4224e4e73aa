// The rules of context parallel (Megatron-Core context parallel; Transformer Engine's
// context-parallel attention), each reported with its numbers.
#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

std::string_view to_string(ContextComm c) {
  switch (c) {
    case ContextComm::kP2p:
      return "p2p";
    case ContextComm::kAllGather:
      return "all-gather";
    case ContextComm::kA2a:
      return "a2a";
  }
  STEPCAST_UNREACHABLE("unknown context-parallel communication");
}

void context_parallel_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.cp == 1) {
    if (p.cp_comm_given) out.push_back({Rule::kCpCommNeedsCp, {}});
    return;
  }
  // Megatron-Core runs context parallel inside Transformer Engine's fused attention only.
  if (!p.flash_attention) out.push_back({Rule::kCpNeedsFlash, {{"cp", p.cp}}});
  if (p.sharding == Sharding::kFsdpHybrid) out.push_back({Rule::kCpWithHybridShard, {{"cp", p.cp}}});
  // Megatron-Core's MambaContextParallel hands each context-parallel rank the whole sequence for
  // heads / (tp x cp) of the heads; B and C's groups are split with them, or repeated over the cp
  // ranks where a tensor rank holds fewer groups than cp.
  if (workload.shape && workload.shape->has_mamba_layers()) {
    const workload::MambaShape& m = workload.shape->hybrid->mamba;
    if (m.heads % p.tp == 0 && (m.heads / p.tp) % p.cp != 0)
      out.push_back({Rule::kCpDividesMambaHeads, {{"heads", m.heads}, {"tp", p.tp}, {"cp", p.cp}}});
    if (m.groups % p.tp == 0) {
      const int groups = m.groups / p.tp;
      if (groups < p.cp ? p.cp % groups != 0 : groups % p.cp != 0)
        out.push_back({Rule::kCpSplitsMambaGroups, {{"groups", m.groups}, {"tp", p.tp}, {"cp", p.cp}}});
    }
  }
  if (p.seq_len > 0) {
    if (p.cp_comm == ContextComm::kA2a) {
      if (p.seq_len % p.cp != 0) out.push_back({Rule::kCpDividesSeq, {{"seq", p.seq_len}, {"cp", p.cp}}});
    } else if (p.seq_len % (2 * p.cp) != 0) {
      // Causal load balancing cuts the sequence into 2 x cp chunks, rank i taking chunks i and
      // 2cp-1-i (Megatron-LM get_batch_on_this_cp_rank).
      out.push_back(
          {Rule::kTwoCpDividesSeq, {{"seq", p.seq_len}, {"cp", p.cp}, {"cp_comm", std::string(to_string(p.cp_comm))}}});
    }
    if (p.sequence_parallel && p.seq_len % p.cp == 0 && (p.seq_len / p.cp) % p.tp != 0) {
      out.push_back(
          {Rule::kCpTokensDivideTp, {{"seq", p.seq_len}, {"cp", p.cp}, {"tokens", p.seq_len / p.cp}, {"tp", p.tp}}});
    }
  }
  if (p.cp_comm == ContextComm::kA2a) {
    if (const auto& s = workload.shape) {
      // Ulysses gives each rank all the sequence for heads / cp of its tensor rank's heads.
      if (s->heads % (p.tp * p.cp) != 0) {
        out.push_back({Rule::kA2aHeadsDivideTpCp, {{"heads", s->heads}, {"tp", p.tp}, {"cp", p.cp}}});
      }
      if (s->kv_heads % (p.tp * p.cp) != 0) {
        out.push_back({Rule::kA2aKvHeadsDivideTpCp, {{"kv_heads", s->kv_heads}, {"tp", p.tp}, {"cp", p.cp}}});
      }
    }
  }
}

std::string describe_context_parallel(const Verdict& v) {
  const auto n = [&v](std::string_view name) { return v.number(name); };
  switch (v.rule) {
    case Rule::kCpCommNeedsCp:
      return "cp-comm= needs context parallel (cp > 1, got cp=1)";
    case Rule::kCpNeedsFlash:
      return fmt::format(
          "cp={} needs fused attention (flash=on): Megatron-Core's context parallel runs in Transformer Engine's fused "
          "attention",
          n("cp"));
    case Rule::kCpWithHybridShard:
      return fmt::format(
          "cp={} with fsdp=hybrid is not modelled: shard over the data-parallel-with-cp group with zero= or fsdp=full",
          n("cp"));
    case Rule::kCpDividesSeq:
      return fmt::format("sequence length ({}) must be divisible by cp ({})", n("seq"), n("cp"));
    case Rule::kTwoCpDividesSeq:
      return fmt::format(
          "sequence length ({}) must be divisible by 2*cp = {} (cp-comm={} splits it into 2 x cp load-balanced chunks)",
          n("seq"), 2 * n("cp"), v.text("cp_comm"));
    case Rule::kCpTokensDivideTp:
      return fmt::format(
          "with sequence parallel, each context-parallel rank's tokens seq/cp = {}/{} = {} must be divisible by tp "
          "({})",
          n("seq"), n("cp"), n("tokens"), n("tp"));
    case Rule::kA2aHeadsDivideTpCp:
      return fmt::format("cp-comm=a2a needs attention heads ({}) divisible by tp*cp = {}*{} = {}", n("heads"), n("tp"),
                         n("cp"), n("tp") * n("cp"));
    case Rule::kA2aKvHeadsDivideTpCp:
      return fmt::format("cp-comm=a2a needs key/value heads ({}) divisible by tp*cp = {}*{} = {}", n("kv_heads"),
                         n("tp"), n("cp"), n("tp") * n("cp"));
    case Rule::kCpDividesMambaHeads:
      return fmt::format(
          "cp={} needs each tensor rank's Mamba-2 heads ({} / tp {} = {}) divisible by cp: Megatron-Core gives each "
          "context-parallel rank the whole sequence for heads / (tp x cp) of them",
          n("cp"), n("heads"), n("tp"), n("heads") / n("tp"));
    case Rule::kCpSplitsMambaGroups:
      return fmt::format(
          "cp={} and each tensor rank's Mamba-2 groups ({} / tp {} = {}) must divide one another: Megatron-Core splits "
          "the groups over the context-parallel ranks, or repeats each over cp / groups of them",
          n("cp"), n("groups"), n("tp"), n("groups") / n("tp"));
    default:
      STEPCAST_UNREACHABLE("a rule of context parallel");
  }
}

}  // namespace stepcast::plan
