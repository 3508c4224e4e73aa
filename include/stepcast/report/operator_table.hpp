// The operator list of `stepcast operators`: every operator the compute model prices for one
// micro-batch, with its shape, FLOPs and bytes in numbers a program reads (stepcast-kernel-bench
// times each row) and, for memory-bound operators, the kernel the bench runs in its place.
#pragma once

#include <string>
#include <vector>

#include "stepcast/calibrate/bench_operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/report/table.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// A report with one table, "operators" (columns in the README, "stepcast operators"): one row
/// per operator, GEMM shapes and element counts as integers; notes name the workload, the GPU
/// and the plan.
Report operator_report(const workload::Workload& workload, const plan::Plan& plan, const std::string& gpu,
                       const std::vector<calibrate::BenchOperator>& operators);

}  // namespace stepcast::report
