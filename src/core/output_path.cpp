// The checks an output path passes before a command does its work: only a regular file or a new
// name in a folder this process can write in is ever replaced.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "output_temporary.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"

namespace stepcast {

void check_output_path(const std::filesystem::path& path, std::string_view option) {
  const std::string of = option.empty() ? std::string() : fmt::format(" of {}", option);
  const auto refuse = [&](const std::string& why) {
    throw InputError(path.string(), {}, fmt::format("cannot write the output file{}: {}", of, why));
  };
  if (path.empty()) throw InputError(std::string(option), {}, "needs a file name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse("it is a folder; give the name of a file (new or to replace)");
    if (S_ISLNK(st.st_mode)) {
      refuse(
          "it is a symbolic link, and stepcast replaces an output by renaming a new file over it, which would replace "
          "the link and leave the file it points to as it was: give that file's own path");
    }
    if (!S_ISREG(st.st_mode)) {
      refuse(
          "it is not a regular file (a device, pipe or socket); stepcast writes only regular files, replacing them "
          "whole (for standard output, give -o -)");
    }
  } else if (errno != ENOENT) {
    refuse(detail::system_reason(errno));
  }
  const std::filesystem::path folder = detail::folder_of(path);
  struct stat folder_st {};
  if (::stat(folder.c_str(), &folder_st) != 0) {
    const int error = errno;
    if (error == ENOENT) refuse(fmt::format("the folder \"{}\" does not exist", folder.string()));
    refuse(fmt::format("the folder \"{}\": {}", folder.string(), detail::system_reason(error)));
  }
  if (!S_ISDIR(folder_st.st_mode)) refuse(fmt::format("\"{}\" is not a folder", folder.string()));
  // A new file is a new entry of the folder: it needs write and search permission there.
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    refuse(fmt::format("cannot create files in the folder \"{}\": {}", folder.string(), detail::system_reason(errno)));
  }
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) {
    const bool same = std::filesystem::equivalent(a, b, ec);
    return !ec && same;
  }
  const auto resolved = [](const std::filesystem::path& p) {
    std::error_code ignored;
    const std::filesystem::path absolute = std::filesystem::absolute(p, ignored);
    return std::filesystem::weakly_canonical(absolute, ignored);
  };
  return resolved(a) == resolved(b);
}

}  // namespace stepcast
