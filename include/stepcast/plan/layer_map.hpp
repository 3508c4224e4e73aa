// Which layers each pipeline stage and model chunk builds, as Megatron-Core builds them: an even
// split, first/last stage counts, the embedding and the loss counted as layers, or a layout
// written out (pp-layout=, Megatron-Core's --pipeline-model-parallel-layout).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// What one model chunk (a virtual pipeline stage) of one pipeline rank builds.
struct ChunkContent {
  int decoders = 0;        ///< transformer layers
  int mtp = 0;             ///< multi-token-prediction modules
  bool embedding = false;  ///< the input embedding (the model's first chunk)
  bool loss = false;       ///< the output layer and loss (the model's last chunk)
  friend bool operator==(const ChunkContent&, const ChunkContent&) = default;
};

/// The model's layers by pipeline rank and model chunk. Model order runs chunk 0 of every stage,
/// then chunk 1 of every stage, and so on (Megatron-Core's interleaved placement: with 8 layers,
/// pp=2 and vp=2, stage 0 holds [0, 1] and [4, 5]).
struct LayerMap {
  int pp = 1;
  int vp = 1;
  std::vector<ChunkContent> chunks;  ///< stage-major: chunks[stage * vp + chunk]

  [[nodiscard]] const ChunkContent& at(int stage, int chunk) const {
    return chunks[static_cast<std::size_t>(stage) * static_cast<std::size_t>(vp) + static_cast<std::size_t>(chunk)];
  }
  [[nodiscard]] ChunkContent& at_mut(int stage, int chunk) {
    return chunks[static_cast<std::size_t>(stage) * static_cast<std::size_t>(vp) + static_cast<std::size_t>(chunk)];
  }
  /// Transformer layers of one stage, all its chunks.
  [[nodiscard]] int stage_decoders(int stage) const;
  /// Index of the chunk's first transformer layer in the model (layers of the chunks before it
  /// in model order).
  [[nodiscard]] int first_decoder(int stage, int chunk) const;
};

/// The map of a valid plan (no pipeline_split_problems) of a model of `layers` transformer layers
/// and `mtp_layers` MTP modules; vp is the plan's under schedule=interleaved, else 1.
LayerMap layer_map(const Plan& plan, int layers, int mtp_layers);

/// A layout string (Megatron-Core's PipelineParallelLayerLayout syntax: E embedding, t transformer
/// layer, m MTP module, L loss, | between virtual stages, X*n and (...)*n repeats, commas ignored
/// as Megatron-Core ignores them, though a compact plan cannot hold one) as its virtual stages in
/// model order; none, with `why` set, when the text is not one.
std::optional<std::vector<ChunkContent>> parse_pp_layout(std::string_view text, std::string& why);

/// One row of the map as --explain prints it: consecutive stages that hold alike share a row
/// (as Megatron-Core's pretty_repr prints the layout).
struct LayerMapRow {
  std::string stages;  ///< "stage 0", "stages 1-6"
  std::string chunks;  ///< each chunk's content, "E+1 | 2": E embedding, m MTP modules, L loss
  int layers = 0;      ///< transformer layers of each of these stages
};
std::vector<LayerMapRow> layer_map_rows(const LayerMap& map);

}  // namespace stepcast::plan
