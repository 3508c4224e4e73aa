// Private: the fields of a Hugging Face config.json beyond a dense Llama's: head_dim, sliding
// windows, routed experts (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, GPT-OSS), latent attention and
// multi-token prediction. An MoE or attention field stepcast does not model is refused by name.
#pragma once

#include <string_view>

#include "hf_families.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload {

/// Fills the shape's head dim, sliding-window layers, MoE, MLA and MTP fields from `merged` (the
/// config with its class's defaults) by `family`'s rules; `given` is the config as written, whose
/// MoE or attention fields stepcast does not understand are refused by name.
void read_hf_extensions(const JsonReader& merged, const JsonReader& given, const HfFamily& family, TransformerShape& s);

}  // namespace stepcast::workload
