// Reader for the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf).
#pragma once

#include <string>
#include <string_view>

#include "stepcast/calibrate/measurement.hpp"

namespace stepcast::calibrate {

/// Parses nccl-tests output that came from `origin` (a file name). Several runs may follow one
/// another. Launcher tags ("[1,0]<stdout>:", "0: ", "[rank0]:") are stripped; NCCL INFO/WARN
/// lines, launcher and MPI text, and rows cut off mid-line are skipped and listed in
/// Measurements::skipped; a run without its "# Avg bus bandwidth" line is read with a note.
/// A run's collective comes from its "# Collective test starting:" line or the command line that
/// started it, else `facts.op`, else the file name; its ranks from its "#  Rank" lines, else
/// `facts`, else the run before it. InputError (file:line and what was expected) when that fails,
/// when `facts` contradict the log, or when no row can be read.
Measurements parse_nccl_tests_log(std::string_view text, const std::string& origin, const RunFacts& facts = {});

/// The collective an nccl-tests program measures: "all_reduce_perf" -> kAllReduce.
std::optional<cost::CollectiveOp> op_of_nccl_tests_program(std::string_view program);

}  // namespace stepcast::calibrate
