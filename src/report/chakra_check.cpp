// The rules a Chakra trace keeps before stepcast writes it: what ASTRA-sim would otherwise stop on
// or wait for forever (a missing or cyclic dependency, a send nobody receives, a collective whose
// communicator does not hold the rank).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "chakra_files.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::report::chakra {
namespace {

std::string node_label(const TraceNode& n) { return fmt::format("node {} ({})", n.id, n.name); }

}  // namespace

void RankChecker::fail(const std::string& message) const { throw InputError(file_->string(), {}, message); }

void RankChecker::check(const std::filesystem::path& file, int rank, int ranks, const std::vector<TraceNode>& nodes,
                        Messages& messages) {
  file_ = &file;
  rank_ = rank;
  ranks_ = ranks;
  index(nodes);
  bool ordered = true;  // every dependency listed before its node
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const TraceNode& n = nodes[i];
    check_figures(n);
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps}) {
      for (const std::uint64_t dep : *deps) {
        if (dep == n.id) fail(fmt::format("{} depends on itself", node_label(n)));
        const std::size_t at = position(dep);
        if (at == kMissing) {
          fail(fmt::format("{} depends on node {}, which rank {}'s trace does not hold", node_label(n), dep, rank_));
        }
        ordered = ordered && at < i;
      }
    }
    check_communication(n, messages);
  }
  // Nodes in an order that lists each dependency first cannot form a cycle.
  if (!ordered) check_acyclic(nodes);
}

// Ids sorted with their positions; a repeated id is refused, the first repeat in node order named.
void RankChecker::index(const std::vector<TraceNode>& nodes) {
  by_id_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) by_id_[i] = {nodes[i].id, i};
  const auto not_after = [](const auto& a, const auto& b) { return a.first >= b.first; };
  if (std::adjacent_find(by_id_.begin(), by_id_.end(), not_after) == by_id_.end()) return;
  std::sort(by_id_.begin(), by_id_.end());
  std::size_t repeat = kMissing;
  for (std::size_t k = 1; k < by_id_.size(); ++k) {
    if (by_id_[k].first == by_id_[k - 1].first) repeat = std::min(repeat, by_id_[k].second);
  }
  if (repeat != kMissing) fail(fmt::format("node id {} appears twice", nodes[repeat].id));
}

std::size_t RankChecker::position(std::uint64_t id) const {
  // Builders usually number nodes by their position: try that before searching.
  if (id < by_id_.size() && by_id_[id].first == id) return by_id_[id].second;
  const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::pair{id, std::size_t{0}});
  return it != by_id_.end() && it->first == id ? it->second : kMissing;
}

void RankChecker::check_figures(const TraceNode& n) const {
  const auto non_negative = [&](double v, std::string_view what) {
    if (!(std::isfinite(v) && v >= 0.0))
      fail(fmt::format("{} has {} {}; it must be finite and >= 0", node_label(n), what, v));
  };
  non_negative(n.start.value(), "start time");
  non_negative(n.duration.value(), "duration");
  non_negative(n.bytes.value(), "size");
  non_negative(n.flops, "FLOPs");
  non_negative(n.tensor_bytes.value(), "tensor size");
}

void RankChecker::check_communication(const TraceNode& n, Messages& messages) const {
  if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv) {
    if (n.peer < 0 || n.peer >= ranks_ || n.peer == rank_) {
      fail(fmt::format("{} {} rank {}: the peer must be another of the {} ranks", node_label(n),
                       n.kind == NodeKind::kSend ? "sends to" : "receives from", n.peer, ranks_));
    }
    // A send counts +1 on its message, a receive -1: every message must end at 0.
    if (n.kind == NodeKind::kSend) {
      ++messages[{rank_, n.peer, n.tag, n.bytes.value()}];
    } else {
      --messages[{n.peer, rank_, n.tag, n.bytes.value()}];
    }
  }
  if (n.kind == NodeKind::kCollective) {
    const auto& g = n.group_ranks;
    const bool ascending = std::adjacent_find(g.begin(), g.end(), std::greater_equal<>()) == g.end();
    if (g.empty() || !ascending || g.front() < 0 || g.back() >= ranks_) {
      fail(fmt::format("{}: the ranks of group \"{}\" must be distinct, ascending and within 0..{}", node_label(n),
                       n.group, ranks_ - 1));
    }
    if (!std::binary_search(g.begin(), g.end(), rank_)) {
      fail(fmt::format("{}: group \"{}\" does not hold rank {}", node_label(n), n.group, rank_));
    }
  }
}

// Kahn's algorithm: a node whose dependencies never all finish is on a cycle.
void RankChecker::check_acyclic(const std::vector<TraceNode>& nodes) const {
  std::vector<int> waiting(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> dependants(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto* deps : {&nodes[i].data_deps, &nodes[i].ctrl_deps}) {
      for (const std::uint64_t dep : *deps) {
        dependants[position(dep)].push_back(i);
        ++waiting[i];
      }
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (const std::size_t d : dependants[i]) {
      if (--waiting[d] == 0) ready.push_back(d);
    }
  }
  if (done == nodes.size()) return;
  const auto stuck = std::find_if(waiting.begin(), waiting.end(), [](int w) { return w > 0; });
  fail(fmt::format("the dependencies form a cycle: {} never becomes ready",
                   node_label(nodes[static_cast<std::size_t>(stuck - waiting.begin())])));
}

void check_messages(const std::filesystem::path& directory, std::string_view prefix, const Messages& messages) {
  for (const auto& [message, balance] : messages) {
    if (balance == 0) continue;
    const auto& [from, to, tag, bytes] = message;
    if (balance > 0) {
      throw InputError(trace_path(directory, prefix, from).string(), {},
                       fmt::format("rank {} sends {} message(s) of {:.0f} bytes with tag {} to rank {} that rank {} "
                                   "does not receive",
                                   from, balance, bytes, tag, to, to));
    }
    throw InputError(trace_path(directory, prefix, to).string(), {},
                     fmt::format("rank {} receives {} message(s) of {:.0f} bytes with tag {} from rank {} that rank {} "
                                 "does not send",
                                 to, -balance, bytes, tag, from, from));
  }
}

}  // namespace stepcast::report::chakra
