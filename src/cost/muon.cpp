// Muon (Jordan et al. 2024) as Megatron-Core runs it (megatron/core/optimizer/muon.py, with
// emerging_optimizers' Newton-Schulz; its OptimizerConfig defaults): the momentum of each weight
// matrix of the transformer blocks is orthogonalized by muon_num_ns_steps = 5 quintic
// Newton-Schulz steps, X <- aX + (bA + cA^2)X with A = X X^T, X the matrix with its shorter side
// first; muon_tp_mode "blockwise" orthogonalizes each tensor-parallel shard alone (no collective),
// muon_split_qkv takes the fused QKV weight's queries, keys and values apart, and
// muon_split_moe_experts each routed expert; fp32 matmul precision "medium" lets the GEMMs run in
// bf16. The embeddings, output layer and 1-D parameters take Adam (muon_scalar_optimizer).
// Megatron-Bridge's distributed Muon hands whole matrices to the data-parallel ranks (the
// layer-wise distributed optimizer): under zero=1 or 2 each rank orthogonalizes its share.
#include "stepcast/cost/muon.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/moe_memory.hpp"

namespace stepcast::cost {

namespace {

/// Adam's second moment: the fp32 state Adam keeps beyond Muon's momentum.
constexpr double kAdamMomentBytes = 4.0;

/// One weight matrix of a layer, `count` of them on this GPU's tensor-parallel shard.
struct Matrix {
  double rows = 0.0;
  double cols = 0.0;
  double count = 1.0;
  bool routed_expert = false;
};

/// The weight matrices of one layer's operators: each weight-gradient GEMM's m x n (batch: the
/// routed experts on this GPU), the fused QKV weight as its three parts.
std::vector<Matrix> layer_matrices(const std::vector<Operator>& ops, const workload::TransformerShape& shape,
                                   double tp) {
  std::vector<Matrix> out;
  for (const Operator& op : ops) {
    if (op.kind != OpKind::kGemm || op.pass != OpPass::kWeightGrad || op.adapter) continue;
    const GemmShape& g = op.gemm;
    if (op.name == "qkv projection (wgrad)") {
      const double kv = static_cast<double>(shape.kv_heads) * shape.head_dim() / tp;
      out.push_back({g.m, g.n - 2.0 * kv});
      out.push_back({g.m, kv, 2.0});
      continue;
    }
    out.push_back({g.m, g.n, g.batch, op.name.starts_with("expert ")});
  }
  return out;
}

/// Newton-Schulz's GEMMs for `count` matrices of `rows` x `cols`, the shorter side s and the
/// longer l: per step A = X X^T (s x s over l), A^2 (s x s over s) and (bA + cA^2) X (s x l over s).
void add_newton_schulz(std::vector<Operator>& ops, const Matrix& m, double count) {
  const double s = std::min(m.rows, m.cols);
  const double l = std::max(m.rows, m.cols);
  const double batch = count * kNewtonSchulzSteps;
  for (const GemmShape& g : {GemmShape{batch, s, s, l}, GemmShape{batch, s, s, s}, GemmShape{batch, s, l, s}}) {
    Operator op;
    op.name = "newton-schulz step";
    op.part = OpPart::kOptimizer;
    op.pass = OpPass::kForward;
    op.kind = OpKind::kGemm;
    op.gemm = g;
    op.flops = Flops(2.0 * g.batch * g.m * g.n * g.k);
    // Each GEMM reads and writes 2-byte operands (bf16 under fp32 matmul precision "medium").
    op.bytes = Bytes(g.batch * (g.m * g.k + g.k * g.n + g.m * g.n) * 2.0);
    op.kernels = batch;
    ops.push_back(op);
  }
}

}  // namespace

StateBytesPerParameter with_muon_adam_share(StateBytesPerParameter per, const plan::Plan& plan, double adam_share) {
  if (plan.optimizer == plan::Optimizer::kMuon) per.optimizer += kAdamMomentBytes * adam_share;
  return per;
}

double muon_adam_share(const workload::Workload& workload, double parameters) {
  if (!workload.shape || parameters <= 0.0) return 0.0;
  return std::min(1.0, workload::embedding_parameter_count(*workload.shape) / parameters);
}

std::vector<Operator> newton_schulz_operators(const workload::Workload& workload, const plan::Plan& plan) {
  std::vector<Operator> ops;
  if (plan.optimizer != plan::Optimizer::kMuon) return ops;
  STEPCAST_ASSERT(workload.shape.has_value(), "optimizer=muon needs a workload with a shape (plan rule)");
  const workload::TransformerShape& shape = *workload.shape;
  // The layer-wise distributed optimizer spreads whole matrices over the ranks the state is
  // sharded over: dense ones over the data-parallel ranks, routed experts over the expert ones.
  double dense_ranks = 1.0;
  double expert_ranks = 1.0;
  if (plan.zero_stage() >= 1) {
    dense_ranks = plan.state_shards();
    if (shape.moe) expert_ranks = expert_split(workload, plan).expert_shards;
  }
  OperatorContext ctx = operator_context(plan);
  // Each GPU holds 1/pp of the layers (the model's uniform split of its parameters).
  for (const auto& [kind, layers] : layer_kinds(shape, 0, shape.layers)) {
    ctx.kind = kind;
    for (const Matrix& m : layer_matrices(layer_operators(shape, ctx), shape, plan.tp)) {
      const double ranks = m.routed_expert ? expert_ranks : dense_ranks;
      add_newton_schulz(ops, m, m.count * layers / plan.pp / ranks);
    }
  }
  return ops;
}

}  // namespace stepcast::cost
