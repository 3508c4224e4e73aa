// The nccl-tests text reader: a line-by-line state machine over the runs in a log. nccl-tests
// prints, per run, a preamble ("# nccl-tests version", "# Collective test starting:", "# nThread",
// "#  Rank N ... on HOST device D"), a result table (header, rows) and a summary ("# Avg bus
// bandwidth", "# Collective test concluded"); src/common.cu and src/util.cu. Around them come
// launcher tags, NCCL's debug lines and MPI's messages, which are stripped or skipped.
#include "stepcast/calibrate/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <utility>

#include "nccl_tests_columns.hpp"
#include "nccl_tests_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {
namespace {

using cost::CollectiveOp;
using detail::TableColumns;

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
    {"all_reduce", CollectiveOp::kAllReduce},
    {"allreduce", CollectiveOp::kAllReduce},
    {"all_gather", CollectiveOp::kAllGather},
    {"allgather", CollectiveOp::kAllGather},
    {"reduce_scatter", CollectiveOp::kReduceScatter},
    {"reducescatter", CollectiveOp::kReduceScatter},
    {"alltoall", CollectiveOp::kAllToAll},
    {"all_to_all", CollectiveOp::kAllToAll},
    {"sendrecv", CollectiveOp::kSendRecv},
    {"broadcast", CollectiveOp::kBroadcast},
    {"reduce", CollectiveOp::kReduce},
}};

