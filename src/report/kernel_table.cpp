// Rows of the kernel table, one per operator, with SI cells and the columns people read.
#include "stepcast/report/kernel_table.hpp"

#include <fmt/format.h>

namespace stepcast::report {

namespace {

std::string shape_text(const cost::Operator& op) {
  if (op.kind == cost::OpKind::kMemory) return fmt::format("{:.4g} elements", op.elements);
  const auto& g = op.gemm;
  const std::string mnk = fmt::format("{:.0f} x {:.0f} x {:.0f}", g.m, g.n, g.k);
  const std::string shape = g.batch > 1.0 ? fmt::format("{:.0f} x ({})", g.batch, mnk) : mnk;
  // A low-precision plan's quantized GEMMs are marked; its other GEMMs run in bf16.
  return op.low_precision ? shape + " quantized" : shape;
}

}  // namespace

std::string pass_name(const cost::Operator& op) {
  return op.part == cost::OpPart::kOptimizer ? std::string("optimizer step") : std::string(cost::to_string(op.pass));
}

Table kernel_table(const cost::ComputeEstimate& compute, Seconds step_time) {
  Table t("kernels", "Kernels of the slowest pipeline stage's GPU (one micro-batch; runs per step in \"x\")",
          {{"part", "part", "", -1, 1.0},
           {"pass", "pass", "", -1, 1.0},
           {"operator", "operator", "", -1, 1.0},
           {"shape", "shape (M x N x K)", "", -1, 1.0},
           {"flops", "FLOPs", "GFLOP", 2, unit::kGiga},
           {"bytes", "bytes", "MB", 2, unit::kMega},
           {"bound", "bound", "", -1, 1.0},
           {"efficiency", "efficiency", "", 3, 1.0},
           {"time_s", "time", "us", 2, 1.0 / unit::kMega},
           {"runs_per_step", "x", "", 0, 1.0},
           {"step_time_share", "share of step", "%", 2, 0.01}});
  for (const cost::KernelRow& k : compute.kernels) {
    t.add_row({Cell::of_text(std::string(cost::to_string(k.op.part))), Cell::of_text(pass_name(k.op)),
               Cell::of_text(std::string(k.op.name)), Cell::of_text(shape_text(k.op)),
               Cell::of_number(k.op.flops.value()), Cell::of_number(k.op.bytes.value()),
               Cell::of_text(std::string(cost::to_string(k.time.bound))), Cell::of_number(k.time.efficiency),
               Cell::of_number(k.time.gpu.value()), Cell::of_number(k.per_step),
               Cell::of_number(k.time.gpu * k.per_step / step_time)});
  }
  return t;
}

}  // namespace stepcast::report
