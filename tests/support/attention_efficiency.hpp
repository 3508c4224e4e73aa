// Shared by the fused-attention tests: a catalogue GPU, one attention kernel of a given head
// dimension and keys per query, and the efficiency the kernel model gives it.
#pragma once

#include <string>

#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::test {

/// A GPU file of topologies/gpus/ by its name ("h100-sxm5-80gb").
inline topology::GpuSpec catalogue_gpu(const std::string& id) {
  return topology::load_gpu_file(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gpus/" + id + ".json");
}

/// One attention kernel over 1024 sequences' heads, each query attending `keys` keys at head
/// dimension `d`, its thread blocks a whole number of waves on the H100's 132 SMs and the B200's 148.
inline cost::Operator attention_kernel(double d, double keys, cost::OpPass pass) {
  cost::Operator op;
  op.kind = cost::OpKind::kFusedAttention;
  op.pass = pass;
  op.gemm = {1024.0, keys, keys, d};
  op.head_dim = d;
  op.elements = 132.0 * 148.0 * 8.0;
  op.flops = Flops(4.0 * 1024.0 * keys * keys * d);
  return op;
}

/// The efficiency the kernel model gives that kernel on `gpu` with flash=`kernel`, timed on its own
/// as the papers and sweeps time it: the share a training step sustains held at 1.
inline double attention_efficiency(const topology::GpuSpec& gpu, plan::FlashKernel kernel, double d, double keys,
                                   cost::OpPass pass) {
  plan::Plan p;
  p.flash_attention = true;
  p.flash_kernel = kernel;
  const cost::ParameterValues isolated = {{"sustained_tensor_fraction", 1.0}};
  const cost::KernelParams params = cost::default_kernel_params(gpu, p, &isolated);
  return cost::time_operator(attention_kernel(d, keys, pass), gpu, p.precision, params).efficiency;
}

}  // namespace stepcast::test
