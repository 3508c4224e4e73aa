// The real executable killed while it writes, and two of it writing the same files: a target on
// disk is always its old file or a run's complete new one, the files of one run land together, and
// no temporary file outlives the next run. Expected contents are the files the same commands
// write when left alone (stepcast's output is byte-identical for the same inputs).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/scratch_folder.hpp"

extern char** environ;

namespace output_kill_test {

namespace fs = std::filesystem;

namespace {

const std::string kSource = STEPCAST_SOURCE_DIR;

/// A small simulate (8 GPUs, 16 micro-batches): a trace of about 0.2 MB, a run of a few tens of ms.
std::vector<std::string> simulate_args(const fs::path& report, const fs::path& trace, int seed) {
  return {STEPCAST_BINARY,
          "simulate",
          "--workload",
          kSource + "/workloads/llama2-7b.json",
          "--topology",
          kSource + "/topologies/dgx-h100.json",
          "--nodes",
          "1",
          "--plan",
          "tp=2,pp=2,dp=2",
          "--global-batch",
          "16",
          "--seq",
          "1024",
          "--straggler",
          "cv=0.05",
          "--seed",
          std::to_string(seed),
          "-o",
          report.string(),
          "--trace",
          trace.string()};
}

pid_t start(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

/// The exit code, or -1 when a signal ended the process.
int wait_for(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// A scratch folder of this file's tests.
struct Folder : stepcast::test::ScratchFolder {
  explicit Folder(const std::string& name) : ScratchFolder("stepcast_kill_test_", name) {}
};

/// The files one run writes, and how long the run took.
struct Written {
  std::string report;
  std::string trace;
  std::chrono::microseconds took{};
};

/// Runs `args` (which write `report` and `trace`) alone, and takes its files away.
Written reference_run(const fs::path& report, const fs::path& trace, const std::vector<std::string>& args) {
  const auto begin = std::chrono::steady_clock::now();
  REQUIRE(wait_for(start(args)) == 0);
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - begin);
  Written w{read(report), read(trace), took};
  fs::remove(report);
  fs::remove(trace);
  REQUIRE(w.trace.size() > 10000);
  return w;
}

}  // namespace

TEST_SUITE("core.output_kill") {
  TEST_CASE("simulate --trace killed at 50 points: each file is the old one or the new one, whole") {
    Folder dir("kill");
    const fs::path report = dir.path / "report.txt";
    const fs::path trace = dir.path / "trace.json";
    const Written fresh = reference_run(report, trace, simulate_args(report, trace, 1));
    constexpr std::uint32_t kSeed = 20250601;
    std::mt19937 rng(kSeed);
    // Kill points spread over 1.2x a whole run, so some land after it has finished.
    const auto span = static_cast<std::uint32_t>(std::max<std::int64_t>(1000, fresh.took.count() * 6 / 5));
    int old_kept = 0;
    int replaced = 0;
    for (int trial = 0; trial < 50; ++trial) {
      write(report, "old report\n");
      write(trace, "{\"old\": true}\n");
      const pid_t pid = start(simulate_args(report, trace, 1));
      const auto delay = std::chrono::microseconds(rng() % span);
      std::this_thread::sleep_for(delay);
      ::kill(pid, SIGKILL);
      (void)wait_for(pid);
      INFO("seed ", kSeed, ", trial ", trial, ", killed after ", delay.count(), " us");
      const std::string r = read(report);
      const std::string t = read(trace);
      CHECK((r == "old report\n" || r == fresh.report));
      CHECK((t == "{\"old\": true}\n" || t == fresh.trace));
      (r == fresh.report ? replaced : old_kept) += 1;
    }
    MESSAGE("of 50 kills, ", old_kept, " left the old report and ", replaced, " the new one");
    // The next run removes what the killed ones left and leaves only its own two files.
    REQUIRE(wait_for(start(simulate_args(report, trace, 1))) == 0);
    CHECK(names_in(dir.path) == std::vector<std::string>{"report.txt", "trace.json"});
    CHECK(read(report) == fresh.report);
    CHECK(read(trace) == fresh.trace);
  }

  TEST_CASE("two runs writing the same report and trace: the files on disk are the pair of one run that exited 0") {
    Folder dir("two");
    const fs::path report = dir.path / "report.txt";
    const fs::path trace = dir.path / "trace.json";
    const Written a = reference_run(report, trace, simulate_args(report, trace, 1));
    const Written b = reference_run(report, trace, simulate_args(report, trace, 2));
    REQUIRE(a.trace != b.trace);
    REQUIRE(a.report != b.report);
    // dp=8 holds all 6.7e9 parameters' 16 bytes of state on each 80 GB GPU: simulated, then refused (exit 3).
    std::vector<std::string> refused = simulate_args(report, trace, 3);
    *std::next(std::find(refused.begin(), refused.end(), "--plan")) = "dp=8";
    for (int trial = 0; trial < 8; ++trial) {
      write(report, "old report\n");
      write(trace, "{\"old\": true}\n");
      // Even trials race two runs that both succeed, odd ones a run that succeeds and one refused.
      const bool both_succeed = trial % 2 == 0;
      const pid_t first = start(simulate_args(report, trace, 1));
      const pid_t second = start(both_succeed ? simulate_args(report, trace, 2) : refused);
      const int first_exit = wait_for(first);
      const int second_exit = wait_for(second);
      INFO("trial ", trial, ": exit codes ", first_exit, " and ", second_exit);
      CHECK(first_exit == 0);
      CHECK(second_exit == (both_succeed ? 0 : 3));
      const std::string r = read(report);
      const std::string t = read(trace);
      const bool from_first = r == a.report && t == a.trace;
      const bool from_second = r == b.report && t == b.trace;
      CHECK((from_first || (both_succeed && from_second)));
    }
    CHECK(names_in(dir.path) == std::vector<std::string>{"report.txt", "trace.json"});
  }
}

}  // namespace output_kill_test
