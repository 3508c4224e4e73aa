// The temporary files of an output: unique names beside the target that say which process made
// them, so that a later run can tell a killed run's leftovers from a live run's work.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stepcast::detail {

/// A temporary file opened for writing (descriptor `fd`) at `path`.
struct TemporaryFile {
  int fd = -1;
  std::filesystem::path path;
};

/// Creates ".NAME.stepcast.HOST.PID.XXXXXX" beside `target` (NAME its file name), opened with
/// O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600. Throws InputError naming the target and errno's text.
TemporaryFile create_temporary(const std::filesystem::path& target);

/// A name beside `temporary` for the target's previous file while the outputs are committed.
std::filesystem::path backup_name(const std::filesystem::path& temporary);

/// Removes the temporary files of `targets` whose process, on this host, no longer runs (a run
/// killed before its rename). A live process's files, and other hosts', are left alone. Each
/// folder is read once, however many of the targets are in it.
void remove_stale_temporaries(const std::vector<std::filesystem::path>& targets);

/// The folder of `path` ("." for a bare file name).
std::filesystem::path folder_of(const std::filesystem::path& path);

/// errno's text ("Permission denied") for `error`.
std::string system_reason(int error);

}  // namespace stepcast::detail
