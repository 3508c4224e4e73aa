// Private: the fields of a Hugging Face config.json beyond a dense Llama's: head_dim, sliding
// windows, routed experts (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, GPT-OSS), latent attention and
// multi-token prediction. An MoE or attention field stepcast does not model is refused by name.
#pragma once

#include <string_view>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload {

/// Fills the shape's head dim, sliding-window layers, MoE, MLA and MTP fields from the config of
/// `model_type`; InputError names any MoE or attention field it does not understand.
void read_hf_extensions(const JsonReader& r, std::string_view model_type, TransformerShape& s);

}  // namespace stepcast::workload
