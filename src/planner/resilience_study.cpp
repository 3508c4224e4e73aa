// The resilience study: checkpoint, failures and goodput, restore under another plan, stragglers
// and the input pipeline, from typed inputs.
#include "stepcast/planner/resilience_study.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/muon.hpp"
#include "stepcast/cost/peft.hpp"

namespace stepcast::planner {

namespace {

// The interval factors of the goodput curve, around the optimum.
constexpr std::array kCurveFactors{0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0};
// Token ids fit uint16 below this vocabulary size (Megatron-LM's indexed datasets pick uint16
// then, int32 otherwise).
constexpr int kUint16Vocab = 65536;

FailureSource failure_source(const FailureRate& f, int nodes, int gpus) {
  if (f.node_mtbf) {
    return {cost::job_mtbf_from_node_mtbf(*f.node_mtbf, nodes),
            fmt::format("node MTBF / nodes = {} / {}", hours(*f.node_mtbf), nodes)};
  }
  if (f.per_gpu_hour > 0.0) {
    return {cost::job_mtbf_from_gpu_rate(f.per_gpu_hour, gpus),
            fmt::format("1 h / (failures per GPU-hour x GPUs) = 1 h / ({:g} x {})", f.per_gpu_hour, gpus)};
  }
  if (f.spot_per_node_hour > 0.0) {
    return {
        cost::job_mtbf_from_spot_rate(f.spot_per_node_hour, nodes),
        fmt::format("1 h / (interruptions per node-hour x nodes) = 1 h / ({:g} x {})", f.spot_per_node_hour, nodes)};
  }
  throw InternalError("a resilience study needs one failure rate");
}

// The restore of one rank's `per_rank` bytes by every rank of a `gpus`-rank plan at once.
cost::TransferLoad all_ranks_read(Bytes per_rank, int gpus, int gpus_per_node) {
  return {per_rank, per_rank * static_cast<double>(std::min(gpus, gpus_per_node)),
          per_rank * static_cast<double>(gpus)};
}

void add_stragglers_and_input(const workload::Workload& workload, const plan::Plan& plan, int nodes,
                              const ResilienceInputs& in, ResilienceStudy& r) {
  const int gpus = plan.gpus();
  if (in.step_cv > 0.0) {
    r.normal = cost::normal_stragglers(*r.step_time, *r.step_time * in.step_cv, gpus);
    r.lognormal = cost::lognormal_stragglers(*r.step_time, in.step_cv, gpus);
  }
  if (in.slow_probability > 0.0)
    r.slow = cost::slow_fraction_stragglers(*r.step_time, in.slow_probability, in.slow_factor, gpus);
  const int seq = plan.seq_len > 0 ? plan.seq_len : 0;
  if (seq == 0) {
    r.input_note = "input pipeline: no sequence length (give --seq)";
    return;
  }
  double token_bytes = in.token_bytes;
  if (token_bytes <= 0.0) token_bytes = workload.shape && workload.shape->vocab <= kUint16Vocab ? 2.0 : 4.0;
  cost::InputPipelineInputs ip;
  ip.global_batch_samples = static_cast<double>(plan.global_batch);
  ip.step_time = *r.step_time;
  ip.bytes_per_sample = cost::tokenized_sample_bytes(seq, token_bytes);
  ip.nodes = nodes;
  ip.read_bandwidth = in.input_bandwidth;
  if (in.decode_rate > 0.0) ip.decode_samples_per_s_per_node = in.decode_rate;
  r.input = cost::input_pipeline_bound(ip);
}

}  // namespace

std::string hours(Seconds t) {
  return fmt::format("{} ({:.2f} h)", format_seconds(t), t.value() / unit::kSecondsPerHour);
}

ResilienceStudy study_resilience(const workload::Workload& workload, const plan::Plan& plan,
                                 const topology::Topology& topo, const ResilienceInputs& in) {
  const int gpus = plan.gpus();
  const int gpn = topo.gpus_per_node();
  const int nodes = (gpus + gpn - 1) / gpn;
  // Under Muon the embeddings and output layer keep Adam's state, in the checkpoint too.
  const cost::StateBytesPerParameter bytes =
      cost::with_muon_adam_share(cost::state_bytes_per_parameter(plan.precision, plan.optimizer), plan,
                                 cost::muon_adam_share(workload, workload.parameters));

  ResilienceStudy r;
  // peft=lora: the checkpoint holds the adapters' state; a restart reads it and the frozen base
  // weights again (16-bit, each model-parallel rank its share).
  const bool lora = plan.peft == plan::Peft::kLora;
  const cost::ParameterShare share = cost::parameters_per_model_rank(workload, plan);
  const double saved = lora ? share.trained * plan.tp * plan.pp : workload.parameters;
  r.size = cost::checkpoint_size(saved, plan, bytes, gpn, in.checkpoint);
  r.frozen_base_per_rank = Bytes(lora ? share.frozen * bytes.parameters : 0.0);
  r.tier = in.tier;
  r.write =
      cost::transfer_time({r.size.written_per_rank, r.size.busiest_node_written, r.size.total}, r.tier, "write time");
  r.restore = cost::transfer_time(all_ranks_read(r.size.held_per_rank + r.frozen_base_per_rank, gpus, gpn), r.tier,
                                  "restore time");
  r.stall = cost::checkpoint_stall(r.size, r.write, in.staging);

  r.relaunch = in.relaunch;
  r.restart = r.relaunch + r.restore.time;
  r.failures = failure_source(in.failures, nodes, gpus);
  // A stall of zero (nothing to write) would make every interval optimal; the write of a few
  // bytes still takes longer than this floor.
  const Seconds stall = std::max(r.stall.stall, Seconds(1e-9));
  r.young = cost::young_interval(stall, r.failures.job_mtbf);
  r.daly = cost::daly_interval(stall, r.failures.job_mtbf);
  r.interval = r.daly;
  if (r.stall.asynchronous && r.stall.background_write > r.interval) {
    r.interval = r.stall.background_write;
    r.interval_note = fmt::format(
        "the background write ({}) outlasts Daly's interval ({}): checkpoints cannot come "
        "more often than one write each",
        format_seconds(r.stall.background_write), format_seconds(r.daly));
  }
  r.at_interval = cost::expected_goodput(r.interval, r.stall.stall, r.restart, r.failures.job_mtbf);
  r.curve = cost::goodput_curve(r.interval, kCurveFactors, r.stall.stall, r.restart, r.failures.job_mtbf);

  if (in.restored_plan) {
    r.restored_plan = in.restored_plan;
    r.reshard = cost::restore_reads(workload.parameters, plan, *r.restored_plan, bytes, in.checkpoint);
    r.reshard_ranged = cost::transfer_time(all_ranks_read(r.reshard->needed_per_rank, r.reshard->gpus, gpn), r.tier,
                                           "restore, ranged reads");
    r.reshard_whole = cost::transfer_time(all_ranks_read(r.reshard->whole_file_per_rank, r.reshard->gpus, gpn), r.tier,
                                          "restore, whole files");
  }

  r.step_time = in.step_time;
  r.step_time_origin = in.step_time_origin;
  if (r.step_time) {
    add_stragglers_and_input(workload, plan, nodes, in, r);
  } else {
    r.input_note =
        "stragglers and input pipeline: no step time (the workload is a bare parameter count; give --step-time)";
  }
  return r;
}

}  // namespace stepcast::planner
