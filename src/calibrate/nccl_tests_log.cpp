// The nccl-tests text reader: a line-by-line state machine over the runs in a log. Formats
// follow nccl-tests' src/common.cu (header, "#  Rank" lines, result rows, "# Avg bus bandwidth").
#include "stepcast/calibrate/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>
#include <sstream>
#include <utility>

#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {
namespace {

using cost::CollectiveOp;

// Program names as nccl-tests builds them (its Makefile), with the collective each measures.
constexpr std::array<std::pair<std::string_view, CollectiveOp>, 7> kPrograms{{
    {"all_reduce_perf", CollectiveOp::kAllReduce},
    {"all_gather_perf", CollectiveOp::kAllGather},
    {"reduce_scatter_perf", CollectiveOp::kReduceScatter},
    {"broadcast_perf", CollectiveOp::kBroadcast},
    {"reduce_perf", CollectiveOp::kReduce},
    {"alltoall_perf", CollectiveOp::kAllToAll},
    {"sendrecv_perf", CollectiveOp::kSendRecv},
}};

// Spellings of the collectives in file names, most specific first ("reduce" last).
constexpr std::array<std::pair<std::string_view, CollectiveOp>, 11> kFileNameHints{{
    {"all_reduce", CollectiveOp::kAllReduce},       {"allreduce", CollectiveOp::kAllReduce},
    {"all_gather", CollectiveOp::kAllGather},       {"allgather", CollectiveOp::kAllGather},
    {"reduce_scatter", CollectiveOp::kReduceScatter}, {"reducescatter", CollectiveOp::kReduceScatter},
    {"alltoall", CollectiveOp::kAllToAll},          {"all_to_all", CollectiveOp::kAllToAll},
    {"sendrecv", CollectiveOp::kSendRecv},          {"broadcast", CollectiveOp::kBroadcast},
    {"reduce", CollectiveOp::kReduce},
}};

constexpr std::string_view kColumnsWithRoot =
    "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";
constexpr std::string_view kColumnsWithoutRoot =
    "size count type redop time algbw busbw #wrong time algbw busbw #wrong";

std::string_view program_of(CollectiveOp op) {
  for (const auto& [name, program_op] : kPrograms) {
    if (program_op == op) return name;
  }
  STEPCAST_UNREACHABLE("every collective has an nccl-tests program");
}

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string token; in >> token;) out.push_back(token);
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !(v >= 0.0)) return std::nullopt;
  return v;
}

// A run being read, with what is known about where it came from.
struct OpenRun {
  MeasuredCollective run;
  std::set<std::string> hosts;
  bool in_table = false;
  bool has_root_column = true;
  bool finished = false;
};

class LogParser {
 public:
  LogParser(std::string_view text, std::string origin) : text_(text), origin_(std::move(origin)) {}

