// Collective algorithms as phases of simultaneous transfers. Each builder mirrors the derivation
// of the same algorithm in src/cost/collectives.cpp, so a contention-free run reproduces the
// closed form and any difference is contention or asymmetry the formula cannot see.
#include "stepcast/sim/collective_flows.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/numeric.hpp"
#include "stepcast/des/engine.hpp"

namespace stepcast::sim {

namespace {

using cost::Algorithm;
using cost::CollectiveOp;
using Pairs = std::vector<std::pair<int, int>>;

// The ranks grouped by node, nodes in first-appearance order, each node's ranks in given order.
std::vector<std::vector<int>> by_node(const topology::Topology& topo, std::span<const int> ranks) {
  std::vector<std::vector<int>> nodes;
  std::vector<int> node_ids;
  for (const int r : ranks) {
    const int node = topo.node_of_gpu(r);
    auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      nodes.emplace_back();
      it = node_ids.end() - 1;
    }
    nodes[static_cast<std::size_t>(it - node_ids.begin())].push_back(r);
  }
  return nodes;
}

// NIC vertices of a node: NCCL builds one ring channel per NIC of a node (src/graph/search.cc).
int nics_on_node(const topology::Topology& topo, int node) {
  int count = 0;
  for (const topology::Vertex& v : topo.vertices()) {
    if (v.kind == topology::VertexKind::kNic && v.node == node) ++count;
  }
  return count;
}

// Pairs of the rings over `ranks`: one ring (rank i -> i+1, wrapping) on one node or with one GPU
// per node; across nodes of g GPUs with k NICs, k channels, channel c entering each node at local
// position c*g/k so that each channel leaves every node from a different GPU, hence NIC.
// Returns the pairs and the channel count.
std::pair<Pairs, int> ring_pairs(const topology::Topology& topo, std::span<const int> ranks) {
  const auto nodes = by_node(topo, ranks);
  const std::size_t g = nodes.front().size();
  const bool uniform = std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == g; });
  int channels = 1;
  if (nodes.size() > 1 && g > 1 && uniform) {
    channels = std::clamp(nics_on_node(topo, topo.node_of_gpu(ranks.front())), 1, static_cast<int>(g));
  }
  Pairs pairs;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    if (channels == 1) {
      order.assign(ranks.begin(), ranks.end());
    } else {
      const std::size_t offset = static_cast<std::size_t>(c) * g / static_cast<std::size_t>(channels);
      for (const auto& node : nodes) {
        for (std::size_t i = 0; i < g; ++i) order.push_back(node[(offset + i) % g]);
      }
    }
    for (std::size_t i = 0; i < order.size(); ++i) pairs.emplace_back(order[i], order[(i + 1) % order.size()]);
  }
  return {pairs, channels};
}

// Collects the pairs of each pattern and the phases; patterns become network flows only after
// every group has added its pairs (see merge in build_collective).
class Builder {
 public:
  std::uint32_t pattern(const Pairs& pairs,
                        BytesPerSecond cap = BytesPerSecond(std::numeric_limits<double>::infinity())) {
    return pattern(pairs, std::vector<double>(pairs.size(), 1.0), cap);
  }
  // Member i moves weights[i] times a phase's bytes.
  std::uint32_t pattern(const Pairs& pairs, std::vector<double> member_weights, BytesPerSecond cap) {
    patterns.push_back(pairs);
    weights.push_back(std::move(member_weights));
    caps.push_back(cap);
    return static_cast<std::uint32_t>(patterns.size() - 1);
  }
  // `count` identical steps in a row become one phase of count x bytes and count x latency: the
  // steps of a ring run back to back at one rate (all members start and end together), so one
  // rate computation serves them all; under changing contention this is the fluid average.
  void phases(std::uint32_t pattern, std::size_t count, Bytes bytes, int latency_steps = 1) {
    if (count == 0) return;
    const double k = static_cast<double>(count);
    steps.push_back(CollectivePhase{pattern, bytes * k, latency_steps * static_cast<int>(count), std::nullopt});
  }
  std::vector<Pairs> patterns;
  std::vector<std::vector<double>> weights;  // per pattern, one per pair
  std::vector<BytesPerSecond> caps;          // per pattern: each member's own rate limit
  std::vector<CollectivePhase> steps;
};

