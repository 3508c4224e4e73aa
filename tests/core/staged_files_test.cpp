// Staged output files: written by index from several threads, replacing their targets together;
// a rename that fails puts back what was replaced, and a set never committed leaves no file. The
// expected texts are rename(2)'s errno (EISDIR) and the rules of staged_files.hpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stepcast/core/staged_files.hpp"
#include "support/input_error_text.hpp"
#include "support/scratch_folder.hpp"

namespace staged_files_test {

namespace fs = std::filesystem;
using stepcast::test::input_error_text;

namespace {

struct Folder : stepcast::test::ScratchFolder {
  explicit Folder(const std::string& name) : ScratchFolder("stepcast_staged_test_", name) {}
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

TEST_SUITE("core.staged_files") {
  TEST_CASE("files written piece by piece from four threads all land, nothing else left") {
    // 64 files, more than the files kept unsynced at once (16), so closes wait for older files.
    Folder dir("threads");
    std::vector<fs::path> targets;
    for (int i = 0; i < 64; ++i) targets.push_back(dir.path / ("rank." + std::to_string(i)));
    write(targets[5], "old");
    stepcast::StagedFiles staged(targets);
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&staged, t] {
          for (std::size_t i = static_cast<std::size_t>(t); i < 64; i += 4) {
            staged.open(i);
            staged.append(i, "file ");
            staged.append(i, std::to_string(i));
            staged.close(i);
          }
        });
      }
    }
    staged.commit();
    for (std::size_t i = 0; i < 64; ++i) CHECK(read(targets[i]) == "file " + std::to_string(i));
    CHECK(dir.names().size() == 64);
  }

  TEST_CASE("a rename that fails puts back the target already replaced, with the system's reason") {
    Folder dir("rename");
    write(dir.path / "a.txt", "old a");
    stepcast::StagedFiles staged({dir.path / "a.txt", dir.path / "b.txt"});
    staged.write(0, "new a");
    staged.write(1, "new b");
    // b.txt becomes a folder after the checks: rename(2) refuses a file over a folder (EISDIR).
    fs::create_directories(dir.path / "b.txt" / "inside");
    CHECK(input_error_text([&] { staged.commit(); }) ==
          (dir.path / "b.txt").string() + ": cannot replace the output file: Is a directory");
    CHECK(read(dir.path / "a.txt") == "old a");
    CHECK(dir.names() == std::vector<std::string>{"a.txt", "b.txt"});
  }

  TEST_CASE("a set destroyed before its commit leaves the targets as they were and no temporary file") {
    Folder dir("abandoned");
    write(dir.path / "a.txt", "old a");
    {
      stepcast::StagedFiles staged({dir.path / "a.txt", dir.path / "b.txt"});
      staged.write(0, "new a");
      staged.open(1);
      staged.append(1, "half of b");
    }
    CHECK(read(dir.path / "a.txt") == "old a");
    CHECK(dir.names() == std::vector<std::string>{"a.txt"});
  }
}

}  // namespace staged_files_test
