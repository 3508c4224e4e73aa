// Group spans from the step graph's groups: their members as the graph places them (the rank
// order's), their domains and NICs as the collective model sees them (Topology::tiers).
#include "stepcast/report/group_spans.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stepcast::report {
namespace {

/// "0,8,16,24" or, past eight GPUs, the first four, "...", and the last.
std::string gpu_list(const std::vector<int>& gpus) {
  std::string out;
  const std::size_t n = gpus.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 8 && i == 4) {
      out += ",...";
      i = n - 1;
    }
    out += fmt::format("{}{}", out.empty() ? "" : ",", gpus[i]);
  }
  return out;
}

}  // namespace

std::vector<GroupSpan> group_spans(const graph::StepGraph& graph, const topology::Topology& topology) {
  std::vector<GroupSpan> out;
  for (const graph::GroupSpec& g : graph.groups) {
    GroupSpan span;
    span.role = g.role;
    span.ranks = g.ranks;
    span.stride = g.stride;
    // The group the collectives are priced on (the one over the most nodes), as the graph's
    // members spell it where they list it.
    const int start = topology.slowest_group_start(g.ranks, g.stride);
    for (int r = 0; r < g.ranks; ++r) span.gpus.push_back(start + r * g.stride);
    const graph::GroupSets sets = g.members ? g.members(0) : graph::GroupSets{};
    if (!sets.empty() && !sets.front().empty()) {
      span.groups = static_cast<int>(sets.size());
      const auto priced =
          std::find_if(sets.begin(), sets.end(), [start](const std::vector<int>& set) { return set.front() == start; });
      if (priced != sets.end()) span.gpus = *priced;
    }
    const topology::CommTiers tiers = topology.tiers(g.ranks, g.stride, g.concurrency);
    span.domains = tiers.nodes;
    span.ranks_per_domain = tiers.ranks_per_node;
    span.nics = tiers.nics;
    span.concurrent = std::max(1, g.concurrency.groups);
    out.push_back(std::move(span));
  }
  return out;
}

Table group_span_table(const std::vector<GroupSpan>& spans) {
  Table t("groups",
          "Parallel groups: the group of each kind its collectives are priced on, the one over the most scale-up "
          "domains (the rank order's placement)",
          {{"group", "group", "", -1},
           {"ranks", "ranks", "", -1},
           {"stride", "stride", "", -1},
           {"gpus", "its GPUs", "", -1},
           {"groups", "groups per stage", "", -1},
           {"domains", "scale-up domains", "", -1},
           {"ranks_per_domain", "ranks per domain", "", -1},
           {"nics", "NICs per domain", "", -1},
           {"concurrent", "at once", "", -1}});
  for (const GroupSpan& s : spans) {
    t.add_row({Cell::of_text(s.role), Cell::of_integer(s.ranks), Cell::of_integer(s.stride),
               Cell::of_text(gpu_list(s.gpus)), Cell::of_integer(s.groups), Cell::of_integer(s.domains),
               Cell::of_integer(s.ranks_per_domain), Cell::of_integer(s.nics), Cell::of_integer(s.concurrent)});
  }
  return t;
}

nlohmann::json group_spans_json(const std::vector<GroupSpan>& spans) {
  nlohmann::json out = nlohmann::json::array();
  for (const GroupSpan& s : spans) {
    out.push_back({{"group", s.role},
                   {"ranks", s.ranks},
                   {"stride", s.stride},
                   {"gpus", s.gpus},
                   {"groups", s.groups},
                   {"domains", s.domains},
                   {"ranks_per_domain", s.ranks_per_domain},
                   {"nics", s.nics},
                   {"concurrent", s.concurrent}});
  }
  return out;
}

}  // namespace stepcast::report