// A collective as the cost model priced it: bytes_per_rank over ring-ordered pairs, spread over
// the ring's channels (NCCL pipelines broadcast and reduce along the same rings, so each
// channel's chain leaves a node through its own NIC too).
void build_priced(Builder& b, const topology::Topology& topo, const cost::CollectivePrice& price,
                  std::span<const int> ranks) {
  if (ranks.size() < 2) return;
  const des::Tick latency = des::to_ticks(price.flows.latency);
  const auto [pairs, channels] = ring_pairs(topo, ranks);
  const double k = static_cast<double>(channels);
  b.steps.push_back(
      CollectivePhase{b.pattern(pairs, price.flows.rate_per_rank / k), price.flows.bytes_per_rank / k, 1, latency});
}

// In-network reduction (CollNet Direct and Chain; NVLS across nodes, which reduces through CollNet)
// as the cost model priced it: every member moves S / heads (price.flows.bytes_per_rank) at the
// priced rate, all at once, and the collective arrives the model's latency after the last byte.
// Across nodes, head j of each node sends to head j of the next: each head's NIC carries S / heads
// out and S / heads in, what it sends into the switches and takes back from them once they have
// reduced (NVIDIA SHARP), where a ring puts 2(n-1)/n S through each NIC; on a rail-optimized
// fabric those flows meet in the rail switch the reduction runs in. All-gather and reduce-scatter
// count their lighter direction (the node's S / (heads x nodes)) as the heavier. Inside each node,
// the exchange with the heads: CollNet Direct scatters a share to every head and gathers every
// head's result (every ordered pair of the node's GPUs, twice for all-reduce: collnet.cc's
// scatter and broadcast); CollNet Chain passes each head's share up and down a chain of the node's
// GPUs from that head; NVLS reduces and multicasts through the NVSwitch, (g+1)/g S each way on
// every GPU's link for all-reduce and (g-1)/g S for the others, as on one node (ring order).
void build_in_network(Builder& b, const topology::Topology& topo, CollectiveOp op, const cost::CollectivePrice& price,
                      std::span<const int> ranks) {
  const auto nodes = by_node(topo, ranks);
  const auto h = static_cast<std::size_t>(price.flows.heads);
  STEPCAST_ASSERT(h >= 1 && nodes.size() >= 2, "heads exchange with the switches across nodes");
  // Head j of a node of g GPUs: its local GPU j x g / h, the spread the NICs' wiring gives (a node
  // with fewer GPUs than heads repeats some).
  const auto head = [&](const std::vector<int>& node, std::size_t j) { return node[j * node.size() / h]; };
  Pairs pairs;
  std::vector<double> weights;
  const auto add = [&](int from, int to, double weight) {
    pairs.emplace_back(from, to);
    weights.push_back(weight);
  };
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t j = 0; j < h; ++j) add(head(nodes[n], j), head(nodes[(n + 1) % nodes.size()], j), 1.0);
  }
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  const cost::NcclAlgorithm a = price.nccl->algorithm;
  for (const std::vector<int>& node : nodes) {
    const std::size_t g = node.size();
    if (g < 2) continue;
    if (a == cost::NcclAlgorithm::kCollNetDirect) {
      for (const int from : node) {
        for (const int to : node) {
          if (from != to) add(from, to, all_reduce ? 2.0 : 1.0);
        }
      }
    } else if (a == cost::NcclAlgorithm::kCollNetChain) {
      for (std::size_t j = 0; j < h; ++j) {
        const std::size_t start = j * g / h;
        for (std::size_t i = 0; i + 1 < g; ++i) {
          const int up = node[(start + i) % g];
          const int down = node[(start + i + 1) % g];
          add(down, up, 1.0);  // the reduction climbs toward the head
          add(up, down, 1.0);  // the result comes back down
        }
      }
    } else {
      const double share = all_reduce ? (as_double(g) + 1.0) / as_double(g) : (as_double(g) - 1.0) / as_double(g);
      for (std::size_t i = 0; i < g; ++i) add(node[i], node[(i + 1) % g], share * as_double(h));
    }
  }
  const des::Tick latency = des::to_ticks(price.flows.latency);
  b.steps.push_back(CollectivePhase{b.pattern(pairs, std::move(weights), price.flows.rate_per_rank),
                                    price.flows.bytes_per_rank, 1, latency});
}

