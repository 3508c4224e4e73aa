// Range checks of a plan's batch and sequence: one rule, applied wherever a plan is validated.
#include "plan_limits.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace stepcast::plan::detail {
namespace {

// Published runs use up to 16M tokens per step (Llama 3 405B, Dubey et al. 2024, section 3.4.1)
// and sequences up to 10M tokens (Llama 4 Scout's context): 2^36 tokens and 2^27-token sequences
// are thousands of times beyond them.
constexpr std::int64_t kMaxTokensPerStep = std::int64_t{1} << 36;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 27;

}  // namespace

void limit_problems(const Plan& p, std::vector<std::string>& out) {
  if (p.seq_len > kMaxSequence) {
    out.push_back(
        fmt::format("the sequence length {} is above stepcast's limit of {} tokens", p.seq_len, kMaxSequence));
  }
  const std::int64_t tokens = std::int64_t{p.global_batch} * std::int64_t{p.seq_len};
  if (tokens > kMaxTokensPerStep) {
    out.push_back(fmt::format(
        "global batch x sequence = {} x {} = {} tokens per step is above stepcast's limit of {} (2^36), thousands "
        "of times the largest published batch",
        p.global_batch, p.seq_len, tokens, kMaxTokensPerStep));
  }
}

}  // namespace stepcast::plan::detail
