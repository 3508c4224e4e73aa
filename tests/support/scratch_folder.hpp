// A fresh, empty folder under the system's temporary directory for one test case, removed at its
// end: `prefix` keeps the folders of different test files apart when they run at once.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace stepcast::test {

struct ScratchFolder {
  std::filesystem::path path;
  ScratchFolder(const std::string& prefix, const std::string& name)
      : path(std::filesystem::temp_directory_path() / (prefix + name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  /// The names of what it holds, sorted.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace stepcast::test
