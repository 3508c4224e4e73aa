// `stepcast resilience`: checkpoint size and write/restore time, the optimal checkpoint interval
// for a failure or preemption rate and the goodput it yields, stragglers and the input-pipeline
// bound, as text or JSON (the study itself is planner::study_resilience).
#pragma once

#include <string>

#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

struct ResilienceRequest {
  PlanOptions plan;
  std::string storage;
  std::string mtbf;
  double failure_rate = 0.0;
  double spot_rate = 0.0;
  // Daly (2006) uses R = 10 min in his worked examples; a job relaunch on a managed cluster
  // (scheduling, container start, NCCL init) is of that order. The restore read is added to it.
  std::string restart = "10 min";
  bool async = false;
  // PCIe 4.0 x16, the A100/H100 SXM host link: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s per
  // direction, an upper bound for a pinned device-to-host copy.
  std::string host_copy_bandwidth = "31.5 GB/s";
  // p4d.24xlarge: 1152 GiB of host memory per node (AWS instance specifications).
  std::string host_memory = "1152 GiB";
  bool with_gradients = false;
  std::string restore_plan;
  std::string step_time;
  std::string input_bandwidth;
  double decode_rate = 0.0;
  double token_bytes = 0.0;
  double step_cv = 0.0;
  double slow_probability = 0.0;
  double slow_factor = 2.0;
  bool json = false;
  bool explain = false;
};

/// The study's report; bad options throw InputError.
std::string resilience_command(const ResilienceRequest& request);

}  // namespace stepcast::report
