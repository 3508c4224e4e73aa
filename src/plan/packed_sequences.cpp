// doc-len=N: each sequence packs documents of N tokens on average, and attention runs within each
// document, not across the pack: Megatron-Bridge's packed sequences for SFT and PEFT
// (docs/training/packed-sequences.md; cu_seqlens in Transformer Engine's THD layout), Llama 3's
// mask between documents of one sequence (Llama 3 paper, section 3.2). Only the attention core
// changes: every other operator sees the same tokens.
#include "packed_sequences.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

bool set_packing_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key != "doc-len") return false;
  plan.doc_len = parse_positive(key, value, fail);
  return true;
}

void add_packing_problems(const Plan& p, std::vector<Verdict>& out) {
  if (p.doc_len == 0) return;
  if (p.seq_len > 0 && p.doc_len > p.seq_len) {
    out.push_back({Rule::kDocLenAboveSeq, {{"doc_len", p.doc_len}, {"seq", p.seq_len}}});
  }
  // Transformer Engine takes packed (THD) sequences in its fused attention kernels alone.
  if (!p.flash_attention) out.push_back({Rule::kDocLenNeedsFlash, {{"doc_len", p.doc_len}}});
  if (p.cp > 1) out.push_back({Rule::kDocLenWithCp, {{"doc_len", p.doc_len}, {"cp", p.cp}}});
}

std::string describe_packing(const Verdict& v) {
  switch (v.rule) {
    case Rule::kDocLenAboveSeq:
      return fmt::format("doc-len={} exceeds seq={}: a packed document fits in its sequence", v.number("doc_len"),
                         v.number("seq"));
    case Rule::kDocLenNeedsFlash:
      return fmt::format(
          "doc-len={} needs flash attention: packed sequences run in the fused attention kernels (flash=on)",
          v.number("doc_len"));
    case Rule::kDocLenWithCp:
      return fmt::format(
          "doc-len={} with cp={} is not modelled: stepcast splits whole sequences over context-parallel ranks, "
          "not the documents of a pack",
          v.number("doc_len"), v.number("cp"));
    default:
      STEPCAST_UNREACHABLE("a rule of the packing setting");
  }
}

std::string packing_settings_text(const Plan& p) {
  return p.doc_len > 0 ? fmt::format(",doc-len={}", p.doc_len) : std::string();
}

}  // namespace stepcast::plan
