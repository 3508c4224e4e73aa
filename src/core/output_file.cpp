// Output files written whole or not at all: temporary files synced beside their targets, then
// renamed over them under a lock of their folders, the old files kept until every rename is done.
#include "stepcast/core/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "output_temporary.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast {
namespace {

using detail::system_reason;

[[noreturn]] void fail(const std::filesystem::path& target, const std::string& what, int error) {
  throw InputError(target.string(), {}, fmt::format("{}: {}", what, system_reason(error)));
}

void write_all(int fd, std::string_view content, const std::filesystem::path& target) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(target, "writing the output file failed", errno);
    content.remove_prefix(static_cast<std::size_t>(n));
  }
}

/// The target's own permission bits when it exists; 0666 less the umask for a new file, as an
/// ordinary open(O_CREAT) would give it.
mode_t mode_for(const std::filesystem::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
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

/// One output on its way: its temporary file, and what the commit did to its target so far.
struct Pending {
  std::filesystem::path target;
  std::filesystem::path temporary;
  std::filesystem::path backup;  ///< a second name of the target's previous file, empty if none
  bool existed = false;          ///< the target held a file before the commit
  bool replaced = false;
};

/// Removes what a failed commit leaves: temporary files, and the backups once restored.
void discard(const std::vector<Pending>& pending) {
  for (const Pending& p : pending) {
    if (!p.replaced) ::unlink(p.temporary.c_str());
    if (!p.backup.empty()) ::unlink(p.backup.c_str());
  }
}

/// Puts back every target replaced so far: its previous file, or no file where there was none.
/// (Where the folder's file system has no hard links, a replaced file cannot be put back.)
void restore(std::vector<Pending>& pending) {
  for (Pending& p : pending) {
    if (!p.replaced) continue;
    if (!p.backup.empty()) {
      if (::rename(p.backup.c_str(), p.target.c_str()) == 0) p.backup.clear();
    } else if (!p.existed) {
      ::unlink(p.target.c_str());
    }
    p.replaced = false;
    p.temporary.clear();
  }
}

Pending write_temporary(const OutputContent& file) {
  detail::remove_stale_temporaries(file.path);
  const detail::TemporaryFile temp = detail::create_temporary(file.path);
  Pending p{file.path, temp.path, {}, false, false};
  try {
    if (::fchmod(temp.fd, mode_for(file.path)) != 0) fail(file.path, "cannot set the output file's permissions", errno);
    write_all(temp.fd, file.content, file.path);
    if (::fsync(temp.fd) != 0) fail(file.path, "writing the output file to disk failed", errno);
  } catch (...) {
    ::close(temp.fd);
    ::unlink(temp.path.c_str());
    throw;
  }
  if (::close(temp.fd) != 0) {
    const int error = errno;
    ::unlink(temp.path.c_str());
    fail(file.path, "writing the output file failed", error);
  }
  return p;
}

}  // namespace

void write_files_atomically(const std::vector<OutputContent>& files) {
  for (const OutputContent& file : files) check_output_path(file.path, {});
  std::vector<Pending> pending;
  try {
    for (const OutputContent& file : files) pending.push_back(write_temporary(file));
  } catch (...) {
    discard(pending);
    throw;
  }
  std::vector<std::filesystem::path> folders;
  for (const Pending& p : pending) folders.push_back(detail::folder_of(p.target));
  const FolderLocks locks(folders);
  for (Pending& p : pending) {
    // A second name for the previous file, so a later failure can put it back.
    const std::filesystem::path backup = detail::backup_name(p.temporary);
    struct stat st {};
    p.existed = ::lstat(p.target.c_str(), &st) == 0;
    if (p.existed && ::link(p.target.c_str(), backup.c_str()) == 0) p.backup = backup;
    if (::rename(p.temporary.c_str(), p.target.c_str()) != 0) {
      const int error = errno;
      restore(pending);
      discard(pending);
      fail(p.target, "cannot replace the output file", error);
    }
    p.replaced = true;
  }
  for (const Pending& p : pending) {
    if (!p.backup.empty()) ::unlink(p.backup.c_str());
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_files_atomically({{path, std::string(content)}});
}

}  // namespace stepcast
