// Text helpers of the nccl-tests reader: the launcher tags in front of a line, tokens and numbers
// as nccl-tests prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast::calibrate::detail {

/// The line without the tags launchers put in front of each line of output, and without the
/// blanks around it: OpenMPI's `mpirun --tag-output` "[1,0]<stdout>:", torchrun's "[rank0]:" and
/// "[default0]:", Slurm's `srun --label` "0: " (blank-padded to the widest task number: Slurm's
/// io label is "%*d: ").
std::string_view strip_launcher_tags(std::string_view line);

/// The line without OpenMPI `--tag-output` tags ("[1,0]<stdout>:") found inside it, where OpenMPI
/// forwarded one line of a rank's output in pieces and tagged each ("node-[1,0]<stdout>:00000C"
/// for the host node-00000C). Empty when the line has none (read the line as it is).
std::optional<std::string> without_inner_mpi_tags(std::string_view line);

/// Whether the line is NCCL's own debug output ("host:pid:tid [0] NCCL INFO ...", NCCL_DEBUG).
bool is_nccl_debug_line(std::string_view line);

/// The blank-separated words of a line (spaces, tabs and other C-locale white space).
std::vector<std::string> split_words(std::string_view line);

/// A whole number written in full ("-1", "4096"); none otherwise.
std::optional<std::int64_t> to_integer(std::string_view word);

/// A finite decimal number ("36.90", "1e-07", "1.67772e+07"); none otherwise.
std::optional<double> to_number(std::string_view word);

}  // namespace stepcast::calibrate::detail
