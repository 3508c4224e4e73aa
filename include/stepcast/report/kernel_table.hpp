// The kernel table of a prediction: one row per operator of the critical pipeline stage with its
// shape, FLOPs, bytes, what bounds it, its time and its share of the step (`predict --explain`).
#pragma once

#include <string>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/report/table.hpp"

namespace stepcast::report {

/// The pass an operator runs in, as its tables name it: the optimizer's kernels (listed by the
/// compute model as one forward stream, once per step) as "optimizer step".
std::string pass_name(const cost::Operator& op);

/// Table "kernels": every operator of the compute estimate's kernel list (empty unless it was
/// made with explain and the operator model), with its share of `step_time`.
Table kernel_table(const cost::ComputeEstimate& compute, Seconds step_time);

}  // namespace stepcast::report
