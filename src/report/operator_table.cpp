// The operator list as a table: integers where a program needs exact shapes, empty cells where
// a column does not apply to the operator's kind.
#include "stepcast/report/operator_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>

#include "stepcast/core/units.hpp"

namespace stepcast::report {

namespace {

Cell integer(double v) { return Cell::of_integer(static_cast<std::int64_t>(std::llround(v))); }

/// A kind of layer in words: "transformer", "transformer, MoE", "Mamba-2", "attention, sliding
/// window", "MLP, MoE", "..., bf16".
std::string layer_kind_name(const cost::LayerKind& kind) {
  std::string out;
  switch (kind.block) {
    case workload::Block::kTransformer:
      out = "transformer";
      break;
    case workload::Block::kMamba:
      out = "Mamba-2";
      break;
    case workload::Block::kAttention:
      out = "attention";
      break;
    case workload::Block::kMlp:
      out = "MLP";
      break;
  }
  if (kind.moe) out += ", MoE";
  if (kind.sliding) out += ", sliding window";
  if (kind.bf16) out += ", bf16";
  return out;
}

}  // namespace

Report operator_report(const workload::Workload& workload, const plan::Plan& plan, const std::string& gpu,
                       const std::vector<calibrate::BenchOperator>& operators) {
  Report r;
  r.title = fmt::format("Operators of one micro-batch: {} on {}", workload.name, gpu);
  r.notes = {fmt::format("workload: {}", workload.name), fmt::format("gpu: {}", gpu),
             fmt::format("plan: {}", plan::to_string(plan))};
  if (workload.shape) {
    // One layer of each kind is listed; the note says how many of the model's layers are of it.
    std::vector<std::string> kinds;
    for (const auto& [kind, count] :
         cost::layer_kinds(*workload.shape, 0, workload.shape->layers, cost::bf16_layers(plan))) {
      kinds.push_back(fmt::format("{} x {}", layer_kind_name(kind), count));
    }
    r.notes.push_back(fmt::format("layers: {}", fmt::join(kinds, "; ")));
  }
  Table t("operators",
          "Every operator the compute model prices for one micro-batch on one GPU; memory-bound ones with the kernel "
          "stepcast-kernel-bench runs in their place",
          {{"part", "part", "", -1, 1.0},
           {"layer", "layer", "", -1, 1.0},
           {"pass", "pass", "", -1, 1.0},
           {"operator", "operator", "", -1, 1.0},
           {"kind", "kind", "", -1, 1.0},
           {"precision", "precision", "", -1, 1.0},
           {"batch", "batch", "", -1, 1.0},
           {"m", "M", "", -1, 1.0},
           {"n", "N", "", -1, 1.0},
           {"k", "K", "", -1, 1.0},
           {"elements", "elements", "", -1, 1.0},
           {"flops", "FLOPs", "GFLOP", 3, unit::kGiga},
           {"bytes", "bytes", "MB", 3, unit::kMega},
           {"kernels", "launches", "", -1, 1.0},
           {"pattern", "bench kernel", "", -1, 1.0},
           {"row_length", "row", "", -1, 1.0},
           {"reads", "reads", "", -1, 1.0},
           {"writes", "writes", "", -1, 1.0},
           {"element_bytes", "element bytes", "", -1, 1.0},
           {"mask", "mask", "", -1, 1.0}});
  for (const calibrate::BenchOperator& b : operators) {
    const cost::Operator& op = b.op;
    const bool gemm_like = op.kind != cost::OpKind::kMemory;
    std::vector<Cell> row = {Cell::of_text(std::string(cost::to_string(op.part))),
                             b.layer ? Cell::of_text(layer_kind_name(*b.layer)) : Cell::empty(),
                             Cell::of_text(std::string(cost::to_string(op.pass))),
                             Cell::of_text(std::string(op.name)),
                             Cell::of_text(std::string(cost::to_string(op.kind))),
                             Cell::of_text(std::string(plan::to_string(b.precision))),
                             gemm_like ? integer(op.gemm.batch) : Cell::empty(),
                             gemm_like ? integer(op.gemm.m) : Cell::empty(),
                             gemm_like ? integer(op.gemm.n) : Cell::empty(),
                             gemm_like ? integer(op.gemm.k) : Cell::empty(),
                             op.kind == cost::OpKind::kGemm ? Cell::empty() : integer(op.elements),
                             Cell::of_number(op.flops.value()),
                             Cell::of_number(op.bytes.value()),
                             integer(op.kernels)};
    if (b.kernel) {
      const calibrate::MemoryKernel& k = *b.kernel;
      row.push_back(Cell::of_text(std::string(calibrate::to_string(k.pattern))));
      row.push_back(k.row_length > 0.0 ? integer(k.row_length) : Cell::empty());
      row.push_back(Cell::of_integer(k.reads));
      row.push_back(Cell::of_integer(k.writes));
      row.push_back(Cell::of_integer(k.element_bytes));
      row.push_back(Cell::of_text(std::string(calibrate::to_string(k.mask))));
    } else {
      // GEMMs and attention run as themselves; a memory-bound operator without a kernel is skipped.
      row.push_back(op.kind == cost::OpKind::kMemory ? Cell::of_text("none") : Cell::empty());
      row.insert(row.end(), 5, Cell::empty());
    }
    t.add_row(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

}  // namespace stepcast::report
