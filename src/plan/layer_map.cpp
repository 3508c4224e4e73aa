// The layer map of a plan, following Megatron-Core's get_num_layers_to_build
// (megatron/core/transformer/transformer_block.py) and PipelineParallelLayerLayout
// (megatron/core/transformer/pipeline_parallel_layer_layout.py).
#include "stepcast/plan/layer_map.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"

namespace stepcast::plan {
namespace {

/// Transformer layers of each stage, all its chunks, before the embedding and loss are placed.
std::vector<int> layers_per_stage(const Plan& plan, int layers) {
  std::vector<int> out(static_cast<std::size_t>(plan.pp), 0);
  if (plan.pp_embedding_loss_layers) {
    // The embedding and the loss take one layer's place each: (layers + 2) / pp per stage; the
    // chunks that hold them build one transformer layer fewer (placed by the caller).
    out.assign(out.size(), (layers + 2) / plan.pp);
    return out;
  }
  if (plan.pp_first_layers == 0 && plan.pp_last_layers == 0) {
    out.assign(out.size(), layers / plan.pp);
    return out;
  }
  // The stages without a given count share the rest evenly.
  const int first = plan.pp_first_layers;
  const int last = plan.pp_last_layers;
  const int middle_stages = plan.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int middle = middle_stages > 0 ? (layers - first - last) / middle_stages : 0;
  out.assign(out.size(), middle);
  if (first > 0) out.front() = first;
  if (last > 0) out.back() = last;
  return out;
}

}  // namespace

int LayerMap::stage_decoders(int stage) const {
  int n = 0;
  for (int c = 0; c < vp; ++c) n += at(stage, c).decoders;
  return n;
}

int LayerMap::first_decoder(int stage, int chunk) const {
  int n = 0;
  for (int c = 0; c <= chunk; ++c) {
    for (int s = 0; s < (c < chunk ? pp : stage); ++s) n += at(s, c).decoders;
  }
  return n;
}

LayerMap layer_map(const Plan& plan, int layers, int mtp_layers) {
  LayerMap map;
  map.pp = plan.pp;
  map.vp = plan.schedule == Schedule::kInterleaved ? plan.vp : 1;
  map.chunks.assign(static_cast<std::size_t>(map.pp) * static_cast<std::size_t>(map.vp), ChunkContent{});
  if (!plan.pp_layout.empty()) {
    // Virtual stage i of the layout is chunk i / pp of stage i % pp.
    std::string why;
    const auto stages = parse_pp_layout(plan.pp_layout, why);
    STEPCAST_ASSERT(stages && static_cast<int>(stages->size()) == map.pp * map.vp,
                    "a checked layout has pp * vp stages");
    for (int i = 0; i < map.pp * map.vp; ++i) {
      map.chunks[static_cast<std::size_t>(i % map.pp) * static_cast<std::size_t>(map.vp) +
                 static_cast<std::size_t>(i / map.pp)] = (*stages)[static_cast<std::size_t>(i)];
    }
    return map;
  }
  const std::vector<int> per_stage = layers_per_stage(plan, layers);
  for (int s = 0; s < map.pp; ++s) {
    for (int c = 0; c < map.vp; ++c) {
      map.at_mut(s, c).decoders = per_stage[static_cast<std::size_t>(s)] / map.vp;
    }
  }
  ChunkContent& first = map.chunks.front();
  ChunkContent& last = map.chunks.back();
  if (plan.pp_embedding_loss_layers) {
    first.decoders -= 1;
    last.decoders -= 1;
  }
  first.embedding = true;
  last.loss = true;
  // The MTP modules follow the last transformer layer, on the last stage (Megatron-Core builds
  // them where post_process is).
  last.mtp = mtp_layers;
  return map;
}

std::vector<LayerMapRow> layer_map_rows(const LayerMap& map) {
  const auto cell = [](const ChunkContent& c) {
    std::string text;
    if (c.embedding) text += "E+";
    text += fmt::format("{}", c.decoders);
    if (c.mtp > 0) text += fmt::format("+{}m", c.mtp);
    if (c.loss) text += "+L";
    return text;
  };
  std::vector<LayerMapRow> rows;
  int first = 0;
  for (int s = 0; s < map.pp; ++s) {
    std::string chunks;
    for (int c = 0; c < map.vp; ++c) chunks += fmt::format("{}{}", c > 0 ? " | " : "", cell(map.at(s, c)));
    if (!rows.empty() && rows.back().chunks == chunks) {
      rows.back().stages = fmt::format("stages {}-{}", first, s);
      continue;
    }
    first = s;
    rows.push_back({fmt::format("stage {}", s), chunks, map.stage_decoders(s)});
  }
  return rows;
}

}  // namespace stepcast::plan
