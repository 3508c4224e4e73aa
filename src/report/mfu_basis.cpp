// The words for what MFU counts of attention.
#include "stepcast/report/mfu_basis.hpp"

#include <fmt/format.h>

namespace stepcast::report {

std::string mfu_attention_basis(const plan::Plan& plan, const workload::Workload& workload) {
  if (!workload.shape) return {};
  const workload::TransformerShape& s = *workload.shape;
  if (!plan.flash_attention) return "attention counted over the whole s x s square, as the unfused kernels compute it";
  if (plan.doc_len > 0 && plan.doc_len < plan.seq_len) {
    return fmt::format(
        "attention counted causal within each packed {}-token document (doc-len=), as FlashAttention "
        "computes it",
        plan.doc_len);
  }
  if (s.sliding_window > 0 && s.sliding_layers > 0 && s.sliding_window < plan.seq_len) {
    return fmt::format(
        "attention counted causal, and within the {}-token window on {} of {} layers, as FlashAttention computes it",
        s.sliding_window, s.sliding_layers, s.layers);
  }
  return "attention counted causal (half the s x s scores), as FlashAttention computes it";
}

}  // namespace stepcast::report