// Send/recv (each rank to the next, as nccl-tests runs it) and all-to-all (S/N from every rank
// to every other) on NCCL's p2p channels: every pair at once, each at most its share of the
// rank's priced rate, arriving the model's latency after the last byte.
void build_p2p(Builder& b, cost::CollectiveOp op, const cost::CollectivePrice& price, std::span<const int> ranks) {
  const std::size_t n = ranks.size();
  if (n < 2) return;
  const des::Tick latency = des::to_ticks(price.flows.latency);
  Pairs pairs;
  if (op == CollectiveOp::kSendRecv) {
    for (std::size_t i = 0; i < n; ++i) pairs.emplace_back(ranks[i], ranks[(i + 1) % n]);
    b.steps.push_back(
        CollectivePhase{b.pattern(pairs, price.flows.rate_per_rank), price.flows.bytes_per_rank, 1, latency});
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) pairs.emplace_back(ranks[i], ranks[j]);
    }
  }
  const double peers = static_cast<double>(n - 1);
  b.steps.push_back(CollectivePhase{b.pattern(pairs, price.flows.rate_per_rank / peers),
                                    price.flows.bytes_per_rank / peers, 1, latency});
}

// Ring all-reduce: 2(N-1) steps of S/N per channel share; reduce-scatter/all-gather: N-1 steps.
// Broadcast and reduce: NCCL's pipelined chain; every chain link carries S at once, the fill costs
// (N-1) latencies (cost/collectives.cpp, ring()).
void build_ring(Builder& b, const topology::Topology& topo, CollectiveOp op, Bytes size, std::span<const int> ranks) {
  const std::size_t n = ranks.size();
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
    Pairs chain;
    for (std::size_t i = 0; i + 1 < n; ++i) chain.emplace_back(ranks[i], ranks[i + 1]);
    b.phases(b.pattern(chain), 1, size, static_cast<int>(n - 1));
    return;
  }
  const auto [pairs, channels] = ring_pairs(topo, ranks);
  const std::uint32_t p = b.pattern(pairs);
  const Bytes chunk = size / (as_double(n) * static_cast<double>(channels));
  const std::size_t steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  b.phases(p, steps, chunk);
}

// NCCL's double binary tree (Sanders, Speck and Traeff 2009): tree one in heap order over the
// ranks, tree two the same shifted by N/2 so that its interior ranks are tree one's leaves. Each
// tree carries S/2, pipelined: every edge moves S/2 up (reduce) and S/2 down (broadcast) at once,
// and the run pays the depth in latency once per direction.
void build_tree(Builder& b, CollectiveOp op, Bytes size, std::span<const int> ranks) {
  const std::size_t n = ranks.size();
  const int depth = static_cast<int>(std::bit_width(n - 1));
  Pairs up;
  Pairs down;
  for (std::size_t shift : {std::size_t{0}, n / 2}) {
    for (std::size_t i = 1; i < n; ++i) {
      const int child = ranks[(i + shift) % n];
      const int parent = ranks[((i - 1) / 2 + shift) % n];
      up.emplace_back(child, parent);
      down.emplace_back(parent, child);
    }
  }
  if (op == CollectiveOp::kAllReduce) {
    Pairs both = up;
    both.insert(both.end(), down.begin(), down.end());
    b.phases(b.pattern(both), 1, size / 2.0, 2 * depth);
  } else {
    b.phases(b.pattern(op == CollectiveOp::kReduce ? up : down), 1, size / 2.0, depth);
  }
}

