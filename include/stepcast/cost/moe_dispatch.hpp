// What the flex dispatcher (Megatron-Core's moe_token_dispatcher_type="flex": DeepEP's or
// HybridEP's kernels) sends between scale-up domains: a token goes once to each domain that holds
// at least one of its top-k experts, where a GPU of that domain forwards it over NVLink to the
// experts' GPUs (DeepSeek-V3 technical report, section 3.2.2; DeepEP's README), instead of once per
// expert as an all-to-all does. Group-limited routing (section 2.1.2: at most 4 nodes a token)
// lowers the domains a token reaches.
#pragma once

namespace stepcast::cost {

/// How a token's routed experts are drawn: its `top_k` distinct experts from the best `group_topk`
/// of `groups` contiguous groups of the `experts` (group-limited routing; 1 and 1: from all).
struct RoutedExperts {
  int experts = 0;
  int top_k = 0;
  int groups = 1;
  int group_topk = 1;
};

/// Other scale-up domains a token reaches on average: the experts spread evenly and contiguously
/// over `domains`, under balanced routing (each group equally likely among a token's best, each
/// expert of those groups equally likely). Without groups, (domains - 1) x (1 - C(experts -
/// experts/domains, top_k) / C(experts, top_k)). With them a domain meets q = max(1, groups /
/// domains) groups; j of them are among the token's best with hypergeometric odds, and then none of
/// the top-k falls among its j x experts/domains/q experts of the best groups' pool with odds
/// C(pool - j x experts/domains/q, top_k) / C(pool, top_k). Groups that neither divide nor are
/// divided by the domains are left out. Preconditions: domains and groups divide experts,
/// 1 <= group_topk <= groups, 1 <= top_k <= the best groups' experts.
double remote_domains_per_token(const RoutedExperts& routing, int domains);

/// GPUs of an expert-parallel group of `ranks` a token's experts sit on, its own included: the
/// flex dispatcher sends a token once to each (DeepEP's get_dispatch_layout marks a token per rank,
/// is_token_in_rank; HybridEP's receive buffer holds at most one copy of each token a source rank
/// sends), where the all-to-all sends one per expert. remote_domains_per_token over `ranks` GPUs,
/// times ranks / (ranks - 1): the own GPU is reached as often as any other. 1 on one GPU.
double ranks_reached_per_token(const RoutedExperts& routing, int ranks);

}  // namespace stepcast::cost
