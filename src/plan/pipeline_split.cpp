// Uneven pipelines: how many transformer layers each stage holds when the layers do not divide
// the pipeline (Megatron-LM's --decoder-first/last-pipeline-num-layers, and the embedding and
// loss counted as layers as Llama 3 did), and the rules such a split must keep.
#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

std::vector<int> stage_layers(const Plan& plan, int layers) {
  std::vector<int> out(static_cast<std::size_t>(plan.pp), 0);
  if (plan.pp_embedding_loss_layers) {
    // The embedding and the loss take one layer's place each: (layers + 2) / pp per stage, the
    // first and last stage one transformer layer fewer (Megatron-LM transformer_config.py,
    // account_for_embedding/loss_in_pipeline_split; Llama 3 paper section 3.3.2).
    const int per = (layers + 2) / plan.pp;
    out.assign(out.size(), per);
    out.front() -= 1;
    out.back() -= 1;
    return out;
  }
  if (!plan.uneven_pipeline()) {
    out.assign(out.size(), layers / plan.pp);
    return out;
  }
  // The stages without a given count share the rest evenly (Megatron-LM's
  // get_num_layers_to_build with decoder_first/last_pipeline_num_layers).
  const int first = plan.pp_first_layers;
  const int last = plan.pp_last_layers;
  const int middle_stages = plan.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int middle = middle_stages > 0 ? (layers - first - last) / middle_stages : 0;
  out.assign(out.size(), middle);
  if (first > 0) out.front() = first;
  if (last > 0) out.back() = last;
  return out;
}

void pipeline_split_problems(const Plan& p, int layers, std::vector<Verdict>& out) {
  const bool counts = p.pp_first_layers > 0 || p.pp_last_layers > 0;
  if (counts && p.pp_embedding_loss_layers) {
    out.push_back({Rule::kUnevenSplitExclusive, {}});
    return;
  }
  if (p.pp < 2) {
    out.push_back({Rule::kUnevenSplitNeedsPp, {{"pp", p.pp}}});
    return;
  }
  if (p.vp > 1) {
    out.push_back({Rule::kUnevenSplitNeedsVp1, {{"vp", p.vp}}});
    return;
  }
  if (p.pp_embedding_loss_layers) {
    if ((layers + 2) % p.pp != 0 || (layers + 2) / p.pp < 2) {
      out.push_back({Rule::kEmbeddingLossSplit, {{"layers", layers}, {"pp", p.pp}}});
    }
    return;
  }
  const int given = (p.pp_first_layers > 0 ? 1 : 0) + (p.pp_last_layers > 0 ? 1 : 0);
  const int middle_stages = p.pp - given;
  const int rest = layers - p.pp_first_layers - p.pp_last_layers;
  if (middle_stages == 0) {
    if (rest != 0) {
      out.push_back({Rule::kUnevenSplitNoOtherStage,
                     {{"layers", layers},
                      {"first", p.pp_first_layers},
                      {"last", p.pp_last_layers},
                      {"rest", rest},
                      {"pp", p.pp}}});
    }
  } else if (rest < middle_stages || rest % middle_stages != 0) {
    out.push_back({Rule::kUnevenSplitRestDivides,
                   {{"layers", layers},
                    {"first", p.pp_first_layers},
                    {"last", p.pp_last_layers},
                    {"rest", rest},
                    {"stages", middle_stages}}});
  }
}

std::string describe_pipeline_split(const Verdict& v) {
  const auto n = [&v](std::string_view name) { return v.number(name); };
  const auto split = [&] {
    return fmt::format("layers ({}) - pp-first-layers ({}) - pp-last-layers ({}) = {}", n("layers"), n("first"),
                       n("last"), n("rest"));
  };
  switch (v.rule) {
    case Rule::kUnevenSplitExclusive:
      return "give pp-first-layers=/pp-last-layers= or pp-embedding-loss-layers=on, not both (Megatron-LM refuses the "
             "combination)";
    case Rule::kUnevenSplitNeedsPp:
      return fmt::format(
          "an uneven pipeline split (pp-first-layers=, pp-last-layers=, pp-embedding-loss-layers=) needs pp > 1 (got "
          "pp={})",
          n("pp"));
    case Rule::kUnevenSplitNeedsVp1:
      return fmt::format(
          "an uneven pipeline split needs vp=1 (got vp={}): stepcast splits interleaved chunks evenly only", n("vp"));
    case Rule::kEmbeddingLossSplit:
      return fmt::format(
          "with pp-embedding-loss-layers=on, layers + 2 (embedding and loss) = {} + 2 = {} must be divisible by pp "
          "({}) "
          "with at least 2 per stage",
          n("layers"), n("layers") + 2, n("pp"));
    case Rule::kUnevenSplitNoOtherStage:
      return fmt::format("{} must be 0: pp={} leaves no other stage to hold them", split(), n("pp"));
    case Rule::kUnevenSplitRestDivides:
      return fmt::format("{} must be divisible by the other {} stages, at least 1 layer each", split(), n("stages"));
    default:
      STEPCAST_UNREACHABLE("a rule of the pipeline split");
  }
}

}  // namespace stepcast::plan
