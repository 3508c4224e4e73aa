// loss= names the cross-entropy kernels (cost::head_operators prices each); train-metrics= counts
// the metrics a trainer evaluates on every micro-batch's logits (Composer's Trainer runs
// _eval_train_metrics after each micro-batch's backward, reusing its outputs).
#include "loss_settings.hpp"

#include <fmt/format.h>

#include <charconv>
#include <system_error>

#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

namespace {

/// Far more than a trainer evaluates per micro-batch (llm-foundry's MPT lists 2); a larger count is
/// a typo rather than a plan.
constexpr int kMaxTrainMetrics = 16;

std::string_view loss_name(LossKernel loss) {
  switch (loss) {
    case LossKernel::kMegatron:
      return "megatron";
    case LossKernel::kFused:
      return "fused";
    case LossKernel::kEager:
      return "eager";
  }
  STEPCAST_UNREACHABLE("unknown loss kernel");
}

}  // namespace

bool set_loss_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "loss") {
    bool known = false;
    for (const LossKernel loss : {LossKernel::kMegatron, LossKernel::kFused, LossKernel::kEager}) {
      if (value == loss_name(loss)) {
        plan.loss = loss;
        known = true;
      }
    }
    if (!known) fail(fmt::format("loss= expects megatron, fused or eager, got \"{}\"", value));
    plan.loss_given = true;
  } else if (key == "train-metrics") {
    int count = -1;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
    if (error != std::errc() || end != value.data() + value.size() || count < 0 || count > kMaxTrainMetrics) {
      fail(fmt::format("train-metrics= expects a whole number of metrics a micro-batch from 0 to {}, got \"{}\"",
                       kMaxTrainMetrics, value));
    }
    plan.train_metrics = count;
  } else {
    return false;
  }
  return true;
}

std::string loss_settings_text(const Plan& p) {
  std::string text;
  if (p.loss_given) text += fmt::format(",loss={}", loss_name(p.loss));
  if (p.train_metrics > 0) text += fmt::format(",train-metrics={}", p.train_metrics);
  return text;
}

}  // namespace stepcast::plan
