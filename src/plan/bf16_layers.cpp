// Megatron-Core's first_last_layers_bf16 (TransformerConfig num_layers_at_start_in_bf16 and
// num_layers_at_end_in_bf16): the layers it keeps out of the fp8/fp4 autocast, and the rules that
// go with them (megatron/core/fp8_utils.py, get_fp8_context and is_first_last_bf16_layer).
#include "bf16_layers.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

void add_bf16_layer_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.mtp_bf16 && (!workload.shape || workload.shape->mtp_layers == 0)) {
    out.push_back({Rule::kMtpBf16NeedsMtp, {{"workload", workload.name}}});
  }
  const int kept = p.bf16_first_layers + p.bf16_last_layers;
  if (kept == 0 && !p.mtp_bf16) return;
  // Only a quantized autocast has layers to keep out of it.
  if (p.precision != Precision::kFp8 && p.precision != Precision::kMxfp8 && p.precision != Precision::kNvfp4) {
    out.push_back({Rule::kBf16LayersNeedLowPrecision, {{"precision", std::string(to_string(p.precision))}}});
  }
  if (kept == 0) return;
  const int layers = workload.shape ? workload.shape->layers : 0;
  if (kept >= layers) {
    out.push_back({Rule::kBf16LayersBelowLayers,
                   {{"first", p.bf16_first_layers}, {"last", p.bf16_last_layers}, {"layers", layers}}});
  }
  // get_fp8_context: "Delayed scaling does not support first / last layer in BF16."
  if (p.precision == Precision::kFp8 && p.fp8_recipe == Fp8Recipe::kDelayed) {
    out.push_back({Rule::kBf16LayersNotDelayed, {}});
  }
}

std::string describe_bf16_layers(const Verdict& v) {
  switch (v.rule) {
    case Rule::kBf16LayersNeedLowPrecision:
      return fmt::format(
          "bf16-first-layers=, bf16-last-layers= and mtp-bf16= need precision=fp8, mxfp8 or nvfp4 (got "
          "precision={}): they keep layers out of the quantized GEMMs, and a {} plan has none",
          v.text("precision"), v.text("precision"));
    case Rule::kMtpBf16NeedsMtp:
      return fmt::format(
          "mtp-bf16=on keeps the MTP modules in bf16, and {} has none (its workload gives no \"mtp_layers\")",
          v.text("workload"));
    case Rule::kBf16LayersBelowLayers:
      return fmt::format(
          "bf16-first-layers ({}) + bf16-last-layers ({}) must be fewer than the model's transformer layers ({}): "
          "otherwise no layer runs in the plan's precision",
          v.number("first"), v.number("last"), v.number("layers"));
    case Rule::kBf16LayersNotDelayed:
      return "bf16-first-layers= and bf16-last-layers= need fp8-recipe=current with precision=fp8: Megatron-Core "
             "refuses them with delayed scaling (\"Delayed scaling does not support first / last layer in BF16\")";
    default:
      STEPCAST_UNREACHABLE("a bf16 layers rule");
  }
}

}  // namespace stepcast::plan
