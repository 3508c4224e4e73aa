// optimizer=muon's costs beyond its state (memory.cpp holds the fp32 master and momentum): Adam's
// second moment on the parameters Muon leaves to Adam, and the Newton-Schulz GEMMs of each step.
#pragma once

#include <vector>

#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Newton-Schulz steps per matrix: Megatron-Core's muon_num_ns_steps (5, the quintic iteration).
inline constexpr double kNewtonSchulzSteps = 5.0;

/// `per` with the Adam moment Muon's plan keeps beside its momentum on the parameters outside the
/// transformer blocks (embeddings, output layer, final norm), `adam_share` of the parameters `per`
/// is applied to; `per` unchanged for any other optimizer.
StateBytesPerParameter with_muon_adam_share(StateBytesPerParameter per, const plan::Plan& plan, double adam_share);

/// The share of `parameters` (a workload's, or its dense part's) that Muon leaves to Adam.
double muon_adam_share(const workload::Workload& workload, double parameters);

/// The Newton-Schulz GEMMs one GPU runs in an optimizer=muon step (none for another optimizer).
std::vector<Operator> newton_schulz_operators(const workload::Workload& workload, const plan::Plan& plan);

}  // namespace stepcast::cost