// Horovod-style hierarchical all-reduce (cost/collectives.cpp, hierarchical()): intra-node ring
// reduce-scatter of S over g GPUs, g concurrent inter-node rings (one per local rank) all-reduce
// the S/g shard, intra-node ring all-gather. Reduce-scatter or all-gather keep one intra phase.
void build_hierarchical(Builder& b, CollectiveOp op, Bytes size, std::span<const int> ranks,
                        const topology::Topology& topo) {
  const auto nodes = by_node(topo, ranks);
  const std::size_t g = nodes.front().size();
  const std::size_t n = nodes.size();
  for (const auto& node : nodes) {
    if (node.size() != g) {
      throw InputError(
          fmt::format("a hierarchical {} needs the same number of ranks on every node; {} ranks over {} "
                      "nodes do not divide evenly (use a ring, or a rank count that fills whole nodes)",
                      cost::to_string(op), ranks.size(), n));
    }
  }
  Pairs intra;
  for (const auto& node : nodes) {
    for (std::size_t i = 0; i < g; ++i) intra.emplace_back(node[i], node[(i + 1) % g]);
  }
  Pairs inter;
  for (std::size_t l = 0; l < g; ++l) {
    for (std::size_t j = 0; j < n; ++j) inter.emplace_back(nodes[j][l], nodes[(j + 1) % n][l]);
  }
  const std::uint32_t pi = b.pattern(intra);
  const std::uint32_t pn = b.pattern(inter);
  const Bytes intra_chunk = size / as_double(g);
  const Bytes inter_chunk = size / as_double(g * n);
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  if (op != CollectiveOp::kAllGather && g > 1) b.phases(pi, g - 1, intra_chunk);
  if (n > 1) b.phases(pn, all_reduce ? 2 * (n - 1) : n - 1, inter_chunk);
  if (op != CollectiveOp::kReduceScatter && g > 1) b.phases(pi, g - 1, intra_chunk);
}

}  // namespace

namespace {

void build_pairs(Builder& b, const topology::Topology& topo, CollectiveOp op, Algorithm algorithm, Bytes size,
                 std::span<const int> ranks) {
  STEPCAST_ASSERT(!ranks.empty(), "a collective needs at least one rank");
  const std::size_t n = ranks.size();
  if (n == 1) return;
  const auto refuse = [&] {
    throw InputError(
        fmt::format("the {} algorithm does not implement {}", cost::to_string(algorithm), cost::to_string(op)));
  };
  switch (algorithm) {
    case Algorithm::kRing:
      if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) refuse();
      build_ring(b, topo, op, size, ranks);
      break;
    case Algorithm::kTree:
      if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kBroadcast && op != CollectiveOp::kReduce) refuse();
      build_tree(b, op, size, ranks);
      break;
    case Algorithm::kHierarchical:
      if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kReduceScatter && op != CollectiveOp::kAllGather) {
        refuse();
      }
      build_hierarchical(b, op, size, ranks, topo);
      break;
    case Algorithm::kDirect: {
      if (op == CollectiveOp::kSendRecv) {
        // nccl-tests' sendrecv_perf: every rank sends S to the next, one step.
        Pairs pairs;
        for (std::size_t i = 0; i < n; ++i) pairs.emplace_back(ranks[i], ranks[(i + 1) % n]);
        b.phases(b.pattern(pairs), 1, size);
      } else if (op == CollectiveOp::kAllToAll) {
        // Every rank sends S/N to each other rank, all at once; N-1 pairwise latencies.
        Pairs pairs;
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (i != j) pairs.emplace_back(ranks[i], ranks[j]);
          }
        }
        b.phases(b.pattern(pairs), 1, size / as_double(n), static_cast<int>(n - 1));
      } else {
        refuse();
      }
      break;
    }
  }
}

}  // namespace

namespace {

// One schedule whose phases move every group together: group g's pairs join pattern i of the
// first group, so the groups share the links they have in common.
template <typename BuildOne>
CollectiveSchedule merged_schedule(Network& network, std::span<const std::vector<int>> groups, BuildOne build_one) {
  CollectiveSchedule out;
  Builder merged;
  for (const std::vector<int>& group : groups) {
    Builder b;
    build_one(b, group);
    if (merged.steps.empty() && merged.patterns.empty()) {
      merged = std::move(b);
      continue;
    }
    STEPCAST_ASSERT(b.patterns.size() == merged.patterns.size() && b.steps.size() == merged.steps.size(),
                    "equal-sized groups build the same phases");
    for (std::size_t i = 0; i < b.patterns.size(); ++i) {
      merged.patterns[i].insert(merged.patterns[i].end(), b.patterns[i].begin(), b.patterns[i].end());
      merged.weights[i].insert(merged.weights[i].end(), b.weights[i].begin(), b.weights[i].end());
    }
  }
  for (std::size_t i = 0; i < merged.patterns.size(); ++i) {
    out.patterns.push_back(network.pattern(merged.patterns[i], merged.weights[i]));
    out.patterns.back().rate_cap = merged.caps[i];
    out.top_tier = std::max(out.top_tier, out.patterns.back().top_tier);
  }
  out.phases = std::move(merged.steps);
  return out;
}

}  // namespace

CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, CollectiveOp op,
                                    Algorithm algorithm, Bytes size, std::span<const std::vector<int>> groups) {
  return merged_schedule(network, groups, [&](Builder& b, const std::vector<int>& group) {
    build_pairs(b, topo, op, algorithm, size, group);
  });
}

CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, CollectiveOp op, Bytes size,
                                    const cost::CollectivePrice& price, std::span<const std::vector<int>> groups) {
  if (price.p2p) {
    return merged_schedule(network, groups,
                           [&](Builder& b, const std::vector<int>& group) { build_p2p(b, op, price, group); });
  }
  // The closed-form ring is the same shape as NCCL's ring; the other closed forms have their own phases.
  const bool ring_shaped = price.nccl || price.closed_form == Algorithm::kRing;
  if (!ring_shaped)
    return build_collective(network, topo, op, price.closed_form.value_or(Algorithm::kDirect), size, groups);
  if (price.flows.heads > 0) {
    return merged_schedule(network, groups, [&](Builder& b, const std::vector<int>& group) {
      build_in_network(b, topo, op, price, group);
    });
  }
  return merged_schedule(network, groups,
                         [&](Builder& b, const std::vector<int>& group) { build_priced(b, topo, price, group); });
}

CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, CollectiveOp op,
                                    Algorithm algorithm, Bytes size, std::span<const int> ranks) {
  const std::vector<std::vector<int>> one{std::vector<int>(ranks.begin(), ranks.end())};
  return build_collective(network, topo, op, algorithm, size, one);
}

void CollectiveRunner::start(const CollectiveSchedule& schedule, std::uint64_t tag) {
  STEPCAST_ASSERT(network_ != nullptr, "a collective runner needs a network");
  std::uint32_t id = 0;
  if (free_.empty()) {
    id = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  active_[id] = Active{&schedule, 0, tag};
  launch(id);
}

// Starts the current phase of collective `id`; an empty schedule completes through a zero-byte,
// zero-latency transfer so that completions always come from the network, in event order.
void CollectiveRunner::launch(std::uint32_t id) {
  const Active& a = active_[id];
  if (a.schedule->phases.empty()) {
    network_->start(nothing_, Bytes(0.0), id);
    return;
  }
  const CollectivePhase& phase = a.schedule->phases[a.phase];
  const TransferPattern& pattern = a.schedule->patterns[phase.pattern];
  if (phase.latency) {
    network_->start_with_latency(pattern, phase.bytes, id, *phase.latency);
  } else {
    network_->start(pattern, phase.bytes, id, phase.latency_steps);
  }
}

void CollectiveRunner::on_transfer_done(des::Tick now, std::uint64_t tag) {
  const auto id = static_cast<std::uint32_t>(tag);
  Active& a = active_[id];
  ++a.phase;
  if (a.phase < a.schedule->phases.size()) {
    launch(id);
    return;
  }
  const std::uint64_t user_tag = a.tag;
  free_.push_back(id);
  observer_->on_collective_done(now, user_tag);
}

namespace {

struct DoneAt final : CollectiveObserver {
  des::Tick at = 0;
  void on_collective_done(des::Tick now, std::uint64_t) override { at = now; }
};

template <typename Build>
Seconds run_alone(const topology::Topology& topo, Build build) {
  des::Engine engine;
  DoneAt done;
  CollectiveRunner runner(done);
  Network network(topo, engine, runner);
  runner.attach(network);
  engine.add_model(network);
  const CollectiveSchedule schedule = build(network);
  runner.start(schedule, 0);
  engine.run();
  return des::to_seconds(done.at);
}

}  // namespace

Seconds simulate_collective(const topology::Topology& topo, CollectiveOp op, Algorithm algorithm, Bytes size,
                            std::span<const int> ranks) {
  return run_alone(topo, [&](Network& network) { return build_collective(network, topo, op, algorithm, size, ranks); });
}

Seconds simulate_collective(const topology::Topology& topo, CollectiveOp op, Bytes size,
                            const cost::CollectivePrice& price, std::span<const int> ranks) {
  const std::vector<std::vector<int>> one{std::vector<int>(ranks.begin(), ranks.end())};
  return run_alone(topo, [&](Network& network) { return build_collective(network, topo, op, size, price, one); });
}

}  // namespace stepcast::sim
