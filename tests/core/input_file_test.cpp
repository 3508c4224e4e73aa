// Reading input files: the error says what the path is (missing, a folder, a device, a pipe,
// too large) instead of reading it as an empty or endless file. Expected texts follow
// input_file.hpp's rules; sizes are the limits it states.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/core/input_file.hpp"
#include "stepcast/core/json_reader.hpp"
#include "support/input_error_text.hpp"
#include "support/scratch_folder.hpp"

namespace input_file_test {

namespace fs = std::filesystem;
using stepcast::test::input_error_text;

namespace {

/// A scratch folder of this file's tests.
struct Folder : stepcast::test::ScratchFolder {
  explicit Folder(const std::string& name) : ScratchFolder("stepcast_input_test_", name) {}
};

}  // namespace

TEST_SUITE("core.input_file") {
  TEST_CASE("a missing file, a folder, a device and a pipe each say what they are") {
    Folder dir("kinds");
    const std::string d = dir.path.string();
    CHECK(input_error_text([&] { (void)stepcast::read_text_file(dir.path / "none.json"); }) ==
          d + "/none.json: cannot open file (does it exist?)");
    CHECK(input_error_text([&] { (void)stepcast::read_json_file(dir.path); }) ==
          d + ": is a folder, not a file: give a file inside it");
    const std::string device =
        "/dev/zero: is not a regular file (a device, pipe or socket): stepcast reads its "
        "inputs from files; save the input to a file and give that";
    CHECK(input_error_text([] { (void)stepcast::read_json_file("/dev/zero"); }) == device);
    // A pipe with no writer: refused at once, not waited on.
    REQUIRE(::mkfifo((dir.path / "pipe").c_str(), 0600) == 0);
    CHECK(input_error_text([&] { (void)stepcast::read_text_file(dir.path / "pipe"); }).find("is not a regular file") !=
          std::string::npos);
  }

  TEST_CASE("a file larger than any input is refused with its size and the limit, before it is read") {
    Folder dir("large");
    // Sparse files: their sizes cost no disk.
    const fs::path json = dir.path / "big.json";
    std::ofstream(json).put('{');
    fs::resize_file(json, stepcast::kMaxJsonInputBytes + 1);
    CHECK(input_error_text([&] { (void)stepcast::read_json_file(json); }) ==
          json.string() +
              ": is 64.0 MiB, larger than any input stepcast reads here (at most 64.0 MiB): is it the right file?");
    const fs::path log = dir.path / "big.log";
    std::ofstream(log).put('#');
    fs::resize_file(log, std::uint64_t{3} << 30);
    CHECK(input_error_text([&] { (void)stepcast::read_text_file(log); }) ==
          log.string() +
              ": is 3.0 GiB, larger than any input stepcast reads here (at most 1.0 GiB): is it the right "
              "file?");
  }

  TEST_CASE("a file without read permission gives the system's reason") {
    if (::geteuid() == 0) return;  // root reads any file
    Folder dir("permission");
    const fs::path file = dir.path / "secret.json";
    std::ofstream(file) << "{}";
    ::chmod(file.c_str(), 0);
    CHECK(input_error_text([&] { (void)stepcast::read_text_file(file); }) ==
          file.string() + ": cannot open file: Permission denied");
  }

  TEST_CASE("describe_size: binary units, one decimal") {
    CHECK(stepcast::describe_size(900) == "900 B");
    CHECK(stepcast::describe_size(1536) == "1.5 KiB");
    CHECK(stepcast::describe_size(std::uint64_t{64} << 20) == "64.0 MiB");
  }
}

}  // namespace input_file_test
