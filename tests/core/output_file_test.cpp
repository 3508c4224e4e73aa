// Output files: written whole beside their targets and renamed over them, never through a link or
// into a device, folder or missing folder, all of a command's files or none, and a killed run's
// temporary files removed by the next run. The expected texts are the rules of output_file.hpp.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stepcast/core/output_file.hpp"
#include "support/input_error_text.hpp"
#include "support/scratch_folder.hpp"

namespace output_file_test {

namespace fs = std::filesystem;
using stepcast::test::input_error_text;

namespace {

/// A scratch folder of this file's tests.
struct Folder : stepcast::test::ScratchFolder {
  explicit Folder(const std::string& name) : ScratchFolder("stepcast_output_test_", name) {}
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// The host part of a temporary file's name: the host name with anything but letters, digits and
/// '-' turned into '-' (output_temporary.cpp).
std::string host_part() {
  std::array<char, 256> buffer{};
  REQUIRE(::gethostname(buffer.data(), buffer.size() - 1) == 0);
  std::string host;
  for (const char c : std::string(buffer.data())) host += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return host;
}

/// The id of a process that has exited (and been reaped): no process runs with it.
pid_t finished_process() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

}  // namespace

TEST_SUITE("core.output_file") {
  TEST_CASE("a file is written whole, replaces the old one, keeps its permissions and leaves nothing else") {
    Folder dir("replace");
    const fs::path out = dir.path / "report.txt";
    write(out, "old");
    ::chmod(out.c_str(), 0640);
    stepcast::write_file_atomically(out, "new content");
    CHECK(read(out) == "new content");
    struct stat st {};
    REQUIRE(::stat(out.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(dir.names() == std::vector<std::string>{"report.txt"});
  }

  TEST_CASE("a new file gets 0666 less the umask, as open(O_CREAT) gives") {
    Folder dir("mode");
    const mode_t old = ::umask(027);
    stepcast::write_file_atomically(dir.path / "new.txt", "x");
    ::umask(old);
    struct stat st {};
    REQUIRE(::stat((dir.path / "new.txt").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);  // 0666 & ~027
  }

  TEST_CASE("a folder, a symbolic link, a device or pipe and a missing folder are refused, nothing written") {
    Folder dir("refuse");
    const std::string d = dir.path.string();
    CHECK(input_error_text([&] { stepcast::write_file_atomically(dir.path, "x"); }) ==
          d + ": cannot write the output file: it is a folder; give the name of a file (new or to replace)");
    write(dir.path / "real.txt", "keep");
    fs::create_symlink(dir.path / "real.txt", dir.path / "link.txt");
    CHECK(
        input_error_text([&] { stepcast::check_output_path(dir.path / "link.txt", "-o"); }) ==
        d + "/link.txt: cannot write the output file of -o: it is a symbolic link, and stepcast replaces an output by "
            "renaming a new file over it, which would replace the link and leave the file it points to as it was: "
            "give that file's own path");
    REQUIRE(::mkfifo((dir.path / "pipe").c_str(), 0600) == 0);
    CHECK(input_error_text([&] { stepcast::write_file_atomically(dir.path / "pipe", "x"); }) ==
          d + "/pipe: cannot write the output file: it is not a regular file (a device, pipe or socket); stepcast "
              "writes only regular files, replacing them whole (for standard output, give -o -)");
    CHECK(input_error_text([] { stepcast::check_output_path("/dev/null", "-o"); }).find("it is not a regular file") !=
          std::string::npos);
    CHECK(input_error_text([&] { stepcast::check_output_path(dir.path / "no" / "x.json", "--trace"); }) ==
          d + "/no/x.json: cannot write the output file of --trace: the folder \"" + d + "/no\" does not exist");
    CHECK(read(dir.path / "real.txt") == "keep");
    CHECK(fs::is_symlink(dir.path / "link.txt"));
    CHECK(dir.names() == std::vector<std::string>{"link.txt", "pipe", "real.txt"});
  }

  TEST_CASE("a folder the process cannot create files in: the system's reason, never \"Success\"") {
    // /proc takes no new files; a user without root is refused by access(), root by the open itself.
    const std::string err = input_error_text([] { stepcast::write_file_atomically("/proc/stepcast-output", "x"); });
    CHECK(err.rfind("/proc/stepcast-output: cannot ", 0) == 0);
    CHECK(err.find("Success") == std::string::npos);
    const bool refused_by_permission =
        err.find("cannot create files in the folder \"/proc\": Permission denied") != std::string::npos;
    const bool refused_by_open =
        err.find("cannot create a temporary file in the folder \"/proc\": ") != std::string::npos;
    CHECK_MESSAGE((refused_by_permission || refused_by_open), err);
  }

  TEST_CASE("two files are written together, or neither when one of them cannot be") {
    Folder dir("together");
    write(dir.path / "report.txt", "old report");
    stepcast::write_files_atomically({{dir.path / "report.txt", "new report"}, {dir.path / "trace.json", "{}"}});
    CHECK(read(dir.path / "report.txt") == "new report");
    CHECK(read(dir.path / "trace.json") == "{}");
    const std::string err = input_error_text([&] {
      stepcast::write_files_atomically({{dir.path / "report.txt", "newer"}, {dir.path / "missing" / "t.json", "{}"}});
    });
    CHECK(err.find("the folder \"" + (dir.path / "missing").string() + "\" does not exist") != std::string::npos);
    CHECK(read(dir.path / "report.txt") == "new report");
    CHECK(dir.names() == std::vector<std::string>{"report.txt", "trace.json"});
  }

  TEST_CASE("a killed run's temporary files are removed by the next write, a live process's and another host's kept") {
    Folder dir("stale");
    const std::string host = host_part();
    const pid_t gone = finished_process();
    const std::string stale = ".out.json.stepcast." + host + "." + std::to_string(gone) + ".Ab12Cd";
    const std::string stale_backup = stale + "-old";
    // Process 1 (init) always runs; its file is not ours to remove.
    const std::string live = ".out.json.stepcast." + host + ".1.Ef34Gh";
    const std::string other_host = ".out.json.stepcast.elsewhere-" + host + "." + std::to_string(gone) + ".Ij56Kl";
    const std::string other_output = ".other.json.stepcast." + host + "." + std::to_string(gone) + ".Mn78Op";
    for (const auto& name : {stale, stale_backup, live, other_host, other_output}) write(dir.path / name, "partial");
    stepcast::write_file_atomically(dir.path / "out.json", "{}");
    std::vector<std::string> left = {live, other_host, other_output, "out.json"};
    std::sort(left.begin(), left.end());
    CHECK(dir.names() == left);
  }

  TEST_CASE("a link planted where a temporary file could go is never followed") {
    // The temporary name is unique (O_EXCL): plant links at every name a run could have left,
    // each pointing at a file that must stay as it is.
    Folder dir("planted");
    write(dir.path / "victim.txt", "precious");
    const std::string host = host_part();
    fs::create_symlink(dir.path / "victim.txt",
                       dir.path / (".out.txt.stepcast." + host + "." + std::to_string(::getpid()) + ".XXXXXX"));
    fs::create_symlink(dir.path / "victim.txt", dir.path / "out.txt.partial");
    for (int i = 0; i < 20; ++i) stepcast::write_file_atomically(dir.path / "out.txt", "report " + std::to_string(i));
    CHECK(read(dir.path / "victim.txt") == "precious");
    CHECK(read(dir.path / "out.txt") == "report 19");
  }

  TEST_CASE("same_file: the same inode under two names, and two spellings of one new path") {
    Folder dir("same");
    write(dir.path / "a.json", "{}");
    fs::create_hard_link(dir.path / "a.json", dir.path / "b.json");
    CHECK(stepcast::same_file(dir.path / "a.json", dir.path / "b.json"));
    CHECK(stepcast::same_file(dir.path / "new.json", dir.path / "." / "sub" / ".." / "new.json"));
    CHECK_FALSE(stepcast::same_file(dir.path / "a.json", dir.path / "new.json"));
  }
}

}  // namespace output_file_test
