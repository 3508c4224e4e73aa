// Failures and preemption of a long training job: the job's mean time between failures, the
// optimal checkpoint interval (Young 1974; Daly 2006) and the goodput a given interval yields.
#pragma once

#include <span>
#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// The job's MTBF when each of `nodes` nodes fails independently (Poisson) with mean time
/// `node_mtbf` between failures: the first of n exponential clocks rings after M_node / n on
/// average, and any node's failure stops a synchronous job. Preconditions: node_mtbf > 0, nodes >= 1.
Seconds job_mtbf_from_node_mtbf(Seconds node_mtbf, int nodes);

/// The job's MTBF from a failure rate per GPU-hour over `gpus` GPUs: M = 1 / (rate x gpus) hours.
/// Preconditions: failures_per_gpu_hour > 0, gpus >= 1.
Seconds job_mtbf_from_gpu_rate(double failures_per_gpu_hour, int gpus);

/// The job's mean time between preemptions from a spot interruption rate per node-hour (the chance
/// that one instance is reclaimed within an hour, taken as a Poisson rate): M = 1 / (rate x nodes) hours.
/// Preconditions: interruptions_per_node_hour > 0, nodes >= 1.
Seconds job_mtbf_from_spot_rate(double interruptions_per_node_hour, int nodes);

/// Young (1974), "A first order approximation to the optimum checkpoint interval":
/// tau = sqrt(2 x delta x M), where delta is the time training stops for one checkpoint and M the
/// job's MTBF. Preconditions: both > 0.
Seconds young_interval(Seconds checkpoint_stall, Seconds mtbf);

/// Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
/// eq. for the perturbation solution: tau = sqrt(2 delta M) x [1 + sqrt(delta / 2M) / 3 +
/// (delta / 2M) / 9] - delta when delta < 2M, otherwise tau = M. Preconditions: both > 0.
Seconds daly_interval(Seconds checkpoint_stall, Seconds mtbf);

/// Where the wall-clock time of a job checkpointing every `interval` goes, in expectation.
/// The fractions sum to 1.
struct GoodputBreakdown {
  Seconds interval;               ///< compute time between checkpoints (tau)
  Seconds expected_segment;       ///< expected wall time to finish one interval and its checkpoint
  double goodput = 0.0;           ///< useful compute / wall time
  double write_fraction = 0.0;    ///< time training is stopped by checkpoints that complete
  double rework_fraction = 0.0;   ///< work computed again after a failure
  double restart_fraction = 0.0;  ///< restarting the job and restoring its state after a failure
};

/// Expected goodput of checkpointing every `interval` of compute, each checkpoint stalling
/// training for `checkpoint_stall`, each failure costing `restart` (relaunch plus restore) before
/// work resumes, failures Poisson with mean `mtbf`. Daly (2006) complete model, exponential failures:
/// wall time per segment W = M e^(R/M) (e^((tau+delta)/M) - 1), so goodput = tau / W. The loss to
/// failures, W - tau - delta, is split between rework and restart in proportion to the first-order
/// costs of a failure (Young 1974): half a segment, (tau + delta) / 2, against R.
/// Preconditions: interval > 0, mtbf > 0, stall and restart >= 0.
GoodputBreakdown expected_goodput(Seconds interval, Seconds checkpoint_stall, Seconds restart, Seconds mtbf);

/// The goodput curve: expected_goodput at `optimal` x each factor (e.g. 1/4, 1/2, 1, 2, 4), in order.
std::vector<GoodputBreakdown> goodput_curve(Seconds optimal, std::span<const double> factors, Seconds checkpoint_stall,
                                            Seconds restart, Seconds mtbf);

}  // namespace stepcast::cost
