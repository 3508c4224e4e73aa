// What the flex dispatcher (Megatron-Core's moe_token_dispatcher_type="flex": DeepEP's or
// HybridEP's kernels) sends between scale-up domains: a token goes once to each domain that holds
// at least one of its top-k experts, where a GPU of that domain forwards it over NVLink to the
// experts' GPUs (DeepSeek-V3 technical report, section 3.2.2; DeepEP's README), instead of once per
// expert as an all-to-all does.
#pragma once

namespace stepcast::cost {

/// Other scale-up domains a token reaches on average: `experts` spread evenly over `domains`, the
/// token's `top_k` distinct experts drawn uniformly (balanced routing, no group limit):
/// (domains - 1) x (1 - C(experts - experts/domains, top_k) / C(experts, top_k)).
/// Preconditions: domains >= 1 divides experts, 1 <= top_k <= experts.
double remote_domains_per_token(int experts, int top_k, int domains);

}  // namespace stepcast::cost
