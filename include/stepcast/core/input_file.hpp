// Reading a whole input file as text, with the errors every reader gives for a file that is
// missing, unreadable, not a regular file, or larger than any real input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace stepcast {

/// The most a text input may hold: 1 GiB, beyond the largest nccl-tests log with NCCL's debug
/// output of thousands of ranks, and small enough to hold in memory beside its parse.
inline constexpr std::uint64_t kMaxTextInputBytes = std::uint64_t{1} << 30;

/// The most a JSON input may hold: 64 MiB, beyond any topology, workload, plan, calibration or
/// measurement file by a wide margin; its parsed form takes several times its size in memory.
inline constexpr std::uint64_t kMaxJsonInputBytes = std::uint64_t{64} << 20;

/// The file's bytes. InputError naming the file, with the cause: it does not exist, cannot be
/// opened (the system's reason), is a folder, is not a regular file (a device such as /dev/zero,
/// a pipe or a socket: opened without waiting for a writer, never read), or holds more than
/// `max_bytes`.
std::string read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes = kMaxTextInputBytes);

/// "3.5 GiB", "12 MiB", "900 B": a file size for messages.
std::string describe_size(std::uint64_t bytes);

}  // namespace stepcast