std::string_view program_of(CollectiveOp op) {
  for (const auto& [name, program_op] : kPrograms) {
    if (program_op == op) return name;
  }
  STEPCAST_UNREACHABLE("every collective has an nccl-tests program");
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string_view trim_front(std::string_view s) { return s.substr(std::min(s.find_first_not_of(" \t"), s.size())); }

// The nccl-tests program a word names ("./build/all_reduce_perf"), if any.
std::optional<std::string> program_named(const std::string& word) {
  std::string name = std::filesystem::path(word).filename().string();
  if (op_of_nccl_tests_program(name)) return name;
  return std::nullopt;
}

// A run being read, with what its preamble said about where it ran.
struct OpenRun {
  MeasuredCollective run;
  std::map<std::string, int> ranks_per_host;  ///< from "# Rank" lines that name a host
  bool rank_without_host = false;             ///< a "# Rank" line naming no host ("uses device D")
  std::optional<TableColumns> table;
  int table_line = 0;
};

class LogParser {
 public:
  LogParser(std::string_view text, std::string origin, const RunFacts& facts)
      : text_(text), origin_(std::move(origin)), facts_(facts) {}

  Measurements parse() {
    if (text_.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      throw InputError(origin_, {}, "the file is empty, expected nccl-tests output (all_reduce_perf and the like)");
    }
    std::size_t pos = 0;
    while (pos < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos), text_.size());
      std::string_view line = text_.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF line ends
      ++line_no_;
      read_line(line);
      if (end == text_.size()) break;
      pos = end + 1;
    }
    if (open_) finish_run("the file ends after its last row");
    if (result_.runs.empty()) refuse_empty_result();
    refuse_all_zero_times();
    result_.file = origin_;
    return std::move(result_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw InputError(origin_, line > 0 ? std::to_string(line) : std::string(), message);
  }

  void skip(SkippedLine::Kind kind, std::string why) { result_.skipped.push_back({line_no_, kind, std::move(why)}); }

  void note(int line, std::string text) { result_.notes.push_back({line, std::move(text)}); }

  void read_line(std::string_view raw) {
    // OpenMPI tags every piece of a line it forwards, so with many ranks a tag can sit anywhere.
    const std::optional<std::string> untagged = detail::without_inner_mpi_tags(raw);
    const std::string_view line = detail::strip_launcher_tags(untagged ? std::string_view(*untagged) : raw);
    if (line.empty()) return;
    if (line.front() == '#') {
      read_comment(line.substr(1));
      return;
    }
    const std::vector<std::string> words = detail::split_words(line);
    if (words.empty()) return;  // only separators that are not blanks, e.g. a vertical tab
    // 2016-2017 nccl-tests printed the two summary lines without "#" (common.cu: " Avg bus bandwidth").
    if (starts_with(line, "Avg bus bandwidth")) {
      read_average(line);
      return;
    }
    if (starts_with(line, "Out of bounds values")) return;
    if (open_ && open_->table && detail::to_integer(words.front())) {
      read_row(words);
      return;
    }
    if (open_ && open_->table && detail::to_number(words.front())) {
      skip(SkippedLine::Kind::kResultRow,
           fmt::format("a piece of a result row broken across lines (it starts with \"{}\", not a size in bytes)",
                       words.front()));
      return;
    }
    if (detail::is_nccl_debug_line(line)) {
      skip(SkippedLine::Kind::kNcclDebug, "NCCL debug output (NCCL_DEBUG)");
      return;
    }
    // A command line such as "./build/all_reduce_perf -b 8 -e 1G" or "mpirun ... all_reduce_perf".
    for (const std::string& word : words) {
      if (auto name = program_named(word)) {
        name_program(*name);
        return;
      }
    }
    skip(SkippedLine::Kind::kOther, "not nccl-tests output (launcher, MPI or shell text)");
  }

  void read_comment(std::string_view body) {
    const std::vector<std::string> words = detail::split_words(body);
    if (words.empty()) return;
    const std::string_view text = trim_front(body);
    if (starts_with(text, "nccl-tests version") || words.front() == "nThread") {
      join_or_start_preamble();
    } else if (starts_with(text, "Collective test starting:")) {
      join_or_start_preamble();
      open_->run.program = words.back();
    } else if (words.front() == "Rank" && words.size() >= 2 && detail::to_integer(words[1])) {
      read_rank(words);
    } else if (auto columns = detail::columns_of_header(words)) {
      start_table(std::move(*columns));
    } else if (starts_with(text, "Avg bus bandwidth")) {
      read_average(text);
    } else if (starts_with(text, "Collective test concluded") && open_ && open_->table) {
      finish_run("its \"# Collective test concluded\" line comes first");
    }
  }

  // The preamble lines of one run follow one another; one after a result table starts the next run.
  void join_or_start_preamble() {
    if (!open_ || open_->table) start_run();
  }

  void name_program(const std::string& name) {
    if (open_ && !open_->table && open_->run.program.empty()) {
      open_->run.program = name;
    } else {
      pending_program_ = name;
    }
  }

  void start_run() {
    if (open_) finish_run(fmt::format("the next run starts at line {}", line_no_));
    open_.emplace();
    open_->run.file = origin_;
    open_->run.first_line = line_no_;
    open_->run.program = std::move(pending_program_);
    pending_program_.clear();
  }

  // "#  Rank  0 Group  0 Pid 4180122 on cnode3-002 device  0 [0000:1b:00] NVIDIA H100 80GB HBM3";
  // 2018-2021: "#   Rank  0 Pid 1234 on host device 0 [0x07] ..."; 2016-2017: "#   Rank  0 on host
  // device  0 [0x07] ...". NCCL 1's own tests printed "#   Rank  0 uses device  0 [0x07] ..." (no host).
  void read_rank(const std::vector<std::string>& words) {
    if (!open_ || open_->table) start_run();
    const auto on = std::find(words.begin(), words.end(), "on");
    const auto device = std::find(words.begin(), words.end(), "device");
    if (on != words.end() && on + 1 != words.end() && on + 1 != device) {
      ++open_->ranks_per_host[*(on + 1)];
    } else {
      open_->rank_without_host = true;
    }
    // The device name follows the device number and the bus id in brackets.
    std::string name;
    if (device != words.end()) {
      for (auto it = device + 1; it != words.end(); ++it) {
        if (it == device + 1 || it->front() == '[') continue;
        name += (name.empty() ? "" : " ") + *it;
      }
    }
    open_->run.devices.push_back(name);
  }

  void start_table(TableColumns columns) {
    // A header repeated before any row replaces the first; one after rows starts a new run.
    if (!open_ || (open_->table && !open_->run.points.empty())) start_run();
    open_->table = std::move(columns);
    open_->table_line = line_no_;
  }

  void read_row(const std::vector<std::string>& words) {
    detail::RowReading r = detail::read_row(words, *open_->table);
    if (!r.point) {
      skip(SkippedLine::Kind::kResultRow, std::move(r.why));
      return;
    }
    r.point->line = line_no_;
    open_->run.points.push_back(std::move(*r.point));
  }

  // "# Avg bus bandwidth    : 437.957 " (recent nccl-tests add OK or FAILED after the figure).
  void read_average(std::string_view text) {
    if (!open_ || !open_->table) {
      skip(SkippedLine::Kind::kOther, "an \"Avg bus bandwidth\" line with no result table before it");
      return;
    }
    const auto colon = text.find(':');
    const std::vector<std::string> after =
        detail::split_words(colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1));
    const auto value = after.empty() ? std::nullopt : detail::to_number(after.front());
    if (value && *value >= 0.0) {
      open_->run.avg_busbw = gbyte_per_s(*value);
    } else {
      skip(SkippedLine::Kind::kOther, "expected a bandwidth after \"Avg bus bandwidth :\"");
    }
    finish_run({});
  }

  // Closes the open run. `missing_summary` says how the run ended when it lacks its "# Avg bus
  // bandwidth" line; empty when the summary line ended it.
  void finish_run(std::string_view missing_summary) {
    OpenRun open = std::move(*open_);
    open_.reset();
    MeasuredCollective& run = open.run;
    if (!open.table) {
      note(run.first_line, "a run that printed no result table: nothing to read");
      return;
    }
    if (run.points.empty()) {
      note(open.table_line, "a result table without a row that could be read: the run is left out");
      return;
    }
    if (!resolve_op(run)) return;
    if (!run.avg_busbw && !missing_summary.empty()) {
      note(run.points.back().line,
           fmt::format(
               "the run that starts at line {} has no \"# Avg bus bandwidth\" line ({}); its {} read", run.first_line,
               missing_summary,
               run.points.size() == 1 ? std::string("1 row is") : fmt::format("{} rows are", run.points.size())));
    }
    resolve_ranks(open);
    check_run_facts(run, facts_, origin_, std::to_string(run.first_line));
    result_.runs.push_back(std::move(run));
  }

  // The collective: from the log (its program), else --op, else the file name. False when the log
  // names a program of a collective stepcast does not model (the run is left out with a note).
  bool resolve_op(MeasuredCollective& run) {
    if (!run.program.empty()) {
      if (auto op = op_of_nccl_tests_program(run.program)) {
        run.op = *op;
        return true;
      }
      note(run.first_line,
           fmt::format("a run of \"{}\", which is no collective stepcast models: the run is left out", run.program));
      return false;
    }
    if (facts_.op) {
      run.op = *facts_.op;
      run.program = fmt::format("{} (from --op)", program_of(run.op));
      return true;
    }
    std::string name = std::filesystem::path(origin_).filename().string();
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& [hint, op] : kFileNameHints) {
      if (name.find(hint) != std::string::npos) {
        run.op = op;
        run.program = fmt::format("{} (from the file name)", program_of(op));
        return true;
      }
    }
    fail(run.first_line,
         "cannot tell which collective this run measured: no \"# Collective test starting:\" line, no command line "
         "naming an nccl-tests program (all_reduce_perf, ...), and the file name names none (pass --op)");
  }

  // Ranks and hosts: from the run's "# Rank" lines, else --ranks (or --nodes x --gpus-per-node),
  // else the run before it in the file, which ran on the same ranks in every multi-run log seen.
  void resolve_ranks(OpenRun& open) {
    MeasuredCollective& run = open.run;
    if (!run.devices.empty()) {
      run.ranks = static_cast<int>(run.devices.size());
      run.hosts = open.rank_without_host ? hosts_from_facts(run.ranks) : static_cast<int>(open.ranks_per_host.size());
      return;
    }
    if (facts_.ranks || (facts_.nodes && facts_.gpus_per_node)) {
      run.ranks = facts_.ranks.value_or(facts_.nodes.value_or(0) * facts_.gpus_per_node.value_or(0));
      run.hosts = hosts_from_facts(run.ranks);
      note(run.first_line, fmt::format("a run without \"# Rank\" lines: {} ranks{}, as the options say", run.ranks,
                                       run.hosts > 0 ? fmt::format(" on {} nodes", run.hosts) : std::string()));
      return;
    }
    if (result_.runs.empty()) {
      fail(run.first_line,
           "no \"#  Rank ... device\" lines: cannot tell how many ranks ran this test (pass --ranks, or --nodes "
           "and --gpus-per-node)");
    }
    run.devices = result_.runs.back().devices;
    run.ranks = result_.runs.back().ranks;
    run.hosts = result_.runs.back().hosts;
  }

  // The hosts `ranks` ran on as --nodes or --gpus-per-node say; 0 (unknown) when neither does.
  int hosts_from_facts(int ranks) const {
    if (facts_.nodes) return *facts_.nodes;
    if (facts_.gpus_per_node) return (ranks + *facts_.gpus_per_node - 1) / *facts_.gpus_per_node;
    return 0;
  }

  // A log whose every row took no time measured nothing (a dry run, or a log edited by hand);
  // said as such, rather than left to a later "no measured points".
  void refuse_all_zero_times() const {
    int rows = 0;
    for (const MeasuredCollective& run : result_.runs) {
      for (const MeasuredPoint& p : run.points) {
        if (p.out_of_place.time.value() > 0.0) return;
        ++rows;
      }
    }
    const MeasuredCollective& first = result_.runs.front();
    fail(first.points.front().line,
         fmt::format("every result row ({} of them, lines {} to {}) has a time of 0: the log holds no measured time",
                     rows, first.points.front().line, result_.runs.back().points.back().line));
  }

  [[noreturn]] void refuse_empty_result() const {
    for (const SkippedLine& s : result_.skipped) {
      if (s.kind == SkippedLine::Kind::kResultRow) fail(s.line, "no result row could be read: " + s.why);
    }
    if (!result_.notes.empty()) fail(result_.notes.front().line, "no run could be read: " + result_.notes.front().text);
    fail(0,
         "not an nccl-tests log: no result table found (expected a \"#  size  count  type ...\" header followed by "
         "result rows, as all_reduce_perf and the other nccl-tests programs print)");
  }

  std::string_view text_;
  std::string origin_;
  RunFacts facts_;
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

Measurements parse_nccl_tests_log(std::string_view text, const std::string& origin, const RunFacts& facts) {
  return LogParser(text, origin, facts).parse();
}

}  // namespace stepcast::calibrate
