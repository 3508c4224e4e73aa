// Writing Chakra execution traces: each rank's file built, checked and encoded on a pool of worker
// threads, ranks dealt round-robin; the communicators are numbered in rank order, one rank's turn
// at a time, so every byte written is the same whatever the number of threads.
#include "stepcast/report/chakra_trace.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include "chakra_encode.hpp"
#include "chakra_files.hpp"
#include "et_def.pb.h"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/staged_files.hpp"

namespace stepcast::report::chakra {
namespace {

namespace pb = ChakraProtoMsg;

// Communicators by name and ranks, numbered from 1 in the order the traces first use them, rank
// by rank: ASTRA-sim takes pg_name "" or "0" for the group of all ranks and looks any other number
// up in the --comm-group-configuration file (Workload::extract_comm_group).
class Communicators {
 public:
  int id(const TraceNode& n) {
    auto [it, added] = ids_.try_emplace({n.group, n.group_ranks}, static_cast<int>(ids_.size()) + 1);
    if (added) ranks_by_id_.push_back(&it->first.second);
    return it->second;
  }

  [[nodiscard]] std::string json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < ranks_by_id_.size(); ++i) j[std::to_string(i + 1)] = *ranks_by_id_[i];
    return j.dump() + "\n";
  }

 private:
  std::map<std::pair<std::string, std::vector<int>>, int> ids_;
  std::vector<const std::vector<int>*> ranks_by_id_;
};

// One rank's communicators in the order its collectives first name them, found by name first
// without copying a node's name and ranks (a trace has thousands of collectives), so that its
// turn numbers only these few.
class RankCommunicators {
 public:
  void collect(const std::vector<TraceNode>& nodes) {
    firsts_.clear();
    by_name_.clear();
    place_.assign(nodes.size(), kNone);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const TraceNode& n = nodes[i];
      if (n.kind != NodeKind::kCollective) continue;
      std::vector<std::size_t>& named = by_name_[n.group];
      const auto same = std::find_if(named.begin(), named.end(),
                                     [&](std::size_t f) { return firsts_[f]->group_ranks == n.group_ranks; });
      if (same != named.end()) {
        place_[i] = *same;
        continue;
      }
      place_[i] = firsts_.size();
      named.push_back(firsts_.size());
      firsts_.push_back(&n);
    }
  }

  // Numbers this rank's communicators among every rank's (in rank order: the rank's turn) and
  // returns each node's communicator id.
  const std::vector<int>& number(Communicators& all) {
    ids_.clear();
    for (const TraceNode* first : firsts_) ids_.push_back(all.id(*first));
    of_node_.resize(place_.size());
    for (std::size_t i = 0; i < place_.size(); ++i) of_node_[i] = place_[i] == kNone ? 0 : ids_[place_[i]];
    return of_node_;
  }

 private:
  std::vector<const TraceNode*> firsts_;
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_name_;
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();  // not a collective
  std::vector<std::size_t> place_;  // each node's communicator among firsts_
  std::vector<int> ids_;
  std::vector<int> of_node_;
};

// Ranks take their turn in rank order; a failure stops every worker at its next turn.
class Turns {
 public:
  // Waits for rank `rank`'s turn; false once the export has stopped.
  bool wait(int rank) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || next_ == rank; });
    return !stopped_;
  }
  void pass() {
    {
      const std::lock_guard lock(mutex_);
      ++next_;
    }
    changed_.notify_all();
  }
  // Keeps the error of the lowest rank, so which error surfaces does not depend on the threads.
  void fail(int rank, std::exception_ptr error) {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
      if (rank < error_rank_) {
        error_rank_ = rank;
        error_ = std::move(error);
      }
    }
    changed_.notify_all();
  }
  [[nodiscard]] std::exception_ptr error() const { return error_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int next_ = 0;
  bool stopped_ = false;
  int error_rank_ = std::numeric_limits<int>::max();
  std::exception_ptr error_;
};

// One rank's file, written to its temporary file; renamed into place only once every rank's is
// complete (write_chakra).
void write_rank(StagedFiles& staged, const std::vector<TraceNode>& nodes, int rank,
                const std::vector<int>& communicators, TraceEncoder& encoder) {
  const auto r = static_cast<std::size_t>(rank);
  staged.open(r);
  encoder.encode(nodes, rank, communicators, [&](std::string_view bytes) { staged.append(r, bytes); });
  staged.close(r);
}

// What the workers share: the files, the ranks' turns, and what the turns gather.
struct Export {
  const std::vector<std::filesystem::path>& traces;
  StagedFiles& staged;  ///< the traces, then the communicators
  Turns turns;
  Communicators communicators;
  Messages messages;
};

// One worker thread: its own source, buffers and encoder, kept from one rank to the next.
class Worker {
 public:
  Worker(Export& shared, RankSource source) : shared_(shared), source_(std::move(source)) {}

  // Ranks first, first + step, ...; stops at the first failure of any worker.
  void run(int first, int step) {
    const auto ranks = static_cast<int>(shared_.traces.size());
    for (int r = first; r < ranks; r += step) {
      if (!rank(r, ranks)) return;
    }
  }

