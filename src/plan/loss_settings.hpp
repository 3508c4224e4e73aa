// Private: the loss kernels and per-micro-batch training metrics a framework runs on the logits
// (loss=, train-metrics=): parsing them and their compact form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_builder.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Applies `key` when it is a loss setting and returns true; false for any other key.
bool set_loss_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail);

/// ",loss=eager,train-metrics=2" for the settings given; "" otherwise.
std::string loss_settings_text(const Plan& plan);

}  // namespace stepcast::plan
