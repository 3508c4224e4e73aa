// Writing output files so that a user's file is never lost: every file of a command is written
// to a new temporary file beside its target, synced, and only then renamed over it; the files of
// one command replace their targets together or not at all.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast {

/// One file a command writes: where, and its whole content.
struct OutputContent {
  std::filesystem::path path;
  std::string content;
};

/// Writes every file, or none. Each goes to a temporary file created in its target's folder under
/// a new name (O_CREAT|O_EXCL|O_NOFOLLOW: a planted file or link at that name is never opened),
/// is synced to disk, and then, with the targets' folders locked against another stepcast
/// committing there, is renamed over its target; a failed rename puts back the targets already
/// replaced. The temporary files a killed run left beside a target are removed first. A target
/// keeps its permission bits; a new one gets 0666 less the umask. Throws InputError naming the
/// path and the system's reason (errno).
void write_files_atomically(const std::vector<OutputContent>& files);

/// write_files_atomically with one file.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Refuses, before any work is done, an output path that cannot be replaced safely: a folder, a
/// symbolic link, a device, pipe or socket (only a regular file or a new name is written), a
/// folder that does not exist, or one this process cannot create files in. `option` ("-o",
/// "--trace") names the option in the message; InputError naming the path.
void check_output_path(const std::filesystem::path& path, std::string_view option);

/// Whether two paths name the same file: the same inode when both exist, else the same absolute
/// path once "." and ".." and symbolic links of its folders are resolved.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace stepcast
