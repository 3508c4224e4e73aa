// The rules of context parallel (Megatron-Core context parallel; Transformer Engine's
// context-parallel attention), each reported with its numbers.
#include <fmt/format.h>

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

void context_parallel_problems(const Plan& p, const workload::Workload& workload, std::vector<std::string>& out) {
  if (p.cp == 1) {
    if (p.cp_comm_given) out.push_back("cp-comm= needs context parallel (cp > 1, got cp=1)");
    return;
  }
  if (!p.flash_attention) {
    // Megatron-Core runs context parallel inside Transformer Engine's fused attention only.
    out.push_back(
        fmt::format("cp={} needs fused attention (flash=on): Megatron-Core's context parallel runs in Transformer "
                    "Engine's fused attention",
                    p.cp));
  }
  if (p.sharding == Sharding::kFsdpHybrid) {
    out.push_back(fmt::format(
        "cp={} with fsdp=hybrid is not modelled: shard over the data-parallel-with-cp group with zero= or fsdp=full",
        p.cp));
  }
  if (p.seq_len > 0) {
    if (p.cp_comm == ContextComm::kA2a) {
      if (p.seq_len % p.cp != 0) {
        out.push_back(fmt::format("sequence length ({}) must be divisible by cp ({})", p.seq_len, p.cp));
      }
    } else if (p.seq_len % (2 * p.cp) != 0) {
      // Causal load balancing cuts the sequence into 2 x cp chunks, rank i taking chunks i and
      // 2cp-1-i (Megatron-LM get_batch_on_this_cp_rank).
      out.push_back(fmt::format(
          "sequence length ({}) must be divisible by 2*cp = {} (cp-comm={} splits it into 2 x cp load-balanced chunks)",
          p.seq_len, 2 * p.cp, to_string(p.cp_comm)));
    }
    if (p.sequence_parallel && p.seq_len % p.cp == 0 && (p.seq_len / p.cp) % p.tp != 0) {
      out.push_back(
          fmt::format("with sequence parallel, each context-parallel rank's tokens seq/cp = {}/{} = {} must be "
                      "divisible by tp ({})",
                      p.seq_len, p.cp, p.seq_len / p.cp, p.tp));
    }
  }
  if (p.cp_comm == ContextComm::kA2a) {
    if (const auto& s = workload.shape) {
      // Ulysses gives each rank all the sequence for heads / cp of its tensor rank's heads.
      if (s->heads % (p.tp * p.cp) != 0) {
        out.push_back(fmt::format("cp-comm=a2a needs attention heads ({}) divisible by tp*cp = {}*{} = {}", s->heads,
                                  p.tp, p.cp, p.tp * p.cp));
      }
      if (s->kv_heads % (p.tp * p.cp) != 0) {
        out.push_back(fmt::format("cp-comm=a2a needs key/value heads ({}) divisible by tp*cp = {}*{} = {}", s->kv_heads,
                                  p.tp, p.cp, p.tp * p.cp));
      }
    }
  }
}

}  // namespace stepcast::plan
