// The short form of a searched plan: the compact form `--plan` reads, with only the fields the
// search varies, so a row of a report can be pasted into `stepcast predict --plan`.
#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/plan_reports.hpp"

namespace stepcast::report {
namespace {

std::string sharding_text(const plan::Plan& p) {
  switch (p.sharding) {
    case plan::Sharding::kDdp:
      return "zero=0";
    case plan::Sharding::kZero1:
      return "zero=1";
    case plan::Sharding::kZero2:
      return "zero=2";
    case plan::Sharding::kZero3:
      return "zero=3";
    case plan::Sharding::kFsdpFull:
      return "fsdp=full";
    case plan::Sharding::kFsdpGradOp:
      return "fsdp=grad-op";
    case plan::Sharding::kFsdpHybrid:
      return fmt::format("fsdp=hybrid:{}x{}", p.shard_group, p.dp / std::max(1, p.shard_group));
    case plan::Sharding::kFsdpNone:
      return "fsdp=none";
  }
  STEPCAST_UNREACHABLE("unknown sharding");
}

}  // namespace

std::string plan_summary(const plan::Plan& p) {
  std::string out = fmt::format("dp={},tp={},pp={}", p.dp, p.tp, p.pp);
  if (p.vp > 1) out += fmt::format(",vp={}", p.vp);
  out += "," + sharding_text(p);
  out += fmt::format(",mbs={},recompute={}", p.micro_batch_size, plan::to_string(p.recompute));
  if (p.recompute_modules_given) out += ",recompute-modules=" + plan::recompute_modules_text(p.recompute_modules);
  if (p.pp > 1) out += fmt::format(",schedule={}", plan::to_string(p.schedule));
  if (p.sequence_parallel) out += ",sp=on";
  if (p.tp_overlap) out += ",tp-overlap=on";
  if (p.cp > 1) out += fmt::format(",cp={},cp-comm={}", p.cp, plan::to_string(p.cp_comm));
  if (p.pp_embedding_loss_layers) out += ",pp-embedding-loss-layers=on";
  if (p.pp_first_layers > 0) out += fmt::format(",pp-first-layers={}", p.pp_first_layers);
  if (p.pp_last_layers > 0) out += fmt::format(",pp-last-layers={}", p.pp_last_layers);
  if (!p.pp_layout.empty()) out += fmt::format(",pp-layout={}", p.pp_layout);
  // Expert parallel layouts (MoE plans), in the compact form's keys.
  if (p.ep > 1) out += fmt::format(",ep={}", p.ep);
  if (p.etp > 0 && p.etp != p.tp) out += fmt::format(",etp={}", p.etp);
  if (p.moe_dispatcher != plan::MoeDispatcher::kAllToAll)
    out += fmt::format(",moe-dispatcher={}", plan::to_string(p.moe_dispatcher));
  if (p.offload_layers > 0) out += fmt::format(",offload-layers={}", p.offload_layers);
  if (p.bf16_first_layers > 0) out += fmt::format(",bf16-first-layers={}", p.bf16_first_layers);
  if (p.bf16_last_layers > 0) out += fmt::format(",bf16-last-layers={}", p.bf16_last_layers);
  if (p.mtp_bf16) out += ",mtp-bf16=on";
  if (p.rank_order != plan::RankOrder::kStagesOutermost) out += fmt::format(",order={}", plan::to_string(p.rank_order));
  // Search tries ZeRO-1/2 with the updated parameters gathered beside the next forward.
  if (p.overlap_param_gather.value_or(false)) out += ",overlap-param-gather=on";
  return out;
}

}  // namespace stepcast::report
