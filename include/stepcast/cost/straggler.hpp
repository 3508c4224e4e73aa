// Stragglers: a synchronous step ends when its slowest GPU ends, so its expected time is the
// expected maximum of the GPUs' step times. Computed by integrating the order-statistic density.
#pragma once

#include <string>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// e_n = E[max of n independent standard normal draws], by numerical integration of the density of
/// the largest order statistic, n phi(x) Phi(x)^(n-1) (David and Nagaraja, "Order Statistics",
/// eq. 2.1.1). Deterministic (composite Simpson rule), no sampling. e_1 = 0, e_2 = 1/sqrt(pi),
/// e_3 = 3/(2 sqrt(pi)). Precondition: n >= 1.
double expected_max_standard_normal(int n);

/// The expected step of `gpus` GPUs that wait for each other, against the mean step of one GPU.
struct StragglerEstimate {
  int gpus = 1;
  Seconds mean_step;      ///< mean of one GPU's step time
  Seconds expected_step;  ///< E[max over the GPUs]
  double slowdown = 1.0;  ///< expected_step / mean_step
  Explanation explanation;
};

/// Per-GPU step times independent and normal with mean `mean` and standard deviation `stddev`:
/// E[max] = mu + sigma e_n. Preconditions: mean > 0, stddev >= 0, gpus >= 1.
StragglerEstimate normal_stragglers(Seconds mean, Seconds stddev, int gpus);

/// Per-GPU step times independent and log-normal with mean `mean` and coefficient of variation
/// `cv` (stddev / mean): a log-normal is exp of a normal with s^2 = ln(1 + cv^2) and
/// m = ln(mean) - s^2 / 2, and exp is increasing, so the maximum is exp(m + s x) at the standard
/// normal maximum: E[max] = integral of exp(m + s x) n phi(x) Phi(x)^(n-1) dx. Right-skewed, with
/// no negative times, as measured step-time distributions are. Preconditions: mean > 0, cv >= 0, gpus >= 1.
StragglerEstimate lognormal_stragglers(Seconds mean, double cv, int gpus);

/// Each GPU independently runs a step `slow_factor` times slower with probability `slow_probability`
/// (a thermally throttled or degraded GPU), otherwise at `mean`: the step is slow when any GPU is,
/// P = 1 - (1 - p)^n (independent Bernoulli draws), so E[step] = mean x (1 + (k - 1) P).
/// Preconditions: mean > 0, 0 <= p <= 1, slow_factor >= 1, gpus >= 1.
StragglerEstimate slow_fraction_stragglers(Seconds mean, double slow_probability, double slow_factor, int gpus);

}  // namespace stepcast::cost
