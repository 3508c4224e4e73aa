// Private: settings that name a set of things by '+'-joined names, a bit each (recompute-modules=,
// lora-targets=): reading the list and writing it back.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "plan_builder.hpp"

namespace stepcast::plan {

/// A name and its bit.
using NameBit = std::pair<unsigned, std::string_view>;

/// Megatron-Core's recompute module names and their plan::RecomputeModule bits (plan.cpp).
std::span<const NameBit> recompute_module_names();

/// The bit `names` gives `name`, if any.
std::optional<unsigned> name_bit(std::span<const NameBit> names, std::string_view name);

/// "a+b" of the bits set, in the order of `names`.
std::string name_bits_text(std::span<const NameBit> names, unsigned bits);

/// The bits a '+'-joined list names: `fail` gets `unknown(name)` for a name `names` lacks, and
/// "KEY= names NAME twice" for a repeated one.
unsigned parse_name_bits(std::span<const NameBit> names, std::string_view key, std::string_view value,
                         const std::function<std::string(std::string_view)>& unknown, const KeyFailure& fail);

}  // namespace stepcast::plan
