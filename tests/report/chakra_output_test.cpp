// The Chakra export follows the output rules of issue 32: each rank's file goes to a unique
// temporary file (O_EXCL|O_NOFOLLOW) beside its name, synced, and all are renamed together; a link
// planted at a temporary name is never followed, no temporary file outlives a run, a killed run's
// are removed, and a folder that cannot take files gives exit 2 with the system's reason.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/chakra_trace.hpp"
#include "support/run_stepcast.hpp"  // after stepcast/: its <sys/wait.h> (waitpid) defines si_value
#include "support/scratch_folder.hpp"

namespace chakra_output_test {

using namespace stepcast;
namespace fs = std::filesystem;
using report::chakra::NodeKind;
using report::chakra::TraceNode;

namespace {

struct Folder : test::ScratchFolder {
  explicit Folder(const std::string& name)
      : ScratchFolder("stepcast_chakra_output_test_" + std::to_string(::getpid()) + "_", name) {}
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// `ranks` ranks, each one compute node of `micros` us: the smallest valid trace.
report::chakra::Traces computes(int ranks, double micros) {
  report::chakra::Traces t(static_cast<std::size_t>(ranks));
  for (auto& rank : t) {
    TraceNode n;
    n.id = 0;
    n.name = "forward";
    n.kind = NodeKind::kCompute;
    n.duration = Seconds(micros / 1e6);
    rank.push_back(n);
  }
  return t;
}

/// The host part of a temporary file's name: letters, digits and '-' of the host name, anything
/// else turned into '-' (output_temporary.hpp's ".NAME.stepcast.HOST.PID.XXXXXX").
std::string host_part() {
  std::array<char, 256> buffer{};
  REQUIRE(::gethostname(buffer.data(), buffer.size() - 1) == 0);
  std::string host;
  for (const char c : std::string(buffer.data())) host += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return host;
}

/// The id of a process that has exited and been reaped: no process runs with it.
pid_t finished_process() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

/// errno's text for creating a new file in `folder` as this process may (root ignores a folder's
/// permission bits, so the probe shows what the export will meet); empty when the file can be made.
std::string create_refusal(const fs::path& folder) {
  const fs::path probe = folder / "probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
    return {};
  }
  return std::strerror(errno);
}

}  // namespace

TEST_SUITE("report.chakra_output") {
  TEST_CASE("links planted at the old .partial names and at a temporary name are never followed") {
    Folder dir("planted");
    const fs::path victim = dir.path / "victim.txt";
    write(victim, "precious");
    const std::string host = host_part();
    const std::string pid = std::to_string(::getpid());
    // The names the writer used before (fixed) and the pattern it uses now, for each of 3 ranks
    // and the communicator file.
    std::vector<std::string> planted;
    for (const std::string name : {"stepcast.0.et", "stepcast.1.et", "stepcast.2.et", "stepcast.comm_groups.json"}) {
      planted.push_back(name + ".partial");
      planted.push_back("." + name + ".stepcast." + host + "." + pid + ".XXXXXX");
    }
    for (const auto& name : planted) fs::create_symlink(victim, dir.path / name);
    for (int run = 1; run <= 5; ++run) {
      const auto files = report::chakra::write_chakra(dir.path, computes(3, 10.0 * run), "stepcast", 2);
      // Each rank's file is a regular file of its own, and the trace reads back as written.
      for (const auto& f : files.traces) CHECK(fs::is_regular_file(fs::symlink_status(f)));
      CHECK(report::chakra::read_chakra(dir.path, 2).nodes.front().duration.value() == doctest::Approx(10e-6 * run));
    }
    CHECK(read(victim) == "precious");
    std::vector<std::string> expected = planted;
    for (const std::string name :
         {"stepcast.0.et", "stepcast.1.et", "stepcast.2.et", "stepcast.comm_groups.json", "victim.txt"}) {
      expected.push_back(name);
    }
    std::sort(expected.begin(), expected.end());
    // Nothing else: no temporary file of the five runs is left.
    CHECK(dir.names() == expected);
    for (const auto& name : planted) CHECK(fs::is_symlink(dir.path / name));
  }

  TEST_CASE("a killed run's temporary files are removed, a live process's are kept") {
    Folder dir("stale");
    const std::string host = host_part();
    const std::string gone = std::to_string(finished_process());
    const std::string stale = ".stepcast.1.et.stepcast." + host + "." + gone + ".Ab12Cd";
    const std::string stale_backup = ".stepcast.comm_groups.json.stepcast." + host + "." + gone + ".Ef34Gh-old";
    // Process 1 (init) always runs: its file may be another export's work in progress.
    const std::string live = ".stepcast.0.et.stepcast." + host + ".1.Ij56Kl";
    for (const auto& name : {stale, stale_backup, live}) write(dir.path / name, "partial");
    report::chakra::write_chakra(dir.path, computes(2, 5.0));
    CHECK(dir.names() == std::vector<std::string>{live, "stepcast.0.et", "stepcast.1.et", "stepcast.comm_groups.json"});
  }

  TEST_CASE("a refused trace leaves the previous export as it was") {
    Folder dir("refused");
    report::chakra::write_chakra(dir.path, computes(2, 5.0));
    const std::string rank1 = read(dir.path / "stepcast.1.et");
    report::chakra::Traces bad = computes(2, 7.0);
    bad[1][0].data_deps = {9};  // rank 1 has no node 9
    CHECK_THROWS_AS(report::chakra::write_chakra(dir.path, bad), InputError);
    CHECK(read(dir.path / "stepcast.1.et") == rank1);
    CHECK(dir.names() == std::vector<std::string>{"stepcast.0.et", "stepcast.1.et", "stepcast.comm_groups.json"});
  }

  TEST_CASE("the command's report commits with the traces: both written, or neither when one cannot be") {
    Folder dir("with");
    const fs::path traces = dir.path / "traces";
    const fs::path report_path = dir.path / "report.txt";
    report::chakra::write_chakra(traces, computes(2, 5.0), "stepcast", 1, {{report_path, "step time 1 s\n"}});
    CHECK(read(report_path) == "step time 1 s\n");
    CHECK(fs::exists(traces / "stepcast.1.et"));
    // A report path that is a folder cannot be replaced: no trace is left, nor the folder made for them.
    const fs::path blocked = dir.path / "blocked";
    fs::create_directories(blocked);
    const fs::path fresh = dir.path / "fresh";
    CHECK_THROWS_AS(report::chakra::write_chakra(fresh, computes(2, 5.0), "stepcast", 1, {{blocked, "report"}}),
                    InputError);
    CHECK_FALSE(fs::exists(fresh));
    CHECK(fs::is_directory(blocked));
  }

  TEST_CASE("simulate --chakra with -o and --trace writes all three") {
    Folder dir("cli_with");
    const test::CommandResult r = test::run_stepcast_with_status(
        "simulate --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 1 "
        "--plan tp=2,pp=2,dp=2 --global-batch 16 --seq 1024 --chakra " +
        (dir.path / "traces").string() + " -o " + (dir.path / "report.txt").string() + " --trace " +
        (dir.path / "trace.json").string());
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(read(dir.path / "report.txt").find("step time") != std::string::npos);
    CHECK(read(dir.path / "trace.json").find("traceEvents") != std::string::npos);
    CHECK(fs::exists(dir.path / "traces" / "stepcast.7.et"));
  }

  TEST_CASE("simulate --chakra into a folder that takes no new file: exit 2 with the system's reason, no file") {
    Folder dir("unwritable");
    const fs::path folder = dir.path / "traces";
    fs::create_directories(folder);
    write(folder / "keep.txt", "old");
    REQUIRE(::chmod(folder.c_str(), 0555) == 0);
    // Root writes in any folder whatever its bits: /proc then stands for it (it takes no files).
    fs::path target = folder;
    std::string reason = create_refusal(folder);
    if (reason.empty()) {
      target = "/proc";
      reason = create_refusal(target);
    }
    REQUIRE_FALSE(reason.empty());
    const test::CommandResult r = test::run_stepcast_with_status(
        "simulate --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 1 "
        "--plan tp=2,pp=2,dp=2 --global-batch 16 --seq 1024 --chakra " +
        target.string());
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find("\"" + target.string() + "\": " + reason) != std::string::npos, r.output);
    CHECK(r.output.find("Success") == std::string::npos);
    ::chmod(folder.c_str(), 0755);
    CHECK(dir.names() == std::vector<std::string>{"traces"});
    CHECK(read(folder / "keep.txt") == "old");
    std::vector<std::string> in_folder;
    for (const auto& e : fs::directory_iterator(folder)) in_folder.push_back(e.path().filename().string());
    CHECK(in_folder == std::vector<std::string>{"keep.txt"});
  }
}

}  // namespace chakra_output_test
