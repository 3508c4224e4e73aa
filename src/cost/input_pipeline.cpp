// Input-pipeline bound: the job runs at the slower of the GPUs' step rate and the input's supply.
#include "stepcast/cost/input_pipeline.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

Bytes tokenized_sample_bytes(int seq_len, double bytes_per_token) {
  STEPCAST_ASSERT(seq_len >= 1 && bytes_per_token > 0.0, "sequence length >= 1 and token size > 0");
  return Bytes(static_cast<double>(seq_len) * bytes_per_token);
}

InputPipelineBound input_pipeline_bound(const InputPipelineInputs& in) {
  STEPCAST_ASSERT(
      in.global_batch_samples > 0.0 && in.step_time.value() > 0.0 && in.bytes_per_sample.value() > 0.0 && in.nodes >= 1,
      "batch, step time and sample size positive, at least one node");
  InputPipelineBound out;
  out.demand_samples_per_s = in.global_batch_samples / in.step_time.value();
  out.demand_bandwidth = BytesPerSecond(out.demand_samples_per_s * in.bytes_per_sample.value());
  out.explanation.push_back(
      {"demand",
       fmt::format("global batch / step time = {:g} / {}", in.global_batch_samples, format_seconds(in.step_time)),
       fmt::format("{:.1f} samples/s ({})", out.demand_samples_per_s, format_bandwidth(out.demand_bandwidth))});
  double supply = out.demand_samples_per_s;
  out.limiter = "gpus";
  if (in.read_bandwidth) {
    STEPCAST_ASSERT(in.read_bandwidth->value() > 0.0, "read bandwidth > 0");
    out.storage_samples_per_s = in.read_bandwidth->value() / in.bytes_per_sample.value();
    out.explanation.push_back({"storage supply",
                               fmt::format("read bandwidth / bytes per sample = {} / {}",
                                           format_bandwidth(*in.read_bandwidth), format_bytes(in.bytes_per_sample)),
                               fmt::format("{:.1f} samples/s", *out.storage_samples_per_s)});
    if (*out.storage_samples_per_s < supply) {
      supply = *out.storage_samples_per_s;
      out.limiter = "storage";
    }
  }
  if (in.decode_samples_per_s_per_node) {
    STEPCAST_ASSERT(*in.decode_samples_per_s_per_node > 0.0, "decode rate > 0");
    out.decode_samples_per_s = *in.decode_samples_per_s_per_node * static_cast<double>(in.nodes);
    out.explanation.push_back(
        {"decode supply",
         fmt::format("decode rate per node x nodes = {:g} x {}", *in.decode_samples_per_s_per_node, in.nodes),
         fmt::format("{:.1f} samples/s", *out.decode_samples_per_s)});
    if (*out.decode_samples_per_s < supply) {
      supply = *out.decode_samples_per_s;
      out.limiter = "decode";
    }
  }
  out.input_bound = supply < out.demand_samples_per_s;
  out.bound_step_time = std::max(in.step_time, Seconds(in.global_batch_samples / supply));
  out.gpu_busy_fraction = in.step_time / out.bound_step_time;
  out.explanation.push_back({"bounded step",
                             fmt::format("max(step time, global batch / supply) = max({}, {:g} / {:.1f})",
                                         format_seconds(in.step_time), in.global_batch_samples, supply),
                             format_seconds(out.bound_step_time)});
  return out;
}

}  // namespace stepcast::cost
