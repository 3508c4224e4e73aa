// Reading a whole input file as text: opened without blocking, checked to be a regular file of a
// sane size, then read with the system's reason for any failure.
#include "stepcast/core/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "stepcast/core/errors.hpp"

namespace stepcast {
namespace {

std::string reason(int error) { return std::generic_category().message(error); }

/// Closes the descriptor on every path out.
struct Descriptor {
  int fd;
  explicit Descriptor(int descriptor) : fd(descriptor) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { ::close(fd); }
};

}  // namespace

std::string describe_size(std::uint64_t bytes) {
  constexpr std::uint64_t kKiB = 1024;
  const auto in = [bytes](std::uint64_t unit) { return static_cast<double>(bytes) / static_cast<double>(unit); };
  if (bytes >= kKiB * kKiB * kKiB) return fmt::format("{:.1f} GiB", in(kKiB * kKiB * kKiB));
  if (bytes >= kKiB * kKiB) return fmt::format("{:.1f} MiB", in(kKiB * kKiB));
  if (bytes >= kKiB) return fmt::format("{:.1f} KiB", in(kKiB));
  return fmt::format("{} B", bytes);
}

std::string read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a pipe with no writer returns at once instead of waiting for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) throw InputError(name, {}, "cannot open file (does it exist?)");
    throw InputError(name, {}, fmt::format("cannot open file: {}", reason(error)));
  }
  const Descriptor guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(name, {}, fmt::format("cannot read file: {}", reason(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(name, {}, "is a folder, not a file: give a file inside it");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(name, {},
                     "is not a regular file (a device, pipe or socket): stepcast reads its inputs from files; save the "
                     "input to a file and give that");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    throw InputError(name, {},
                     fmt::format("is {}, larger than any input stepcast reads here (at most {}): is it the right file?",
                                 describe_size(size), describe_size(max_bytes)));
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::read(fd, text.data() + at, text.size() - at);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw InputError(name, {}, fmt::format("cannot read file: {}", reason(errno)));
    if (n == 0) break;  // the file shrank while it was read
    at += static_cast<std::size_t>(n);
  }
  text.resize(at);
  return text;
}

}  // namespace stepcast
