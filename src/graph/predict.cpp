// Step time = compute + pipeline bubble + exposed communication + optimizer update, from the
// plan's step graph: the compute of its stages, the communication evaluated in closed form
// (analytical.cpp).
#include "stepcast/graph/predict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/pipeline.hpp"
#include "stepcast/graph/contributors.hpp"

namespace stepcast::graph {

namespace {

/// "160 calls x 12.00 MiB", or by size: "80 calls (79 x 1.59 GiB, 1 x 5.51 GiB)".
std::string calls_text(const CommTerm& t) {
  const std::int64_t count = t.calls.count();
  const auto& groups = t.calls.groups;
  const std::string noun = count == 1 ? "call" : "calls";
  if (groups.size() <= 1)
    return fmt::format("{} {} x {}", count, noun, format_bytes(groups.empty() ? t.size : groups[0].size));
  std::string sizes;
  for (const CallGroup& g : groups)
    sizes += fmt::format("{}{} x {}", sizes.empty() ? "" : ", ", g.count, format_bytes(g.size));
  return fmt::format("{} {} ({})", count, noun, sizes);
}

void explain_step(StepPrediction& out, const AnalyticalComm& comm, const std::string& bubble,
                  const workload::Workload& workload, const plan::Plan& plan, int sm_count) {
  auto& ex = out.explanation;
  const std::string kernels = out.compute_detail.operator_model
                                  ? "micro-batches x (forward + backward) of the slowest stage (kernel table)"
                                  : "hardware FLOPs / GPUs / achieved rate";
  ex.push_back({"compute",
                out.compute_beside_collectives.value() > 0.0
                    ? fmt::format("{} = {}, + {} the collectives beside it take (below)", kernels,
                                  format_seconds(out.compute - out.compute_beside_collectives),
                                  format_seconds(out.compute_beside_collectives))
                    : kernels,
                format_seconds(out.compute)});
  ex.push_back({"pipeline bubble", bubble, format_seconds(out.bubble)});
  // Each call costs the step's collective overhead beyond NCCL's price of it.
  const Seconds overhead = out.compute_detail.params.collective_overhead;
  const std::string per_call =
      overhead.value() > 0.0 ? fmt::format(", each + {} collective overhead", format_seconds(overhead)) : std::string();
  for (const auto& t : out.communication) {
    ex.push_back(
        {fmt::format("{} (exposed)", t.name),
         fmt::format("{} over {} ranks (stride {}, {} {}{}{}): {} total", calls_text(t), t.ranks, t.stride,
                     cost::to_string(t.op), t.model, t.blocks > 0 ? fmt::format(", {} SMs", t.blocks) : std::string(),
                     per_call, format_seconds(t.time)),
         format_seconds(t.exposed)});
  }
  for (const auto& row : comm.ring_steps)
    ex.push_back({fmt::format("CP exchange: {}", row.label), row.formula, row.value});
  if (out.compute_beside_collectives.value() > 0.0) {
    ex.push_back({"compute beside collectives",
                  fmt::format("each collective's hidden time (its time less its exposed part) x the share of "
                              "the GPU's {} SMs its NCCL kernel holds (one thread block a channel)",
                              sm_count),
                  format_seconds(out.compute_beside_collectives)});
  }
  ex.push_back({"optimizer step",
                fmt::format("gradient norm, update and zeroing over {:.4g} parameters per GPU (memory-bound)",
                            cost::optimizer_parameters_per_gpu(workload, plan)),
                format_seconds(out.optimizer)});
  ex.push_back({"step time", "compute + bubble + exposed communication + optimizer", format_seconds(out.step_time)});
  ex.push_back({"tokens/s", fmt::format("{} sequences x {} tokens / step time", plan.global_batch, plan.seq_len),
                fmt::format("{:.6g}", out.tokens_per_s)});
  ex.push_back({"MFU",
                fmt::format("{} / step time / ({} GPUs x {})", format_flops(out.compute_detail.flops.model),
                            plan.gpus(), format_flops_rate(out.compute_detail.peak)),
                fmt::format("{:.4f}", out.mfu)});
}

/// The plan with the settings the compute model does not read set to their defaults: plans with
/// one key have one compute estimate.
std::string compute_key(plan::Plan plan) {
  plan.rank_order = plan::RankOrder::kStagesOutermost;
  plan.tp_overlap = false;
  plan.overlap_grad_reduce.reset();
  plan.overlap_param_gather.reset();
  return plan::to_string(plan);
}

bool is_send(const CommNode& node) { return node.anchor == Anchor::kStageSend; }

/// One blocking send between neighbouring stages.
Seconds send_hop(const StepGraph& graph, const AnalyticalComm& comm) {
  Seconds hop;
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    const CommTerm& t = comm.terms[i];
    if (is_send(graph.comm[i]) && t.calls.count() > 0) hop += t.time / static_cast<double>(t.calls.count());
  }
  return hop;
}

/// The part of the sends' terms, which count two per micro-batch and chunk, that `stage` waits
/// for: one to each neighbour, an end stage having one (with interleaving the last stage passes
/// each micro-batch on to the first's next chunk, so none is an end).
double send_share(const StepGraph& graph, int stage) {
  const auto p = static_cast<int>(graph.stages.size());
  if (graph.schedule == plan::Schedule::kInterleaved) return 1.0;
  return ((stage > 0 ? 1.0 : 0.0) + (stage + 1 < p ? 1.0 : 0.0)) / 2.0;
}

/// The sends' exposed time.
Seconds exposed_sends(const StepGraph& graph, const AnalyticalComm& comm) {
  Seconds sends;
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    if (is_send(graph.comm[i])) sends += comm.terms[i].exposed;
  }
  return sends;
}

