// Names of collectives and algorithms as users type them, and which pairs stepcast models.
// One table per question, so help text, parsing and error messages cannot disagree.
#include "stepcast/cost/collectives.hpp"

#include <array>
#include <string>

namespace stepcast::cost {
namespace {

struct OpName {
  CollectiveOp op;
  std::string_view name;
  std::string_view nccl_tests_name;  // nccl-tests' binary stem: all_reduce_perf -> "all_reduce"
};

constexpr std::array kOpNames{
    OpName{CollectiveOp::kAllReduce, "all-reduce", "all_reduce"},
    OpName{CollectiveOp::kReduceScatter, "reduce-scatter", "reduce_scatter"},
    OpName{CollectiveOp::kAllGather, "all-gather", "all_gather"},
    OpName{CollectiveOp::kBroadcast, "broadcast", "broadcast"},
    OpName{CollectiveOp::kReduce, "reduce", "reduce"},
    OpName{CollectiveOp::kAllToAll, "all-to-all", "alltoall"},
    OpName{CollectiveOp::kSendRecv, "send-recv", "sendrecv"},
};

constexpr std::array kAllOps{CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                             CollectiveOp::kBroadcast, CollectiveOp::kReduce,        CollectiveOp::kAllToAll,
                             CollectiveOp::kSendRecv};

struct AlgorithmName {
  Algorithm algorithm;
  std::string_view name;
};

constexpr std::array kAlgorithmNames{
    AlgorithmName{Algorithm::kRing, "ring"},
    AlgorithmName{Algorithm::kTree, "tree"},
    AlgorithmName{Algorithm::kHierarchical, "hierarchical"},
    AlgorithmName{Algorithm::kDirect, "direct"},
};

// Which algorithms each collective has in the model (src/cost/collectives.cpp derives each one).
// NCCL runs all-reduce as ring or tree; hierarchical is the intra/inter/intra decomposition of
// Horovod and of NCCL's CollNet-less multi-node path; broadcast and reduce are pipelined chains
// (ring) or the two-tree of Sanders, Speck and Traeff (2009).
constexpr std::array kAllReduceAlgorithms{Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical};
constexpr std::array kScatterGatherAlgorithms{Algorithm::kRing, Algorithm::kHierarchical};
constexpr std::array kRootedAlgorithms{Algorithm::kRing, Algorithm::kTree};
constexpr std::array kDirectAlgorithms{Algorithm::kDirect};

std::string join_names(auto const& items, auto name_of) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += name_of(item);
  }
  return out;
}

}  // namespace

std::span<const Algorithm> algorithms_for(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return kAllReduceAlgorithms;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return kScatterGatherAlgorithms;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return kRootedAlgorithms;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv:
      return kDirectAlgorithms;
  }
  return {};
}

bool is_supported(CollectiveOp op, Algorithm algorithm) {
  for (Algorithm a : algorithms_for(op)) {
    if (a == algorithm) return true;
  }
  return false;
}

std::span<const CollectiveOp> all_collective_ops() { return kAllOps; }

std::string_view to_string(CollectiveOp op) {
  for (const OpName& n : kOpNames) {
    if (n.op == op) return n.name;
  }
  return "unknown";
}

std::string_view to_string(Algorithm algorithm) {
  for (const AlgorithmName& n : kAlgorithmNames) {
    if (n.algorithm == algorithm) return n.name;
  }
  return "unknown";
}

std::string_view to_string(Bottleneck bottleneck) {
  switch (bottleneck) {
    case Bottleneck::kNone:
      return "none";
    case Bottleneck::kIntraNode:
      return "intra-node";
    case Bottleneck::kNodeNics:
      return "node NICs";
    case Bottleneck::kGpuNic:
      return "GPU NIC";
  }
  return "unknown";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view name) {
  for (const OpName& n : kOpNames) {
    if (name == n.name || name == n.nccl_tests_name) return n.op;
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (const AlgorithmName& n : kAlgorithmNames) {
    if (name == n.name) return n.algorithm;
  }
  return std::nullopt;
}

std::string accepted_collective_ops() {
  return join_names(kOpNames, [](const OpName& n) { return std::string(n.name); });
}

std::string accepted_algorithms() {
  return join_names(kAlgorithmNames, [](const AlgorithmName& n) { return std::string(n.name); });
}

std::string accepted_algorithms(CollectiveOp op) {
  return join_names(algorithms_for(op), [](Algorithm a) { return std::string(to_string(a)); });
}

}  // namespace stepcast::cost
