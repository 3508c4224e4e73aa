// Step time = compute + pipeline bubble + exposed communication + optimizer update. The
// collectives and how much of them is exposed come from step_communication.cpp.
#include "stepcast/cost/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::cost {

StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan,
                            const topology::Topology& topology, const StepOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "predict_step needs a workload with a shape");
  STEPCAST_ASSERT(plan.gpus() <= topology.gpu_count(), "the plan must fit the topology's GPUs");
  const auto& shape = *workload.shape;
  StepPrediction out;
  MemoryOptions memory_options = options.memory;
  memory_options.explain = options.explain;
  out.memory = estimate_memory(workload, plan, memory_options);
  out.fit = check_fit(out.memory, topology.gpu().memory, options.memory.margin);
  ComputeOptions compute_options;
  compute_options.achieved_fraction = options.achieved_fraction;
  if (options.calibration) compute_options.kernel_params = kernel_params(*options.calibration, topology.gpu(), plan);
  compute_options.explain = options.explain;
  out.compute_detail = estimate_compute(workload, plan, topology.gpu(), compute_options);
  out.compute = out.compute_detail.time;

  const int m = plan.micro_batches();
  // The slowest stage's layers: layers / pp, or the most of an uneven split.
  const double layers_per_stage =
      plan.uneven_pipeline()
          ? out.compute_detail.stages[static_cast<std::size_t>(out.compute_detail.critical_stage)].layers
          : static_cast<double>(shape.layers) / plan.pp;
  out.layers_per_stage = layers_per_stage;
  // The windows data-parallel communication hides behind: every stage moves about the same
  // gradients and parameters, so the stage with the shortest forward and backward (not the
  // slowest, which sets the pace) hides the least and ends the step last (Narayanan et al. 2021:
  // the first stage drains last).
  const StageCompute& critical = out.compute_detail.stages[static_cast<std::size_t>(out.compute_detail.critical_stage)];
  ComputeWindows windows;
  windows.forward = critical.forward;
  windows.backward = critical.backward;
  for (const StageCompute& st : out.compute_detail.stages) {
    windows.forward = std::min(windows.forward, st.forward);
    windows.backward = std::min(windows.backward, st.backward);
  }
  windows.micro_batches = m;
  windows.layers_per_stage = layers_per_stage;
  windows.attention_forward = out.compute_detail.attention_forward;
  windows.attention_backward = out.compute_detail.attention_backward;
  CommunicationOptions comm_options;
  comm_options.ddp_bucket = options.memory.ddp_bucket;
  comm_options.zero_bucket_elements = options.memory.zero_bucket_elements;
  comm_options.calibration = options.calibration;
  comm_options.cache = options.communication_cache;
  StepCommunication comm = step_communication(workload, plan, topology, windows, comm_options);
  out.communication = std::move(comm.terms);
  const Explanation context_rows = std::move(comm.context);
  out.exposed_communication = comm.exposed;
  const Seconds tensor_comm = comm.tensor;

  // The bubble is a fraction of the ideal pipeline time, which includes the tensor-parallel
  // collectives each stage runs (Narayanan et al. 2021, section 2.2).
  // With stages of unequal time (the first holds the embedding, the last the output layer and
  // loss), the fill and drain run every stage but the slowest once per micro-batch slot: 1F1B
  // takes m x slowest + (sum of the others), so the bubble's unit is the others' mean.
  out.bubble_fraction = bubble_fraction(plan.schedule, plan.pp, m, plan.vp);
  Seconds others(0.0);
  for (const StageCompute& st : out.compute_detail.stages) others += st.forward + st.backward;
  others -= critical.forward + critical.backward;
  const Seconds bubble_unit = plan.pp > 1 ? others / (plan.pp - 1) : critical.forward + critical.backward;
  out.bubble = (bubble_unit * m + tensor_comm) * out.bubble_fraction;
  out.optimizer = out.compute_detail.optimizer;
  out.step_time = out.compute + out.bubble + out.exposed_communication + out.optimizer;
  const double tokens = static_cast<double>(plan.global_batch) * plan.seq_len;
  out.tokens_per_s = tokens / out.step_time.value();
  // MFU (Chowdhery et al. 2022, Appendix B): model FLOPs per second over the peak of all GPUs.
  out.mfu = (out.compute_detail.flops.model / out.step_time) / (out.compute_detail.peak * plan.gpus());

  if (options.explain) {
    auto& ex = out.explanation;
    ex.push_back({"compute",
                  out.compute_detail.operator_model
                      ? "micro-batches x (forward + backward) of the slowest stage (kernel table)"
                      : "hardware FLOPs / GPUs / achieved rate",
                  format_seconds(out.compute)});
    ex.push_back(
        {"pipeline bubble",
         fmt::format("{:.4f} x (m x mean micro-batch of the other stages + TP communication); {} with p={}, m={}, v={}",
                     out.bubble_fraction, plan::to_string(plan.schedule), plan.pp, m, plan.vp),
         format_seconds(out.bubble)});
    for (const auto& t : out.communication) {
      ex.push_back(
          {fmt::format("{} (exposed)", t.name),
           fmt::format("{:.4g} calls x {} over {} ranks (stride {}, {} {}): {} total", t.calls, format_bytes(t.size),
                       t.ranks, t.stride, to_string(t.op), t.model, format_seconds(t.time)),
           format_seconds(t.exposed)});
    }
    for (const auto& row : context_rows)
      ex.push_back({fmt::format("CP exchange: {}", row.label), row.formula, row.value});
    ex.push_back({"optimizer step",
                  fmt::format("gradient norm, update and zeroing over {:.4g} parameters per GPU (memory-bound)",
                              optimizer_parameters_per_gpu(workload, plan)),
                  format_seconds(out.optimizer)});
    ex.push_back({"step time", "compute + bubble + exposed communication + optimizer", format_seconds(out.step_time)});
    ex.push_back({"tokens/s", fmt::format("{} sequences x {} tokens / step time", plan.global_batch, plan.seq_len),
                  fmt::format("{:.6g}", out.tokens_per_s)});
    ex.push_back({"MFU",
                  fmt::format("{} / step time / ({} GPUs x {})", format_flops(out.compute_detail.flops.model),
                              plan.gpus(), format_flops_rate(out.compute_detail.peak)),
                  fmt::format("{:.4f}", out.mfu)});
  }
  return out;
}

}  // namespace stepcast::cost