/// Scales the sends' exposed time (`exposed` follows).
void scale_sends(const StepGraph& graph, AnalyticalComm& comm, double scale) {
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    if (!is_send(graph.comm[i])) continue;
    CommTerm& t = comm.terms[i];
    comm.exposed -= t.exposed * (1.0 - scale);
    t.exposed = t.exposed * scale;
  }
}

/// Counts the calls inside the layers and the sends as the stage that sets the pace waits for
/// them (`calls` its own, over the step) and returns the rest of the pipeline's `time` over the
/// compute: the bubble. Where that stage computes less than the compute model's slowest, its
/// waits cover the difference first: the sends' fill and drain (counted as if micro-batch 0 waited
/// on every hop, where the pacing stage's own warm-up hides some), then its calls.
Seconds pace_terms(const StepGraph& graph, AnalyticalComm& comm, Seconds time, int pace, Seconds calls) {
  const double share = send_share(graph, pace);
  const Seconds sends = exposed_sends(graph, comm) * share;
  const Seconds bubble = time - graph.compute.time - calls - sends;
  const Seconds short_by = std::max(Seconds(0.0), -bubble);
  const Seconds from_sends = std::min(short_by, sends);
  scale_sends(graph, comm, sends > Seconds(0.0) ? share * (sends - from_sends) / sends : share);
  const Seconds from_calls = std::min(short_by - from_sends, calls);
  pace_layer_calls(comm, graph, pace, calls > Seconds(0.0) ? (calls - from_calls) / calls : 1.0);
  return std::max(Seconds(0.0), bubble);
}

