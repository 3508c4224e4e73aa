#include "stepcast/cost/moe_dispatch.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

namespace {

/// C(n - m, k) / C(n, k): none of k items drawn from n falls among m given ones, as k ratios.
double none_drawn(int n, int m, int k) {
  double none = 1.0;
  for (int i = 0; i < k; ++i) none *= n - m > i ? static_cast<double>(n - m - i) / (n - i) : 0.0;
  return none;
}

}  // namespace

double remote_domains_per_token(const RoutedExperts& routing, int domains) {
  const int experts = routing.experts;
  const int groups = routing.groups;
  const int best = routing.group_topk;
  STEPCAST_ASSERT(domains >= 1 && experts % domains == 0 && routing.top_k >= 1 && groups >= 1 &&
                      experts % groups == 0 && best >= 1 && best <= groups &&
                      routing.top_k <= best * (experts / groups),
                  "experts spread evenly over the domains and groups, and at most the best groups' routed");
  // Groups that do not line up with the domains: their draw is left out (balanced routing over all).
  const bool aligned = groups % domains == 0 || domains % groups == 0;
  const int g = aligned ? groups : 1;
  const int b = aligned ? best : 1;
  const int pool = b * (experts / g);  // the experts of a token's best groups
  // A domain meets `met` groups with `share` of its experts in each; j of them among the best.
  const int met = std::max(1, g / domains);
  const int share = experts / domains / met;
  double untouched = 0.0;
  for (int j = 0; j <= std::min(met, b); ++j) {
    // Hypergeometric: C(met, j) C(g - met, b - j) / C(g, b), as products of ratios.
    double groups_drawn = 1.0;
    for (int i = 0; i < j; ++i) groups_drawn *= static_cast<double>(met - i) / (i + 1);
    for (int i = 0; i < b - j; ++i) groups_drawn *= static_cast<double>(g - met - i) / (i + 1);
    for (int i = 0; i < b; ++i) groups_drawn /= static_cast<double>(g - i) / (i + 1);
    untouched += groups_drawn * none_drawn(pool, j * share, routing.top_k);
  }
  return (domains - 1) * (1.0 - untouched);
}

double ranks_reached_per_token(const RoutedExperts& routing, int ranks) {
  if (ranks <= 1) return 1.0;
  return remote_domains_per_token(routing, ranks) * ranks / (ranks - 1);
}

}  // namespace stepcast::cost