  Measurements parse() {
    if (text_.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      throw InputError(origin_, {}, "the file is empty, expected nccl-tests output (all_reduce_perf and the like)");
    }
    std::size_t pos = 0;
    while (pos < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos), text_.size());
      std::string_view line = text_.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no_;
      read_line(line);
      if (end == text_.size()) break;
      pos = end + 1;
    }
    if (open_) close_run_at_end();
    if (result_.runs.empty()) {
      throw InputError(origin_, {},
                       "not an nccl-tests log: no result table found (expected a \"#  size  count  type ...\" "
                       "header followed by result rows, as all_reduce_perf and the other nccl-tests programs print)");
    }
    result_.file = origin_;
    return std::move(result_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw InputError(origin_, std::to_string(line), message);
  }

  void read_line(std::string_view line) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) return;
    line = line.substr(first);
    if (line.front() == '#') {
      read_comment(line.substr(1));
      return;
    }
    const std::vector<std::string> tokens = split(line);
    if (tokens.empty()) return;  // only separators that are not blanks, e.g. "\r" or NUL bytes
    if (open_ && open_->in_table && to_int(tokens.front())) {
      read_row(tokens);
      return;
    }
    // A command line such as "./build/all_reduce_perf -b 8 -e 1G" or "mpirun ... all_reduce_perf".
    for (const std::string& token : tokens) {
      const std::string name = std::filesystem::path(token).filename().string();
      if (op_of_nccl_tests_program(name)) pending_program_ = name;
    }
  }

  void read_comment(std::string_view body) {
    const std::vector<std::string> tokens = split(body);
    if (tokens.empty()) return;
    const auto trimmed = body.substr(std::min(body.find_first_not_of(' '), body.size()));
    if (starts_with(trimmed, "Collective test starting:")) {
      pending_program_ = tokens.back();
    } else if (tokens.front() == "nThread") {
      start_run();
    } else if (tokens.front() == "Rank" && tokens.size() >= 10) {
      read_rank(tokens);
    } else if (tokens.front() == "size" && std::find(tokens.begin(), tokens.end(), "busbw") != tokens.end()) {
      if (!open_) start_run();
      if (!open_->run.points.empty()) fail(line_no_, "a second column header inside one run");
      open_->in_table = true;
      open_->has_root_column = std::find(tokens.begin(), tokens.end(), "root") != tokens.end();
    } else if (starts_with(trimmed, "Avg bus bandwidth")) {
      read_average(tokens);
    }
  }

  void start_run() {
    if (open_) close_run_before(line_no_);
    open_.emplace();
    open_->run.file = origin_;
    open_->run.first_line = line_no_;
    open_->run.program = pending_program_;
    pending_program_.clear();
  }

  // "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"
  void read_rank(const std::vector<std::string>& tokens) {
    if (!open_) start_run();
    const auto on = std::find(tokens.begin(), tokens.end(), "on");
    const auto device = std::find(tokens.begin(), tokens.end(), "device");
    if (on == tokens.end() || on + 1 == tokens.end() || device == tokens.end()) {
      fail(line_no_, "a \"# Rank\" line without \"on HOST device N\"");
    }
    open_->hosts.insert(*(on + 1));
    std::string name;
    // The device name follows the bus id in brackets.
    for (auto it = device + 1; it != tokens.end(); ++it) {
      if (it->front() == '[' || it == device + 1) continue;
      name += (name.empty() ? "" : " ") + *it;
    }
    open_->run.devices.push_back(name);
  }

  // The four columns time, algbw, busbw, #wrong from `at`; none if `allow_na` and they are N/A.
  std::optional<MeasuredTiming> read_timing(const std::vector<std::string>& t, std::size_t at, bool allow_na) {
    MeasuredTiming timing;
    const auto time_us = to_double(t[at]);
    const auto algbw = to_double(t[at + 1]);
    const auto busbw = to_double(t[at + 2]);
    if (!time_us || !algbw || !busbw) {
      if (allow_na && t[at] == "N/A") return std::nullopt;
      fail(line_no_, fmt::format("expected time (us), algbw and busbw (GB/s) as non-negative numbers, got \"{} {} {}\"",
                                 t[at], t[at + 1], t[at + 2]));
    }
    // nccl-tests prints time in microseconds and bandwidths in GB/s (1e9 B/s).
    timing.time = microseconds(*time_us);
    timing.algbw = gbyte_per_s(*algbw);
    timing.busbw = gbyte_per_s(*busbw);
    if (t[at + 3] != "N/A") {
      const auto wrong = to_int(t[at + 3]);
      if (!wrong || *wrong < 0) fail(line_no_, fmt::format("expected #wrong as a count or N/A, got \"{}\"", t[at + 3]));
      timing.wrong = *wrong;
    }
    return timing;
  }

  void read_row(const std::vector<std::string>& t) {
    const std::size_t want = open_->has_root_column ? 13 : 12;
    if (t.size() != want) {
      fail(line_no_, fmt::format("a result row with {} columns, expected {} ({}): is the log cut off?", t.size(), want,
                                 open_->has_root_column ? kColumnsWithRoot : kColumnsWithoutRoot));
    }
    MeasuredPoint p;
    p.size = Bytes(static_cast<double>(*to_int(t[0])));
    const auto count = to_int(t[1]);
    if (!count || *count < 0 || p.size.value() < 0.0) fail(line_no_, "size and count must be counts");
    p.count = *count;
    p.type = t[2];
    const std::size_t timing_at = open_->has_root_column ? 5 : 4;
    p.out_of_place = *read_timing(t, timing_at, false);
    p.in_place = read_timing(t, timing_at + 4, true);
    p.line = line_no_;
    open_->run.points.push_back(std::move(p));
  }

  void read_average(const std::vector<std::string>& tokens) {
    if (!open_ || !open_->in_table) fail(line_no_, "\"# Avg bus bandwidth\" before any result table");
    const auto value = to_double(tokens.back());
    if (!value) fail(line_no_, fmt::format("expected a number after \"Avg bus bandwidth :\", got \"{}\"", tokens.back()));
    if (open_->run.points.empty()) fail(line_no_, "a run with a column header and no result rows");
    open_->run.avg_busbw = gbyte_per_s(*value);
    open_->in_table = false;
    open_->finished = true;
    finish_run();
  }

  void close_run_before(int line) {
    if (open_->finished || (!open_->in_table && open_->run.points.empty())) {
      open_.reset();
      return;
    }
    fail(line, fmt::format("truncated run: the run that starts at line {} has {} result rows and no \"# Avg bus "
                           "bandwidth\" line before the next run starts",
                           open_->run.first_line, open_->run.points.size()));
  }

  void close_run_at_end() {
    if (!open_->in_table && open_->run.points.empty()) return;
    fail(line_no_, fmt::format("truncated log: the run that starts at line {} has {} result rows and the file ends "
                               "before its \"# Avg bus bandwidth\" line",
                               open_->run.first_line, open_->run.points.size()));
  }

  void finish_run() {
    MeasuredCollective run = std::move(open_->run);
    run.hosts = static_cast<int>(open_->hosts.size());
    open_.reset();
    run.op = resolve_op(run);
    if (run.devices.empty()) {
      // Later runs of a multi-run log may omit the device list; they ran on the same ranks.
      if (result_.runs.empty()) {
        fail(run.first_line, "no \"#  Rank ... device\" lines: cannot tell how many ranks ran this test");
      }
      run.devices = result_.runs.back().devices;
      run.hosts = result_.runs.back().hosts;
    }
    run.ranks = static_cast<int>(run.devices.size());
    result_.runs.push_back(std::move(run));
  }

  CollectiveOp resolve_op(MeasuredCollective& run) const {
    if (!run.program.empty()) {
      if (auto op = op_of_nccl_tests_program(run.program)) return *op;
      fail(run.first_line, fmt::format("unknown nccl-tests program \"{}\"", run.program));
    }
    std::string name = std::filesystem::path(origin_).filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& [hint, op] : kFileNameHints) {
      if (name.find(hint) != std::string::npos) {
        run.program = fmt::format("{} (from the file name)", program_of(op));
        return op;
      }
    }
    fail(run.first_line,
         "cannot tell which collective this run measured: no \"# Collective test starting:\" line, no command line "
         "naming an nccl-tests program (all_reduce_perf, ...), and the file name names none");
  }

  std::string_view text_;
  std::string origin_;
  int line_no_ = 0;
  std::string pending_program_;
  std::optional<OpenRun> open_;
  Measurements result_;
};

}  // namespace

std::optional<CollectiveOp> op_of_nccl_tests_program(std::string_view program) {
  for (const auto& [name, op] : kPrograms) {
    if (program == name) return op;
  }
  return std::nullopt;
}

Measurements parse_nccl_tests_log(std::string_view text, const std::string& origin) {
  return LogParser(text, origin).parse();
}

}  // namespace stepcast::calibrate
