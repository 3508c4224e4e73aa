// Output files written whole or not at all: temporary files synced beside their targets, then
// renamed over them under a lock of their folders, the old files kept until every rename is done.
#include "stepcast/core/staged_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "output_temporary.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"

namespace stepcast {
namespace {

// Files closed but not yet waited for: enough for the disk to write while the next ones are made,
// few enough to stay far below the open-file limit.
constexpr std::size_t kUnsyncedFiles = 16;

[[noreturn]] void fail_on(const std::filesystem::path& target, const std::string& what, int error) {
  throw InputError(target.string(), {}, fmt::format("{}: {}", what, detail::system_reason(error)));
}

/// 0666 less the umask, as an ordinary open(O_CREAT) gives a new file. (umask() both reads and
/// sets, so it is read once, before any thread writes.)
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

/// Exclusive flock()s on the targets' folders, taken in one order (device, inode) so two
/// stepcast processes committing to the same folders serialise instead of interleaving their
/// renames. Best effort: a folder that cannot be opened or locked (no read permission, a file
/// system without flock) is committed to without the lock.
class FolderLocks {
 public:
  explicit FolderLocks(const std::vector<std::filesystem::path>& folders) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, int>> opened;
    for (const auto& folder : folders) {
      const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      struct stat st {};
      if (fd < 0) continue;
      if (::fstat(fd, &st) != 0) {
        ::close(fd);
        continue;
      }
      opened.push_back({{st.st_dev, st.st_ino}, fd});
    }
    std::sort(opened.begin(), opened.end());
    for (std::size_t i = 0; i < opened.size(); ++i) {
      if (i > 0 && opened[i].first == opened[i - 1].first) {
        ::close(opened[i].second);
        continue;
      }
      while (::flock(opened[i].second, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds_.push_back(opened[i].second);
    }
  }
  FolderLocks(const FolderLocks&) = delete;
  FolderLocks& operator=(const FolderLocks&) = delete;
  ~FolderLocks() {
    for (const int fd : fds_) {
      ::fsync(fd);  // the renames themselves reach the disk
      ::close(fd);  // closing releases the lock
    }
  }

 private:
  std::vector<int> fds_;
};

}  // namespace

StagedFiles::StagedFiles(const std::vector<std::filesystem::path>& targets) : new_mode_(new_file_mode()) {
  for (const auto& target : targets) check_output_path(target, {});
  detail::remove_stale_temporaries(targets);
  for (const auto& target : targets) files_.push_back({target, {}, {}, -1, false, false});
}

StagedFiles::~StagedFiles() { discard(); }

void StagedFiles::open(std::size_t i) {
  File& f = files_.at(i);
  const detail::TemporaryFile temp = detail::create_temporary(f.target);
  f.fd = temp.fd;
  f.temporary = temp.path;
  // A replaced target keeps its own permission bits.
  struct stat st {};
  const mode_t mode = ::stat(f.target.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? st.st_mode & 07777 : new_mode_;
  if (::fchmod(f.fd, mode) != 0) fail_on(f.target, "cannot set the output file's permissions", errno);
}

void StagedFiles::append(std::size_t i, std::string_view bytes) {
  const File& f = files_.at(i);
  while (!bytes.empty()) {
    const ssize_t n = ::write(f.fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_on(f.target, "writing the output file failed", errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void StagedFiles::close(std::size_t i) {
  // Only a start: the wait, and any error, comes with fsync (sync).
  ::sync_file_range(files_.at(i).fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  std::vector<std::size_t> due;
  {
    const std::lock_guard lock(mutex_);
    unsynced_.push_back(i);
    while (unsynced_.size() > kUnsyncedFiles) {
      due.push_back(unsynced_.front());
      unsynced_.pop_front();
    }
  }
  for (const std::size_t j : due) sync(j);
}

void StagedFiles::write(std::size_t i, std::string_view content) {
  open(i);
  append(i, content);
  close(i);
}

void StagedFiles::sync(std::size_t i) {
  File& f = files_[i];
  if (::fsync(f.fd) != 0) fail_on(f.target, "writing the output file to disk failed", errno);
  const int fd = std::exchange(f.fd, -1);
  if (::close(fd) != 0) fail_on(f.target, "writing the output file failed", errno);
}

void StagedFiles::commit() {
  while (!unsynced_.empty()) {
    sync(unsynced_.front());
    unsynced_.pop_front();
  }
  std::vector<std::filesystem::path> folders;
  for (const File& f : files_) folders.push_back(detail::folder_of(f.target));
  const FolderLocks locks(folders);
  for (File& f : files_) {
    // A second name for the previous file, so a later failure can put it back.
    const std::filesystem::path backup = detail::backup_name(f.temporary);
    struct stat st {};
    f.existed = ::lstat(f.target.c_str(), &st) == 0;
    if (f.existed && ::link(f.target.c_str(), backup.c_str()) == 0) f.backup = backup;
    if (::rename(f.temporary.c_str(), f.target.c_str()) != 0) {
      const int error = errno;
      restore();
      discard();
      fail_on(f.target, "cannot replace the output file", error);
    }
    f.temporary.clear();
    f.replaced = true;
  }
  for (File& f : files_) {
    if (!f.backup.empty()) ::unlink(f.backup.c_str());
    f.backup.clear();
  }
}

/// Removes what is not committed: temporary files (closed first), and backups.
void StagedFiles::discard() {
  for (File& f : files_) {
    if (f.fd >= 0) ::close(std::exchange(f.fd, -1));
    if (!f.temporary.empty()) ::unlink(f.temporary.c_str());
    if (!f.backup.empty()) ::unlink(f.backup.c_str());
    f.temporary.clear();
    f.backup.clear();
  }
}

/// Puts back every target replaced so far: its previous file, or no file where there was none.
/// (Where the folder's file system has no hard links, a replaced file cannot be put back.)
void StagedFiles::restore() {
  for (File& f : files_) {
    if (!f.replaced) continue;
    if (!f.backup.empty()) {
      if (::rename(f.backup.c_str(), f.target.c_str()) == 0) f.backup.clear();
    } else if (!f.existed) {
      ::unlink(f.target.c_str());
    }
    f.replaced = false;
  }
}

}  // namespace stepcast