const char* schedule_source(plan::Schedule schedule) {
  switch (schedule) {
    case plan::Schedule::kGpipe:
      return "gpipe (Huang et al. 2019)";
    case plan::Schedule::k1F1B:
      return "1f1b (Narayanan et al. 2021)";
    case plan::Schedule::kInterleaved:
      return "interleaved 1f1b (Narayanan et al. 2021)";
    case plan::Schedule::kZbH1:
      return "zb-h1 (Qi et al. 2023)";
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

/// The bubble from each stage's F, B and W (cost::pipeline_time), each pass with the calls inside
/// its stage's layers and the compute they slow, and the transfers between stages: the pipeline's
/// time less the compute (slowed, as slow_compute_beside_calls counts it) and the calls and sends
/// of the stage that sets the pace, which the terms are then counted on. None on one stage, whose
/// micro-batches run one after another.
Seconds pipeline_bubble(const StepGraph& graph, AnalyticalComm& comm, StepPrediction& out, std::string* formula,
                        int sm_count) {
  const auto p = static_cast<int>(graph.stages.size());
  if (p == 1) {
    if (formula) *formula = "one stage: its micro-batches run one after another";
    return Seconds(0.0);
  }
  const plan::Schedule schedule = graph.schedule;
  const bool zb = schedule == plan::Schedule::kZbH1;
  const std::vector<LayerWaits> waits = stage_layer_waits(comm, graph, sm_count);
  std::vector<cost::StagePasses> passes;
  for (int s = 0; s < p; ++s) {
    const StageWork& st = graph.stages[static_cast<std::size_t>(s)];
    const LayerWaits& wait = waits[static_cast<std::size_t>(s)];
    const Seconds deferred = zb ? st.weight_grad : Seconds(0.0);
    cost::StagePasses pass{st.forward + wait.forward + wait.slowed_forward,
                           st.backward - deferred + wait.backward + wait.slowed_backward,
                           deferred,
                           {},
                           {}};
    if (schedule == plan::Schedule::kInterleaved) {
      // Each chunk's passes, with the stage's waits shared as its compute is.
      const double forward = st.forward.value() > 0.0 ? pass.forward / st.forward : 1.0;
      const double backward = st.backward.value() > 0.0 ? pass.backward / st.backward : 1.0;
      for (const cost::ChunkCompute& chunk : st.chunks) {
        pass.chunk_forward.push_back(chunk.forward * forward);
        pass.chunk_backward.push_back(chunk.backward * backward);
      }
    }
    passes.push_back(std::move(pass));
  }
  const int m = graph.micro_batches;
  const auto v = static_cast<int>(graph.stages[0].chunks.size());
  const cost::PipelineTime pipeline = cost::pipeline_time(schedule, passes, m, v, send_hop(graph, comm));
  const int pace = pipeline.pacing_stage;
  const LayerWaits& wait = waits[static_cast<std::size_t>(pace)];
  const Seconds slowed = (wait.slowed_forward + wait.slowed_backward) * m;
  const Seconds bubble = pace_terms(graph, comm, pipeline.time - slowed, pace, (wait.forward + wait.backward) * m);
  out.bubble_fraction = bubble / (pipeline.time - bubble);
  if (formula) {
    *formula = fmt::format(
        "{} with p={}, m={}, v={}: stage {} sets the pace, {} from the first forward to the last {}, less the compute "
        "and that stage's calls and sends",
        schedule_source(schedule), p, m, v, pace, format_seconds(pipeline.time), zb ? "weight gradient" : "backward");
  }
  return bubble;
}

}  // namespace

StepGraph plan_step_graph(const workload::Workload& workload, const plan::Plan& plan,
                          const topology::Topology& topology, const StepOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "a step graph needs a workload with a shape");
  STEPCAST_ASSERT(plan.gpus() <= topology.gpu_count(), "the plan must fit the topology's GPUs");
  cost::ComputeOptions compute_options;
  compute_options.achieved_fraction = options.achieved_fraction;
  if (options.calibration)
    compute_options.kernel_params = cost::kernel_params(*options.calibration, topology.gpu(), plan);
  compute_options.explain = options.explain;
  if (plan.offload_layers > 0) {
    if (!topology.host_link()) {
      throw InputError(fmt::format(
          "offload-layers= copies activations over each GPU's link to host memory, which topology {} does not state: "
          "add \"host_link\": {{\"bandwidth_per_gpu\": ..., \"source\": ...}} to its \"node\" block",
          topology.name()));
    }
    compute_options.host_bandwidth = topology.host_link()->bandwidth_per_gpu;
  }
  // The planner's variants of one plan share its compute (ComputeCache); others price it here.
  ComputeCache own;
  ComputeCache* shared = options.explain ? nullptr : options.compute_cache;
  ComputeCache& cache = shared ? *shared : own;
  std::string key = shared ? compute_key(plan) : std::string();
  if (!cache.estimate || cache.key != key) {
    cache.estimate = cost::estimate_compute(workload, plan, topology.gpu(), compute_options);
    cache.key = std::move(key);
  }
  const cost::ComputeEstimate& compute = *cache.estimate;
  const GraphContext context{
      workload, plan, topology, options.memory.ddp_bucket, options.memory.zero_bucket_elements, options.explain};
  return build_step_graph(context, compute);
}

StepPrediction evaluate_step(const StepGraph& graph, const workload::Workload& workload, const plan::Plan& plan,
                             const topology::Topology& topology, const StepOptions& options) {
  StepPrediction out;
  cost::MemoryOptions memory_options = options.memory;
  memory_options.explain = options.explain;
  memory_options.fp8_any_layout = cost::fp8_gemm_any_layout(topology.gpu());
  out.memory = cost::estimate_memory(workload, plan, memory_options);
  out.fit = cost::check_fit(out.memory, topology.gpu().memory, options.memory.margin);
  out.compute_detail = graph.compute;
  out.compute = graph.compute.time;
  Pricing pricing;
  pricing.topology = &topology;
  pricing.model.calibration = options.calibration;
  pricing.cache = options.price_cache;
  pricing.explain = options.explain;
  AnalyticalComm comm = evaluate_communication(graph, pricing);
  std::string bubble;
  std::string* formula = options.explain ? &bubble : nullptr;
  out.bubble = pipeline_bubble(graph, comm, out, formula, topology.gpu().sm_count);
  out.compute_beside_collectives = slow_compute_beside_calls(comm, graph, topology.gpu().sm_count);
  out.compute += out.compute_beside_collectives;
  out.communication = std::move(comm.terms);
  out.exposed_communication = comm.exposed;
  out.optimizer = graph.optimizer;
  out.step_time = out.compute + out.bubble + out.exposed_communication + out.optimizer;
  const double tokens = static_cast<double>(plan.global_batch) * plan.seq_len;
  out.tokens_per_s = tokens / out.step_time.value();
  // MFU (Chowdhery et al. 2022, Appendix B): model FLOPs per second over the peak of all GPUs.
  out.mfu = (out.compute_detail.flops.model / out.step_time) / (out.compute_detail.peak * plan.gpus());
  if (options.explain) explain_step(out, comm, bubble, workload, plan, topology.gpu().sm_count);
  return out;
}

StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan,
                            const topology::Topology& topology, const StepOptions& options) {
  return evaluate_step(plan_step_graph(workload, plan, topology, options), workload, plan, topology, options);
}

}  // namespace stepcast::graph
