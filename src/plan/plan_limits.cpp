// Range checks of a plan's batch and sequence: one rule, applied wherever a plan is validated.
#include "plan_limits.hpp"

#include <cstdint>

namespace stepcast::plan::detail {
namespace {

// Published runs use up to 16M tokens per step (Llama 3 405B, Dubey et al. 2024, section 3.4.1)
// and sequences up to 10M tokens (Llama 4 Scout's context): 2^36 tokens and 2^27-token sequences
// are thousands of times beyond them.
constexpr std::int64_t kMaxTokensPerStep = std::int64_t{1} << 36;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 27;
// Published pipelines run tens to thousands of micro-batches per step; 2^16 times a stage's layers
// (at most 2^14) stays an int, as the per-kernel counts of a step are kept.
constexpr std::int64_t kMaxMicroBatches = std::int64_t{1} << 16;

}  // namespace

void limit_problems(const Plan& p, std::vector<Verdict>& out) {
  if (p.seq_len > kMaxSequence) out.push_back({Rule::kSequenceLimit, {{"seq", p.seq_len}, {"limit", kMaxSequence}}});
  const std::int64_t tokens = std::int64_t{p.global_batch} * std::int64_t{p.seq_len};
  if (tokens > kMaxTokensPerStep) {
    out.push_back(
        {Rule::kTokensPerStepLimit,
         {{"global_batch", p.global_batch}, {"seq", p.seq_len}, {"tokens", tokens}, {"limit", kMaxTokensPerStep}}});
  }
  if (p.dp > 0 && p.micro_batch_size > 0) {
    const std::int64_t micro_batches = p.global_batch / (std::int64_t{p.dp} * p.micro_batch_size);
    if (micro_batches > kMaxMicroBatches) {
      out.push_back({Rule::kMicroBatchLimit,
                     {{"global_batch", p.global_batch},
                      {"dp", p.dp},
                      {"mbs", p.micro_batch_size},
                      {"micro_batches", micro_batches},
                      {"limit", kMaxMicroBatches}}});
    }
  }
}

}  // namespace stepcast::plan::detail
