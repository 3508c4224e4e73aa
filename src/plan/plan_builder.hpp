// Private: applies "key=value" settings to a Plan, shared by the compact text form and JSON so
// that both accept the same keys, values and combinations.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Reports a problem with one key (the caller adds file and pointer) and does not return.
using KeyFailure = std::function<void(const std::string& message)>;

/// `value` as a whole number >= 1; anything else calls `fail` with the key.
int parse_positive(std::string_view key, std::string_view value, const KeyFailure& fail);

class PlanBuilder {
 public:
  /// The keys a plan accepts, for error messages and JSON's check_keys.
  static const std::vector<std::string_view>& keys();

  /// Applies one setting; an unknown key, a bad value or a repeated key calls `fail`.
  void set(std::string_view key, std::string_view value, const KeyFailure& fail);
  /// Checks combinations of keys (zero= with fsdp=, dp= against fsdp=N) and returns the plan.
  [[nodiscard]] Plan finish(const KeyFailure& fail) const;

 private:
  /// recompute-modules=core_attn+mlp: Megatron-Core's names, each once.
  void set_recompute_modules(std::string_view value, const KeyFailure& fail);
  /// zero= and fsdp= (whose degrees finish() checks); false for any other key.
  bool set_sharding_key(std::string_view key, std::string_view value, const KeyFailure& fail);

  Plan plan_;
  std::vector<std::string> seen_;
  int fsdp_degree_ = 0;  // from fsdp=N or hybrid:AxB
  bool zero_given_ = false;
  bool fsdp_given_ = false;
};

}  // namespace stepcast::plan
