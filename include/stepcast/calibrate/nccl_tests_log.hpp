// Reader for the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf).
#pragma once

#include <string>
#include <string_view>

#include "stepcast/calibrate/measurement.hpp"

namespace stepcast::calibrate {

/// Parses nccl-tests output that came from `origin` (a file name). Several runs may follow one
/// another; NCCL INFO/WARN lines, MPI banners and comment lines are skipped. A run's collective
/// comes from its "# Collective test starting:" line, else the command line that started it,
/// else the file name. A run without its "# Avg bus bandwidth" line is truncated; a file
/// without result rows is not an nccl-tests log: both throw InputError naming file and line.
Measurements parse_nccl_tests_log(std::string_view text, const std::string& origin);

/// The collective an nccl-tests program measures: "all_reduce_perf" -> kAllReduce.
std::optional<cost::CollectiveOp> op_of_nccl_tests_program(std::string_view program);

}  // namespace stepcast::calibrate
