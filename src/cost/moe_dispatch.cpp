#include "stepcast/cost/moe_dispatch.hpp"

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

double remote_domains_per_token(int experts, int top_k, int domains) {
  STEPCAST_ASSERT(domains >= 1 && experts % domains == 0 && top_k >= 1 && top_k <= experts,
                  "experts spread evenly over the domains, and at most all of them routed");
  // C(E - E/D, k) / C(E, k): none of the k experts in a given domain, as a product of k ratios.
  const int outside = experts - experts / domains;
  double none_there = 1.0;
  for (int i = 0; i < top_k; ++i) none_there *= outside > i ? static_cast<double>(outside - i) / (experts - i) : 0.0;
  return (domains - 1) * (1.0 - none_there);
}

}  // namespace stepcast::cost
