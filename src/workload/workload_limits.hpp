// The largest counts stepcast takes in a model's shape: far beyond every published model, so only a
// typo or a unit slip meets them, and small enough that no count, product of counts or loop over
// layers overflows or runs away.
#pragma once

#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload::detail {

/// Refuses the first count of `shape` outside its range, naming its key (the first of its
/// spellings, stepcast's or Hugging Face's, that `where` or its "moe"/"mla" block holds) and the
/// limit. Runs before any arithmetic on the shape.
void check_shape_limits(const TransformerShape& shape, const JsonReader& where);

/// The largest bare parameter count a workload may give.
inline constexpr double kMaxParameters = 1e16;

}  // namespace stepcast::workload::detail
