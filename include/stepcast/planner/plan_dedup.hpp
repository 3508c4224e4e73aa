// One row per distinct plan: spellings of the same training setup (zero=3 and fsdp=full; sp=on
// without tensor parallel; a schedule without a pipeline) that the model prices identically.
#pragma once

#include <string>

#include "stepcast/planner/search.hpp"

namespace stepcast::planner {

/// The plan's compact form after mapping every spelling the cost model cannot tell apart to one:
/// fsdp=full -> zero=3 (both shard parameters, gradients and optimizer state over the data-parallel
/// ranks and gather one block at a time: memory.cpp and step_communication.cpp branch on the ZeRO
/// stage, not the name); sp=off when tp=1 (nothing to split); 1F1B and vp=1 when pp=1 (no pipeline
/// to schedule); cp-comm=p2p when cp=1; the default rank order (an order that moves no group
/// onto other links prices the same). zero=2 and fsdp=grad-op stay apart: DeepSpeed's buckets and
/// FSDP's per-block gradient differ in memory.
std::string equivalence_key(const plan::Plan& plan);

/// Merges the ranked plans that share an equivalence key AND whose step time, memory, tokens/s and
/// MFU are identical (so a merge never hides a difference the model sees): the first in the
/// ranking stays, the others go to its `equivalents`. Keeps the order.
void merge_equivalent_plans(SearchResult& result);

}  // namespace stepcast::planner
