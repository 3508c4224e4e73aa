// Private: reading a Hugging Face config.json as the architecture its model_type names, with
// its configuration class's defaults for the keys it leaves out.
#pragma once

#include <filesystem>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload {

/// The workload of a Hugging Face config.json (`r` is its root object). A model_type stepcast
/// does not read (an encoder, an encoder-decoder, a state-space model, an unknown family) is
/// refused naming it; bad values throw InputError with the file and the JSON pointer.
Workload read_hf_config(const JsonReader& r, const std::filesystem::path& file);

/// GPT's MLP width, 4h (Radford et al. 2019; Brown et al. 2020), the default where a file gives
/// none; held to an int where h is beyond its limit, which check_shape then reports.
int gpt_mlp_width(int hidden);

/// Rules every shape keeps whatever its file format (workload_json.cpp); a breach fails at `where`.
void check_shape(const TransformerShape& s, const JsonReader& where);

}  // namespace stepcast::workload
