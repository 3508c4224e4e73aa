// Pipeline splits: how many transformer layers each stage holds (layer_map.cpp builds the map)
// and the rules a split must keep, Megatron-Core's: an even split, first/last stage counts
// (--decoder-first/last-pipeline-num-layers), the embedding and loss counted as layers (as Llama 3
// did), or a layout written out (--pipeline-model-parallel-layout); with vp chunks, each stage's
// layers divide into vp equal chunks (transformer_block.py, get_num_layers_to_build).
#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/plan/layer_map.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

std::vector<int> stage_layers(const Plan& plan, int layers) {
  const LayerMap map = layer_map(plan, layers, 0);
  std::vector<int> out;
  for (int s = 0; s < map.pp; ++s) out.push_back(map.stage_decoders(s));
  return out;
}

namespace {

void layout_problems(const Plan& p, int layers, int mtp_layers, std::vector<Verdict>& out) {
  std::string why;
  const auto stages = parse_pp_layout(p.pp_layout, why);
  STEPCAST_ASSERT(stages.has_value(), "pp-layout= is read when the plan is parsed");
  const int vp = p.schedule == Schedule::kInterleaved ? p.vp : 1;
  const auto count = static_cast<std::int64_t>(stages->size());
  if (count != std::int64_t{p.pp} * vp) {
    out.push_back({Rule::kPpLayoutStages, {{"stages", count}, {"pp", p.pp}, {"vp", vp}}});
    return;
  }
  int decoders = 0;
  int mtp = 0;
  for (const ChunkContent& c : *stages) {
    decoders += c.decoders;
    mtp += c.mtp;
  }
  if (decoders != layers) out.push_back({Rule::kPpLayoutDecoders, {{"decoders", decoders}, {"layers", layers}}});
  // A pipeline rank whose chunks hold nothing at all runs no part of the model.
  for (int stage = 0; stage < p.pp; ++stage) {
    bool holds = false;
    for (int c = 0; c < vp; ++c) {
      const ChunkContent& chunk =
          (*stages)[static_cast<std::size_t>(c) * static_cast<std::size_t>(p.pp) + static_cast<std::size_t>(stage)];
      holds = holds || chunk.decoders > 0 || chunk.mtp > 0 || chunk.embedding || chunk.loss;
    }
    if (!holds) {
      out.push_back({Rule::kPpLayoutEmptyStage, {{"stage", stage}}});
      break;
    }
  }
  if (!stages->front().embedding || !stages->back().loss) out.push_back({Rule::kPpLayoutEnds, {}});
  if (mtp != mtp_layers) {
    out.push_back({Rule::kPpLayoutMtp, {{"mtp", mtp}, {"mtp_layers", mtp_layers}}});
  } else if (mtp > 0 && stages->back().mtp != mtp) {
    out.push_back({Rule::kPpLayoutMtpPlace, {{"mtp", mtp}}});
  }
}

// Megatron-Core divides each stage's layers into vp equal chunks.
void chunks_divide(const Plan& p, int stage_layers, std::string_view which, std::vector<Verdict>& out) {
  if (p.vp > 1 && stage_layers % p.vp != 0) {
    out.push_back(
        {Rule::kStageLayersDivideVp, {{"stage", std::string(which)}, {"layers", stage_layers}, {"vp", p.vp}}});
  }
}

void uneven_problems(const Plan& p, int layers, std::vector<Verdict>& out) {
  if (p.pp < 2) {
    out.push_back({Rule::kUnevenSplitNeedsPp, {{"pp", p.pp}}});
    return;
  }
  if (p.pp_embedding_loss_layers) {
    if ((layers + 2) % p.pp != 0) {
      out.push_back({Rule::kEmbeddingLossSplit, {{"layers", layers}, {"pp", p.pp}}});
    } else {
      chunks_divide(p, (layers + 2) / p.pp, "each stage (with the embedding or loss)", out);
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
      return;
    }
  } else if (rest < middle_stages || rest % middle_stages != 0) {
    out.push_back({Rule::kUnevenSplitRestDivides,
                   {{"layers", layers},
                    {"first", p.pp_first_layers},
                    {"last", p.pp_last_layers},
                    {"rest", rest},
                    {"stages", middle_stages}}});
    return;
  }
  if (p.pp_first_layers > 0) chunks_divide(p, p.pp_first_layers, "the first stage", out);
  if (p.pp_last_layers > 0) chunks_divide(p, p.pp_last_layers, "the last stage", out);
  if (middle_stages > 0) chunks_divide(p, rest / middle_stages, "each middle stage", out);
}

}  // namespace

