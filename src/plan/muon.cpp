// optimizer=muon as Megatron-Core runs it (megatron/core/optimizer/muon.py): Newton-Schulz on each
// tensor-parallel shard of the transformer blocks' weight matrices, the distributed optimizer
// handing whole matrices to each data-parallel rank. What stepcast does not model is refused.
#include "muon.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

void add_muon_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.optimizer != Optimizer::kMuon) return;
  if (p.peft == Peft::kLora) out.push_back({Rule::kMuonWithLora, {}});
  if (p.zero_stage() == 3) {
    out.push_back({Rule::kMuonWithShardedWeights, {{"sharding", std::string(p.is_fsdp() ? "FSDP" : "zero=3")}}});
  }
  if (!workload.shape) out.push_back({Rule::kMuonNeedsShape, {{"workload", workload.name}}});
}

std::string describe_muon(const Verdict& v) {
  switch (v.rule) {
    case Rule::kMuonWithLora:
      return "optimizer=muon with peft=lora is not modelled: Megatron-Bridge trains LoRA adapters with Adam";
    case Rule::kMuonWithShardedWeights:
      return fmt::format(
          "optimizer=muon with {} is not modelled: Newton-Schulz needs each weight matrix's whole gradient, which "
          "sharded weights first gather over the data-parallel ranks",
          v.text("sharding"));
    case Rule::kMuonNeedsShape:
      return fmt::format(
          "optimizer=muon needs the model's layer shapes for its weight matrices; {} gives a parameter count only",
          v.text("workload"));
    default:
      STEPCAST_UNREACHABLE("a rule of optimizer=muon");
  }
}

}  // namespace stepcast::plan
