// Expert parallelism as Megatron-core lays it out (Megatron-LM's MoE guide, "parallel folding"):
// within a pipeline stage the GPUs that run the dense layers as tp x dp run the experts as
// etp x ep x edp, so both products must be equal; each MoE layer's routed experts are spread
// over the ep ranks of an expert group.
#include "expert_parallel.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace stepcast::plan {

namespace {

int parse_degree(std::string_view key, std::string_view value, const KeyFailure& fail) {
  int out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < 1 || out > (1 << 20)) {
    fail(fmt::format("{}= expects a whole number from 1 to 2^20, got \"{}\"", key, value));
  }
  return out;
}

double parse_ratio(std::string_view key, std::string_view value, double lowest, const KeyFailure& fail,
                   std::string_view meaning) {
  double out = 0.0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(out) || out < lowest || out > 1e6) {
    fail(fmt::format("{}= expects a number >= {} ({}), got \"{}\"", key, lowest, meaning, value));
  }
  return out;
}

}  // namespace

bool Plan::has_expert_settings() const {
  return ep > 1 || etp > 0 || moe_dispatcher != MoeDispatcher::kAllToAll || capacity_factor || moe_imbalance != 1.0 ||
         moe_overlap;
}

std::string_view to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return "alltoall";
    case MoeDispatcher::kAllGather:
      return "allgather";
  }
  return "alltoall";
}

bool set_expert_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "ep") {
    plan.ep = parse_degree(key, value, fail);
  } else if (key == "etp") {
    plan.etp = parse_degree(key, value, fail);
  } else if (key == "moe-dispatcher") {
    if (value == "alltoall") {
      plan.moe_dispatcher = MoeDispatcher::kAllToAll;
    } else if (value == "allgather") {
      plan.moe_dispatcher = MoeDispatcher::kAllGather;
    } else {
      fail(fmt::format("moe-dispatcher= expects alltoall or allgather, got \"{}\"", value));
    }
  } else if (key == "capacity-factor") {
    // Switch Transformer (Fedus et al. 2022, section 2.2) and Megatron-core: an expert takes at
    // most tokens x top-k / experts x capacity factor; "dropless" (Gale et al. 2023, MegaBlocks)
    // drops nothing.
    if (value != "dropless") {
      plan.capacity_factor =
          parse_ratio(key, value, 0.01, fail,
                      "an expert's most tokens over its balanced share tokens x top-k / experts; or dropless");
    }
  } else if (key == "moe-imbalance") {
    plan.moe_imbalance =
        parse_ratio(key, value, 1.0, fail, "the busiest expert-parallel rank's tokens over the mean; 1 = balanced");
  } else if (key == "moe-overlap") {
    if (value == "on") {
      plan.moe_overlap = true;
    } else if (value == "off") {
      plan.moe_overlap = false;
    } else {
      fail(fmt::format("moe-overlap= expects on or off, got \"{}\"", value));
    }
  } else {
    return false;
  }
  return true;
}

void add_expert_problems(const Plan& p, const workload::Workload& workload, std::vector<std::string>& out) {
  const bool moe = workload.shape && workload.shape->moe;
  if (!moe) {
    if (p.has_expert_settings()) {
      out.push_back(fmt::format("expert settings (ep={}{}) need a workload with routed experts; {} has none", p.ep,
                                p.etp > 0 ? fmt::format(", etp={}", p.etp) : std::string(), workload.name));
    }
    return;
  }
  const workload::MoeShape& m = *workload.shape->moe;
  const int etp = p.expert_tp();
  if (p.sharding == Sharding::kFsdpHybrid) {
    // Dense state would shard over the shard group and the experts' over a share of edp that the
    // frameworks lay out their own ways (TorchTitan's dp_shard_mod_ep mesh); stepcast prices
    // experts sharded over the whole expert data-parallel group only.
    out.push_back(fmt::format(
        "{} with routed experts is not modelled: shard an MoE model over all of dp (fsdp=full, fsdp=grad-op or "
        "zero=3), whose experts shard over the expert data-parallel group",
        to_string(p.sharding)));
  }
  if ((p.zero_stage() == 3 || p.sharding == Sharding::kFsdpGradOp) && p.dp == 1) {
    // With one data-parallel rank the dense layers have nothing to shard over, yet the experts
    // would shard over edp = tp / (etp x ep): no framework runs that layout.
    out.push_back(fmt::format("{} with routed experts needs dp > 1: the dense layers shard over dp (got dp=1)",
                              to_string(p.sharding)));
  }
  if (m.experts % p.ep != 0) {
    out.push_back(fmt::format("routed experts ({}) must be divisible by ep ({})", m.experts, p.ep));
  }
  if (p.etp > 0 && p.etp != p.tp && p.ep == 1) {
    out.push_back(fmt::format(
        "etp={} without expert parallel (ep=1): etp splits the experts of an expert-parallel group; give ep > 1, "
        "or leave etp out to split experts as tp={} does",
        p.etp, p.tp));
  }
  if (m.expert_ffn % etp != 0) {
    out.push_back(fmt::format("expert ffn size ({}) must be divisible by etp ({})", m.expert_ffn, etp));
  }
  if (p.dp > 0) {
    // Megatron-core's parallel folding: per stage, tp x cp x dp (dense) = etp x ep x edp (experts).
    const long dense = static_cast<long>(p.tp) * p.dp;
    const long expert = static_cast<long>(etp) * p.ep;
    if (dense % expert != 0) {
      out.push_back(fmt::format(
          "expert and dense layers must fold the same GPUs of a stage: dense tp x cp x dp = {} x 1 x {} = {} must be "
          "divisible by etp x ep = {} x {} = {} (Megatron-core's parallel folding)",
          p.tp, p.dp, dense, etp, p.ep, expert));
    }
  }
  if (p.tp > 1 && p.ep > 1 && !p.sequence_parallel) {
    // Megatron-LM (arguments.py) asserts sequence parallel when tensor and expert parallel meet.
    out.push_back(fmt::format("tp={} with ep={} needs sequence parallel (sp=on), as Megatron-LM requires", p.tp, p.ep));
  }
  if (p.moe_imbalance > p.ep) {
    out.push_back(fmt::format("moe-imbalance ({}) cannot exceed ep ({}): the busiest rank gets at most every token",
                              p.moe_imbalance, p.ep));
  }
  if (p.moe_overlap && (p.ep < 2 || p.moe_dispatcher != MoeDispatcher::kAllToAll)) {
    out.push_back(fmt::format(
        "moe-overlap=on overlaps the dispatch and combine all-to-alls: it needs ep > 1 and moe-dispatcher=alltoall "
        "(got ep={}, moe-dispatcher={})",
        p.ep, to_string(p.moe_dispatcher)));
  }
}

std::string expert_settings_text(const Plan& p) {
  if (!p.has_expert_settings()) return {};
  std::string text =
      fmt::format(",ep={},etp={},moe-dispatcher={},capacity-factor={},moe-imbalance={:.4g}", p.ep, p.expert_tp(),
                  to_string(p.moe_dispatcher),
                  p.capacity_factor ? fmt::format("{:.4g}", *p.capacity_factor) : "dropless", p.moe_imbalance);
  if (p.moe_overlap) text += ",moe-overlap=on";
  return text;
}

}  // namespace stepcast::plan
