// Private: the sentences of each parallel dimension's rules, kept beside the rules themselves
// (pipeline_split.cpp, context_parallel.cpp, expert_parallel.cpp, data_parallel_overlap.cpp,
// peft.cpp, muon.cpp, packed_sequences.cpp, activation_offload.cpp, bf16_layers.cpp).
#pragma once

#include <string>

#include "stepcast/plan/verdict.hpp"

namespace stepcast::plan {

std::string describe_pipeline_split(const Verdict& verdict);
std::string describe_context_parallel(const Verdict& verdict);
std::string describe_expert(const Verdict& verdict);
std::string describe_overlap(const Verdict& verdict);
std::string describe_peft(const Verdict& verdict);
std::string describe_muon(const Verdict& verdict);
std::string describe_packing(const Verdict& verdict);
std::string describe_offload(const Verdict& verdict);
std::string describe_bf16_layers(const Verdict& verdict);

}  // namespace stepcast::plan
