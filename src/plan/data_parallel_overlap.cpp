// Megatron-LM's --overlap-grad-reduce and --overlap-param-gather (distributed optimizer,
// megatron/core/distributed): the gradient buckets reduced while the backward still runs, and the
// updated parameters gathered bucket by bucket while the next forward runs. The rules are
// Megatron's own (megatron/training/arguments.py): the parameter gather needs a sharded
// optimizer and the overlapped gradient reduction.
#include "data_parallel_overlap.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

namespace {

bool parse_on_off(std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (value == "on") return true;
  if (value != "off") fail(fmt::format("{}= expects on or off, got \"{}\"", key, value));
  return false;
}

std::string_view on_off(bool on) { return on ? "on" : "off"; }

}  // namespace

bool set_overlap_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "overlap-grad-reduce") {
    plan.overlap_grad_reduce = parse_on_off(key, value, fail);
  } else if (key == "overlap-param-gather") {
    plan.overlap_param_gather = parse_on_off(key, value, fail);
  } else if (key == "fsdp-prefetch") {
    if (value == "backward-pre") {
      plan.fsdp_prefetch = FsdpPrefetch::kBackwardPre;
    } else if (value == "backward-post") {
      plan.fsdp_prefetch = FsdpPrefetch::kBackwardPost;
    } else {
      fail(fmt::format("fsdp-prefetch= expects backward-pre or backward-post, got \"{}\"", value));
    }
    plan.fsdp_prefetch_given = true;
  } else {
    return false;
  }
  return true;
}

void add_overlap_problems(const Plan& p, std::vector<Verdict>& out) {
  const int stage = p.zero_stage();
  if (p.overlap_grad_reduce) {
    const std::string given(on_off(*p.overlap_grad_reduce));
    if (p.dp > 0 && p.gradient_ranks() < 2) {
      out.push_back({Rule::kGradReduceNeedsDp, {{"setting", given}, {"dp", p.dp}, {"cp", p.cp}}});
    }
    if (stage == 3) {
      // FSDP and ZeRO-3 reduce-scatter each layer's gradients as its backward ends, as part of
      // their prefetching; there is no reduction after the backward to choose.
      out.push_back({Rule::kGradReduceWithLayerwise,
                     {{"setting", given}, {"sharding", std::string(p.is_fsdp() ? "FSDP" : "ZeRO-3")}}});
    }
    if (stage == 2 && !*p.overlap_grad_reduce && !p.is_fsdp()) out.push_back({Rule::kGradReduceOffWithZero2, {}});
  }
  if (p.overlap_param_gather) {
    const std::string given(on_off(*p.overlap_param_gather));
    const bool sharded_optimizer = (stage == 1 || stage == 2) && !p.is_fsdp();
    if (!sharded_optimizer) {
      out.push_back({Rule::kParamGatherNeedsShardedOptimizer, {{"setting", given}, {"stage", stage}}});
    } else if (*p.overlap_param_gather && p.overlap_grad_reduce && !*p.overlap_grad_reduce) {
      // Megatron asserts it: 'Must use --overlap-param-gather with --overlap-grad-reduce'.
      out.push_back({Rule::kParamGatherNeedsGradOverlap, {}});
    }
  }
  // Only FULL_SHARD and HYBRID_SHARD gather a unit again for its backward.
  if (p.fsdp_prefetch_given && !(p.is_fsdp() && stage == 3)) {
    out.push_back({Rule::kFsdpPrefetchNeedsRegather, {{"sharding", std::string(to_string(p.sharding))}}});
  }
}

std::string describe_overlap(const Verdict& v) {
  switch (v.rule) {
    case Rule::kGradReduceNeedsDp:
      return fmt::format(
          "overlap-grad-reduce={} needs data parallel: dp x cp > 1 ranks reducing gradients (got dp={}, cp={})",
          v.text("setting"), v.number("dp"), v.number("cp"));
    case Rule::kGradReduceWithLayerwise:
      return fmt::format(
          "overlap-grad-reduce={} chooses when DDP's or ZeRO-1/2's gradient buckets are reduced; {} reduces each "
          "layer's gradients as its backward ends",
          v.text("setting"), v.text("sharding"));
    case Rule::kGradReduceOffWithZero2:
      return "overlap-grad-reduce=off with zero=2: ZeRO-2 frees each micro-batch's gradients by reducing them as the "
             "backward produces them; use zero=1 (Megatron's distributed optimizer) to reduce once after the backward";
    case Rule::kParamGatherNeedsShardedOptimizer:
      return fmt::format(
          "overlap-param-gather={} needs a sharded optimizer whose updated parameters are gathered after the step: "
          "zero=1 or zero=2 (Megatron's distributed optimizer); {} has none to gather",
          v.text("setting"),
          v.number("stage") == 0 ? "a replicated optimizer" : "FSDP/ZeRO-3, which gathers every layer anyway,");
    case Rule::kParamGatherNeedsGradOverlap:
      return "overlap-param-gather=on needs the gradient reduction overlapped too (overlap-grad-reduce=on), as "
             "Megatron-LM requires";
    case Rule::kFsdpPrefetchNeedsRegather:
      return fmt::format(
          "fsdp-prefetch= chooses when PyTorch FSDP gathers a unit again for its backward: fsdp=full or fsdp=hybrid "
          "(got {}, which gathers none)",
          v.text("sharding"));
    default:
      STEPCAST_UNREACHABLE("a rule of the data-parallel overlap settings");
  }
}

std::string overlap_settings_text(const Plan& p) {
  std::string text;
  if (p.overlap_grad_reduce) text += fmt::format(",overlap-grad-reduce={}", on_off(*p.overlap_grad_reduce));
  if (p.overlap_param_gather) text += fmt::format(",overlap-param-gather={}", on_off(*p.overlap_param_gather));
  if (p.fsdp_prefetch_given) {
    text +=
        p.fsdp_prefetch == FsdpPrefetch::kBackwardPost ? ",fsdp-prefetch=backward-post" : ",fsdp-prefetch=backward-pre";
  }
  return text;
}

}  // namespace stepcast::plan