void pipeline_split_problems(const Plan& p, int layers, int mtp_layers, std::vector<Verdict>& out) {
  const int counts = (p.pp_first_layers > 0 || p.pp_last_layers > 0 ? 1 : 0) + (p.pp_embedding_loss_layers ? 1 : 0) +
                     (p.pp_layout.empty() ? 0 : 1);
  if (counts > 1) {
    out.push_back({Rule::kUnevenSplitExclusive, {}});
    return;
  }
  if (!p.pp_layout.empty()) {
    layout_problems(p, layers, mtp_layers, out);
  } else if (p.uneven_pipeline()) {
    uneven_problems(p, layers, out);
  } else if (layers % (p.pp * p.vp) != 0) {
    out.push_back({Rule::kPpVpDivideLayers, {{"layers", layers}, {"pp", p.pp}, {"vp", p.vp}, {"stages", p.pp * p.vp}}});
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
      return "give one of pp-first-layers=/pp-last-layers=, pp-embedding-loss-layers=on and pp-layout= (Megatron-Core "
             "refuses the combinations)";
    case Rule::kUnevenSplitNeedsPp:
      return fmt::format(
          "an uneven pipeline split (pp-first-layers=, pp-last-layers=, pp-embedding-loss-layers=) needs pp > 1 (got "
          "pp={})",
          n("pp"));
    case Rule::kStageLayersDivideVp:
      return fmt::format(
          "the layers of {} ({}) must be divisible by vp ({}): Megatron-Core builds vp equal model chunks per stage",
          v.text("stage"), n("layers"), n("vp"));
    case Rule::kEmbeddingLossSplit:
      return fmt::format(
          "with pp-embedding-loss-layers=on, layers + 2 (embedding and loss) = {} + 2 = {} must be divisible by pp "
          "({})",
          n("layers"), n("layers") + 2, n("pp"));
    case Rule::kPpLayoutStages:
      return fmt::format("pp-layout= names {} virtual stages; it must name pp x vp = {} x {} = {} (split by '|')",
                         n("stages"), n("pp"), n("vp"), n("pp") * n("vp"));
    case Rule::kPpLayoutDecoders:
      return fmt::format("pp-layout= places {} transformer layers (t); the model has {}", n("decoders"), n("layers"));
    case Rule::kPpLayoutEmptyStage:
      return fmt::format("pp-layout= leaves pipeline stage {} without a layer in any of its chunks", n("stage"));
    case Rule::kPpLayoutEnds:
      return "pp-layout= must begin with the embedding (E) and end with the loss (L) (Megatron-Core's "
             "validate_layer_layout)";
    case Rule::kPpLayoutMtp:
      return fmt::format("pp-layout= places {} MTP modules (m); the model has {}", n("mtp"), n("mtp_layers"));
    case Rule::kPpLayoutMtpPlace:
      return fmt::format(
          "pp-layout= must place the {} MTP module(s) (m) in its last virtual stage, beside the loss: stepcast runs "
          "them on the last stage",
          n("mtp"));
    case Rule::kUnevenSplitNoOtherStage:
      return fmt::format("{} must be 0: pp={} leaves no other stage to hold them", split(), n("pp"));
    case Rule::kUnevenSplitRestDivides:
      return fmt::format("{} must be divisible by the other {} stages, at least 1 layer each", split(), n("stages"));
    default:
      STEPCAST_UNREACHABLE("a rule of the pipeline split");
  }
}

}  // namespace stepcast::plan
