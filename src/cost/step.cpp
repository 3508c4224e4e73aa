// Step time = compute + pipeline bubble + exposed communication + optimizer update. The
// collectives and how much of them is exposed come from step_communication.cpp.
#include "stepcast/cost/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::cost {

StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan, const topology::Topology& topology,
                            const StepOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "predict_step needs a workload with a shape");
  STEPCAST_ASSERT(plan.gpus() <= topology.gpu_count(), "the plan must fit the topology's GPUs");
  const auto& shape = *workload.shape;
  StepPrediction out;
  MemoryOptions memory_options = options.memory;
  memory_options.explain = options.explain;
  out.memory = estimate_memory(workload, plan, memory_options);
  out.fit = check_fit(out.memory, topology.gpu().memory);
  std::optional<double> achieved = options.achieved_fraction;
  if (!achieved && options.calibration) achieved = compute_fraction(*options.calibration, std::string(plan::to_string(plan.precision)));
  out.compute_detail = estimate_compute(workload, plan, topology.gpu(), achieved, options.explain);
  out.compute = out.compute_detail.time;

  const int m = plan.micro_batches();
  const double layers_per_stage = static_cast<double>(shape.layers) / plan.pp;
  out.layers_per_stage = layers_per_stage;
  const double passes = plan.recompute == plan::Recompute::kFull ? 4.0 : 3.0;
  // Per micro-batch compute of one GPU, split into forward and backward (backward is twice the
  // forward; with full recompute the backward also reruns the forward: Narayanan et al. 2021).
  const Seconds per_microbatch = out.compute / m;
  ComputeWindows windows;
  windows.forward = per_microbatch / passes;
  windows.backward = per_microbatch * ((passes - 1.0) / passes);
  windows.micro_batches = m;
  windows.layers_per_stage = layers_per_stage;
  CommunicationOptions comm_options;
  comm_options.ddp_bucket = options.memory.ddp_bucket;
  comm_options.zero_bucket_elements = options.memory.zero_bucket_elements;
  comm_options.calibration = options.calibration;
  comm_options.cache = options.communication_cache;
  StepCommunication comm = step_communication(workload, plan, topology, windows, comm_options);
  out.communication = std::move(comm.terms);
  out.exposed_communication = comm.exposed;
  const Seconds tensor_comm = comm.tensor;

  // The bubble is a fraction of the ideal pipeline time, which includes the tensor-parallel
  // collectives each stage runs (Narayanan et al. 2021, section 2.2).
  out.bubble_fraction = bubble_fraction(plan.schedule, plan.pp, m, plan.vp);
  out.bubble = (out.compute + tensor_comm) * out.bubble_fraction;
  // Adam's update streams the gradients, master weights and moments in and out of HBM and
  // writes the 16-bit weights: about twice the model state per GPU through the memory bus.
  out.optimizer = (out.memory.model_state() * 2.0) / topology.gpu().memory_bandwidth;
  out.step_time = out.compute + out.bubble + out.exposed_communication + out.optimizer;
  const double tokens = static_cast<double>(plan.global_batch) * plan.seq_len;
  out.tokens_per_s = tokens / out.step_time.value();
  // MFU (Chowdhery et al. 2022, Appendix B): model FLOPs per second over the peak of all GPUs.
  out.mfu = (out.compute_detail.flops.model / out.step_time) / (out.compute_detail.peak * plan.gpus());

  if (options.explain) {
    auto& ex = out.explanation;
    ex.push_back({"compute", "hardware FLOPs / GPUs / achieved rate", format_seconds(out.compute)});
    ex.push_back({"pipeline bubble", fmt::format("{:.4f} x (compute + TP communication); {} with p={}, m={}, v={}", out.bubble_fraction,
                                                 plan::to_string(plan.schedule), plan.pp, m, plan.vp),
                  format_seconds(out.bubble)});
    for (const auto& t : out.communication) {
      ex.push_back({fmt::format("{} (exposed)", t.name),
                    fmt::format("{:.4g} calls x {} over {} ranks (stride {}, {} {}): {} total", t.calls, format_bytes(t.size), t.ranks,
                                t.stride, to_string(t.op), t.model, format_seconds(t.time)),
                    format_seconds(t.exposed)});
    }
    ex.push_back({"optimizer step", fmt::format("2 x model state {} / HBM {}", format_bytes(out.memory.model_state()),
                                                format_bandwidth(topology.gpu().memory_bandwidth)),
                  format_seconds(out.optimizer)});
    ex.push_back({"step time", "compute + bubble + exposed communication + optimizer", format_seconds(out.step_time)});
    ex.push_back({"tokens/s", fmt::format("{} sequences x {} tokens / step time", plan.global_batch, plan.seq_len), fmt::format("{:.6g}", out.tokens_per_s)});
    ex.push_back({"MFU", fmt::format("{} / step time / ({} GPUs x {})", format_flops(out.compute_detail.flops.model), plan.gpus(),
                                     format_flops_rate(out.compute_detail.peak)),
                  fmt::format("{:.4f}", out.mfu)});
  }
  return out;
}

}  // namespace stepcast::cost
