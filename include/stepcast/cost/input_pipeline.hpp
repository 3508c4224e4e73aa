// The input pipeline: samples and bytes per second a plan consumes at its step time, against what
// storage and the data loaders' decoding supply; when supply is lower, the input bounds the job.
#pragma once

#include <optional>
#include <string>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// What the job consumes and what the input side can supply.
struct InputPipelineInputs {
  double global_batch_samples = 0.0;  ///< samples per optimizer step, all ranks together
  Seconds step_time;                  ///< predicted time of one step on the GPUs
  Bytes bytes_per_sample;             ///< bytes read from storage per sample
  int nodes = 1;
  /// Aggregate read bandwidth of the dataset's storage for the whole job; none = not limiting.
  std::optional<BytesPerSecond> read_bandwidth;
  /// Samples per second one node's data-loader workers decode (tokenize, decompress, augment);
  /// none = not limiting.
  std::optional<double> decode_samples_per_s_per_node;
};

/// Demand against supply, in samples per second.
struct InputPipelineBound {
  double demand_samples_per_s = 0.0;            ///< global batch / step time
  BytesPerSecond demand_bandwidth;              ///< demand x bytes per sample
  std::optional<double> storage_samples_per_s;  ///< read bandwidth / bytes per sample
  std::optional<double> decode_samples_per_s;   ///< decode rate per node x nodes
  bool input_bound = false;                     ///< supply < demand: the input pipeline, not the GPUs, sets the pace
  std::string limiter;                          ///< "gpus", "storage" or "decode"
  Seconds bound_step_time;                      ///< max(step time, global batch / supply)
  double gpu_busy_fraction = 1.0;               ///< step time / bound step time
  Explanation explanation;
};

/// Bytes per sample of pre-tokenized data: sequence length x bytes per token id (2 for vocabularies
/// below 65536 stored as uint16, 4 for int32 ids, as Megatron-LM's indexed datasets choose).
/// Preconditions: seq_len >= 1, bytes_per_token > 0.
Bytes tokenized_sample_bytes(int seq_len, double bytes_per_token);

/// Compares demand with supply. Preconditions: batch > 0, step time > 0, bytes per sample > 0,
/// nodes >= 1, given rates > 0.
InputPipelineBound input_pipeline_bound(const InputPipelineInputs& in);

}  // namespace stepcast::cost
