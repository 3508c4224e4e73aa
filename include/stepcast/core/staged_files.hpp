// Output files that their maker writes piece by piece, from several threads, and that then replace
// their targets together: each goes to a unique temporary file beside its target, is synced to
// disk, and is renamed over the target only once every file of the set is complete.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <vector>

namespace stepcast {

/// The files of one command's output on their way to their targets (write_files_atomically's
/// rules, output_file.hpp). Files are opened, appended to and closed by index; different indices
/// may be used from different threads at once. A set destroyed before commit() leaves no file.
class StagedFiles {
 public:
  /// Refuses any target that cannot be replaced safely (check_output_path), and removes the
  /// temporary files killed runs left beside the targets.
  explicit StagedFiles(const std::vector<std::filesystem::path>& targets);
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();

  /// Creates file `i`'s temporary file (O_EXCL|O_NOFOLLOW under a new name: nothing planted
  /// there is opened), with the permissions the target keeps or a new file gets.
  void open(std::size_t i);
  /// Appends `bytes` to file `i`, open.
  void append(std::size_t i, std::string_view bytes);
  /// Ends file `i`: its writing to disk starts now and is waited for by a later close or by
  /// commit(), so the disk works while the next files are made.
  void close(std::size_t i);
  /// open, append and close in one.
  void write(std::size_t i, std::string_view content);

  /// Waits until every file (each opened and closed) is on disk, then, with the targets' folders locked against
  /// another stepcast committing there, renames each over its target; a failed rename puts back the
  /// targets already replaced. Throws InputError naming the path and the system's reason.
  void commit();

 private:
  struct File {
    std::filesystem::path target;
    std::filesystem::path temporary;  ///< empty once renamed over the target
    std::filesystem::path backup;     ///< a second name of the target's previous file, empty if none
    int fd = -1;
    bool existed = false;  ///< the target held a file before the commit
    bool replaced = false;
  };

  void sync(std::size_t i);
  void restore();
  void discard();

  std::vector<File> files_;
  mode_t new_mode_;                   ///< a new target's permissions: 0666 less the umask
  std::mutex mutex_;                  ///< guards unsynced_
  std::deque<std::size_t> unsynced_;  ///< closed, on their way to disk, oldest first
};

}  // namespace stepcast