 private:
  bool rank(int r, int ranks) {
    const std::filesystem::path& file = shared_.traces[static_cast<std::size_t>(r)];
    const std::vector<TraceNode>* nodes = nullptr;
    std::exception_ptr error;
    try {
      nodes = &source_(r);
      messages_.clear();
      checker_.check(file, r, ranks, *nodes, messages_);
      communicators_.collect(*nodes);
    } catch (...) {
      error = std::current_exception();
    }
    // A rank's error surfaces at its turn: a rank before it that fails is reported instead.
    if (!shared_.turns.wait(r)) return false;
    const std::vector<int>* ids = nullptr;
    try {
      if (error) std::rethrow_exception(error);
      for (const auto& [message, count] : messages_) shared_.messages[message] += count;
      ids = &communicators_.number(shared_.communicators);
    } catch (...) {
      shared_.turns.fail(r, std::current_exception());
      return false;
    }
    shared_.turns.pass();
    try {
      write_rank(shared_.staged, *nodes, r, *ids, encoder_);
    } catch (...) {
      shared_.turns.fail(r, std::current_exception());
      return false;
    }
    return true;
  }

  Export& shared_;
  RankSource source_;
  Messages messages_;
  RankChecker checker_;
  RankCommunicators communicators_;
  TraceEncoder encoder_;
};

}  // namespace

std::filesystem::path trace_path(const std::filesystem::path& directory, std::string_view prefix, int rank) {
  return directory / fmt::format("{}.{}.et", prefix, rank);
}

std::filesystem::path comm_groups_path(const std::filesystem::path& directory, std::string_view prefix) {
  return directory / fmt::format("{}.comm_groups.json", prefix);
}

ChakraFiles write_chakra(const std::filesystem::path& directory, int rank_count, const RankSourceFactory& sources,
                         std::string_view prefix, int threads, const std::vector<OutputContent>& with) {
  if (rank_count < 1) throw InputError(directory.string(), {}, "a Chakra trace needs at least one rank");
  std::error_code ec;
  const bool created = std::filesystem::create_directories(directory, ec);
  if (ec || !std::filesystem::is_directory(directory)) {
    throw InputError(directory.string(), {},
                     fmt::format("cannot make the folder for the Chakra traces: {}",
                                 ec ? ec.message() : "a file of that name is in the way"));
  }
  ChakraFiles files;
  for (int r = 0; r < rank_count; ++r) files.traces.push_back(trace_path(directory, prefix, r));
  files.comm_groups = comm_groups_path(directory, prefix);
  try {
    std::vector<std::filesystem::path> targets = files.traces;
    targets.push_back(files.comm_groups);
    const std::size_t communicators = targets.size() - 1;
    for (const OutputContent& file : with) targets.push_back(file.path);
    StagedFiles staged(targets);
    Export shared{files.traces, staged, {}, {}, {}};
    const int wanted = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int count = std::min(wanted, rank_count);
    std::vector<Worker> workers;
    workers.reserve(static_cast<std::size_t>(count));
    for (int w = 0; w < count; ++w) workers.emplace_back(shared, sources());
    {
      std::vector<std::jthread> pool;
      try {
        for (int w = 1; w < count; ++w)
          pool.emplace_back([&workers, w, count] { workers[static_cast<std::size_t>(w)].run(w, count); });
      } catch (...) {
        shared.turns.fail(0, std::current_exception());  // the started workers stop instead of waiting
      }
      workers.front().run(0, count);
    }
    if (const std::exception_ptr error = shared.turns.error()) std::rethrow_exception(error);
    check_messages(directory, prefix, shared.messages);
    // Every file is complete: the traces, their communicators and the command's other files
    // replace the old ones together.
    staged.write(communicators, shared.communicators.json());
    for (std::size_t i = 0; i < with.size(); ++i) staged.write(communicators + 1 + i, with[i].content);
    staged.commit();
  } catch (...) {
    // The staged files are gone by now; nor is the folder left if this call made it.
    std::error_code ignored;
    if (created) std::filesystem::remove(directory, ignored);
    throw;
  }
  return files;
}

ChakraFiles write_chakra(const std::filesystem::path& directory, const Traces& ranks, std::string_view prefix,
                         int threads, const std::vector<OutputContent>& with) {
  // Each thread's source reads the same traces.
  const auto source = [&ranks] {
    return RankSource([&ranks](int r) -> const std::vector<TraceNode>& { return ranks[static_cast<std::size_t>(r)]; });
  };
  return write_chakra(directory, static_cast<int>(ranks.size()), source, prefix, threads, with);
}

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCompute:
      return "compute";
    case NodeKind::kCollective:
      return "collective";
    case NodeKind::kSend:
      return "send";
    case NodeKind::kRecv:
      return "recv";
  }
  STEPCAST_UNREACHABLE("every node kind has a name");
}

std::string_view to_string(Collective collective) {
  return pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(collective));
}

}  // namespace stepcast::report::chakra
