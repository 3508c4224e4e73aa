// Closed-form alpha-beta costs of collectives: each message costs alpha + bytes / bandwidth
// (Hockney 1994), summed over an algorithm's sequential steps. One function per algorithm, each
// with its derivation; sizes and busbw follow nccl-tests' doc/PERFORMANCE.md.
#include "stepcast/cost/collectives.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/numeric.hpp"

namespace stepcast::cost {
namespace {

using topology::CommTiers;

// What a flat algorithm (ring, chain, tree) sees of the machine: one bandwidth, one alpha.
struct Fabric {
  BytesPerSecond bw;
  Seconds alpha;
  Bottleneck bottleneck = Bottleneck::kNone;
  std::string_view bw_formula;     // for explanations
  std::string_view alpha_formula;  // for explanations
};

// The terms of one estimate, before algbw and busbw.
struct Terms {
  Bytes bytes_sent;
  int steps = 0;
  Seconds latency_time;
  Seconds bandwidth_time;
  Bottleneck bottleneck = Bottleneck::kNone;
};

// ceil(log2 n) for n >= 1: the depth of a balanced binary tree over n ranks.
int ceil_log2(int n) { return static_cast<int>(std::bit_width(static_cast<unsigned>(n - 1))); }

std::string num(double v) { return fmt::format("{:.9g}", v); }
// Byte counts as users type them: whole numbers in full ("14000000000"), others with 9 digits.
std::string byte_count(Bytes b) {
  constexpr double kExactInDouble = 0x1.0p53;
  const double v = b.value();
  if (v == std::floor(v) && std::fabs(v) < kExactInDouble) return fmt::format("{:.0f}", v);
  return num(v);
}
std::string size_text(Bytes b) { return fmt::format("{} ({} B)", format_bytes(b), byte_count(b)); }

// Explanations are built only on request (ex != nullptr), so the estimate path allocates nothing.
void add(Explanation& ex, std::string label, std::string formula, std::string value) {
  ex.push_back({std::move(label), std::move(formula), std::move(value)});
}

// The bandwidth a flat algorithm gets. On one node: the GPU-to-GPU route. Across nodes: NCCL
// builds one ring channel per NIC (NVIDIA/nccl src/graph/search.cc, rings cross nodes on
// different NICs), so the node's NICs together carry each crossing; a node's egress is then the
// same 2(N-1)/N*S as one rank's, and the bottleneck is min(intra_bw, node_bw) (intra_bw plays no
// part with one GPU per node). Adjacent ring nodes share a leaf switch in NCCL's ordering, so the
// fabric core's oversubscription does not slow a ring.
Fabric flat_fabric(const CommTiers& t) {
  if (t.nodes <= 1)
    return {t.intra_bw, t.intra_latency, Bottleneck::kIntraNode, "intra_bw (one node)", "intra_latency"};
  if (t.ranks_per_node > 1 && t.intra_bw < t.node_bw) {
    return {t.intra_bw, t.inter_latency, Bottleneck::kIntraNode, "min(intra_bw, node_bw) (spans nodes)",
            "inter_latency"};
  }
  return {t.node_bw, t.inter_latency, Bottleneck::kNodeNics,
          t.ranks_per_node > 1 ? "min(intra_bw, node_bw) (spans nodes)" : "node_bw (one rank per node)",
          "inter_latency"};
}

// steps x alpha + bytes_factor x S / B: the shape of every flat algorithm below.
Terms flat(Bytes size, double bytes_factor, int steps, const Fabric& f) {
  STEPCAST_ASSERT(f.bw.value() > 0.0, "the topology's bandwidths are validated positive");
  Terms r;
  r.bytes_sent = size * bytes_factor;
  r.steps = steps;
  r.latency_time = f.alpha * as_double(steps);
  r.bandwidth_time = r.bytes_sent / f.bw;
  r.bottleneck = f.bottleneck;
  return r;
}

void explain_flat(Explanation& ex, std::string_view bytes_formula, double bytes_factor, Bytes size,
                  std::string_view steps_formula, const Fabric& f, const Terms& r) {
  add(ex, "bandwidth B", std::string(f.bw_formula), format_bandwidth(f.bw));
  add(ex, "latency alpha", std::string(f.alpha_formula), format_seconds(f.alpha));
  add(ex, "bytes sent per rank", fmt::format("{} x S = {} x {} B", bytes_formula, num(bytes_factor), byte_count(size)),
      size_text(r.bytes_sent));
  add(ex, "steps", std::string(steps_formula), fmt::format("{}", r.steps));
  add(ex, "latency term", fmt::format("steps x alpha = {} x {}", r.steps, format_seconds(f.alpha)),
      format_seconds(r.latency_time));
  add(ex, "bandwidth term",
      fmt::format("bytes sent per rank / B = {} B / {}", byte_count(r.bytes_sent), format_bandwidth(f.bw)),
      format_seconds(r.bandwidth_time));
}

// Ring all-reduce = ring reduce-scatter + ring all-gather: each rank sends 2(N-1) chunks of S/N,
// one per step: 2(N-1)*alpha + 2(N-1)/N*S/B (Patarasuk and Yuan 2009, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations", JPDC 69(2); the gamma term of the
// reduction is left out: GPUs reduce far faster than links carry).
// Ring reduce-scatter and all-gather alone: (N-1)*alpha + (N-1)/N*S/B (Thakur, Rabenseifner and
// Gropp 2005, "Optimization of collective communication operations in MPICH", IJHPCA 19(1),
// the Allgather and Reduce-Scatter sections).
// Ring broadcast and reduce are NCCL's pipelined chain: S flows through N-1 links, each rank
// sends S once; pipelined in small chunks the bandwidth term is S/B and the fill is (N-1)*alpha.
Terms ring(CollectiveOp op, Bytes size, const CommTiers& t, Explanation* ex) {
  const int n = t.ranks;
  const Fabric f = flat_fabric(t);
  double factor = 1.0;
  int steps = n - 1;
  std::string_view bytes_formula = "1";
  std::string_view steps_formula = "N-1";
  switch (op) {
    case CollectiveOp::kAllReduce:
      factor = 2.0 * as_double(n - 1) / as_double(n);
      steps = 2 * (n - 1);
      bytes_formula = "2(N-1)/N";
      steps_formula = "2(N-1)";
      break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      factor = as_double(n - 1) / as_double(n);
      bytes_formula = "(N-1)/N";
      break;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      break;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv:
      STEPCAST_UNREACHABLE("is_supported() refused a ring for this collective");
  }
  const Terms r = flat(size, factor, steps, f);
  if (ex) explain_flat(*ex, bytes_formula, factor, size, steps_formula, f, r);
  return r;
}

// NCCL's double binary tree (Sanders, Speck and Traeff 2009, "Two-tree algorithms for full
// bandwidth broadcast, reduction and scan", Parallel Computing 35(12); NCCL 2.4 adopted it).
// Each of the two trees carries half the buffer, S/2; every rank is interior in at most one.
// All-reduce = reduce up each tree, then broadcast down it. Each tree has N-1 edges, and each
// edge carries S/2 up and S/2 down, so the two trees move 2(N-1)*S in all: 2(N-1)/N*S per rank
// on average, the ring's figure (an interior rank sends up to 2S, a leaf S, N=2 exactly S).
// NCCL's tuning model (src/graph/tuning.cc) likewise gives tree all-reduce about the ring's bus
// bandwidth, so the bandwidth term is 2(N-1)/N*S/B with the ring's B. Reduce up and broadcast
// down each cross the tree's depth ceil(log2 N): 2*ceil(log2 N) latency steps.
// Broadcast (reduce) alone: an interior rank sends S/2 to each of its two children (its parent)
// in one tree and at most S/2 in the other: S on the busiest rank, ceil(log2 N) steps.
Terms tree(CollectiveOp op, Bytes size, const CommTiers& t, Explanation* ex) {
  const int n = t.ranks;
  const Fabric f = flat_fabric(t);
  const int depth = ceil_log2(n);
  if (op == CollectiveOp::kAllReduce) {
    const double factor = 2.0 * as_double(n - 1) / as_double(n);
    const Terms r = flat(size, factor, 2 * depth, f);
    if (ex) explain_flat(*ex, "2(N-1)/N (average over ranks)", factor, size, "2 x ceil(log2 N)", f, r);
    return r;
  }
  STEPCAST_ASSERT(op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce,
                  "is_supported() refused a tree for this collective");
  const Terms r = flat(size, 1.0, depth, f);
  if (ex) explain_flat(*ex, "1 (two trees, S/2 each)", 1.0, size, "ceil(log2 N)", f, r);
  return r;
}

// Hierarchical all-reduce: intra-node reduce-scatter over the g GPUs of each node, an inter-node
// ring all-reduce over n nodes of each GPU's S/g shard, then an intra-node all-gather (Horovod's
// hierarchical all-reduce; Jia et al. 2018, "Highly scalable deep learning training system with
// mixed-precision", arXiv:1807.11205, sec. 3.3). The g concurrent inter-node rings share the
// node's NICs, which carry g x 2(n-1)/n x S/g = 2(n-1)/n x S:
//   time = 2(g-1)/g*S/intra_bw + 2(n-1)/n*S/node_bw + 2(g-1)*intra_latency + 2(n-1)*inter_latency.
// Hierarchical reduce-scatter (all-gather) keeps one intra phase and the inter-node
// reduce-scatter (all-gather) of the shard: (g-1)/g*S/intra_bw + (n-1)/n*S/node_bw, with
// (g-1) intra and (n-1) inter steps; each GPU ends with its S/(g n) = S/N piece.
Terms hierarchical(CollectiveOp op, Bytes size, const CommTiers& t, Explanation* ex) {
  const int g = t.ranks_per_node;
  const int nodes = t.nodes;
  if (g * nodes != t.ranks) {
    throw InputError(
        fmt::format("a hierarchical {} needs the same number of ranks on every node; {} ranks over {} nodes "
                    "do not divide evenly (use a ring, or a rank count that fills whole nodes)",
                    to_string(op), t.ranks, nodes));
  }
  const double phases = op == CollectiveOp::kAllReduce ? 2.0 : 1.0;
  const double intra_factor = phases * as_double(g - 1) / as_double(g);
  const double inter_factor = phases * as_double(nodes - 1) / as_double(nodes);
  const int intra_steps = static_cast<int>(phases) * (g - 1);
  const int inter_steps = static_cast<int>(phases) * (nodes - 1);

  Seconds intra_time;
  if (g > 1) {
    STEPCAST_ASSERT(t.intra_bw.value() > 0.0, "the topology's bandwidths are validated positive");
    intra_time = size * intra_factor / t.intra_bw;
  }
  Seconds inter_time;
  if (nodes > 1) {
    STEPCAST_ASSERT(t.node_bw.value() > 0.0, "the topology's bandwidths are validated positive");
    inter_time = size * inter_factor / t.node_bw;
  }
  Terms r;
  r.bytes_sent = size * intra_factor + size * inter_factor / as_double(g);
  r.steps = intra_steps + inter_steps;
  r.latency_time = t.intra_latency * as_double(intra_steps) + t.inter_latency * as_double(inter_steps);
  r.bandwidth_time = intra_time + inter_time;
  r.bottleneck = inter_time > intra_time ? Bottleneck::kNodeNics : Bottleneck::kIntraNode;

  if (ex) {
    const std::string_view p = op == CollectiveOp::kAllReduce ? "2" : "";
    add(*ex, "GPUs per node g, nodes n", "ranks_per_node, nodes", fmt::format("g = {}, n = {}", g, nodes));
    add(*ex, "intra-node bandwidth", "intra_bw", format_bandwidth(t.intra_bw));
    add(*ex, "node bandwidth", "node_bw (the node's NICs, shared by its g GPUs)", format_bandwidth(t.node_bw));
    add(*ex, "bytes sent per rank",
        fmt::format("{0}(g-1)/g x S + {0}(n-1)/n x S/g = {1} x {2} B + {3} x {2} B / {4}", p, num(intra_factor),
                    byte_count(size), num(inter_factor), g),
        size_text(r.bytes_sent));
    add(*ex, "intra-node bandwidth term",
        fmt::format("{}(g-1)/g x S / intra_bw = {} x {} B / {}", p, num(intra_factor), byte_count(size),
                    format_bandwidth(t.intra_bw)),
        format_seconds(intra_time));
    add(*ex, "inter-node bandwidth term",
        fmt::format("{}(n-1)/n x S / node_bw = {} x {} B / {}", p, num(inter_factor), byte_count(size),
                    format_bandwidth(t.node_bw)),
        format_seconds(inter_time));
    add(*ex, "steps", fmt::format("{0}(g-1) + {0}(n-1) = {1} + {2}", p, intra_steps, inter_steps),
        fmt::format("{}", r.steps));
    add(*ex, "latency term",
        fmt::format("{} x intra_latency + {} x inter_latency = {} x {} + {} x {}", intra_steps, inter_steps,
                    intra_steps, format_seconds(t.intra_latency), inter_steps, format_seconds(t.inter_latency)),
        format_seconds(r.latency_time));
    add(*ex, "bandwidth term", "intra-node term + inter-node term", format_seconds(r.bandwidth_time));
  }
  return r;
}

// Direct all-to-all: each rank sends S/N to each of the N-1 others, (N-1)/N*S in all, in N-1
// pairwise steps (the pairwise-exchange schedule of Thakur et al. 2005's Alltoall section). Of that,
// (g-1)/N*S stays in the node over intra_bw; (N-g)/N*S leaves it, and the node's g ranks send
// theirs through the node's NICs at once, through a fabric core that delivers 1/oversubscription
// of the NICs' rate when all nodes exchange: g(N-g)/N*S / (node_bw/oversubscription). The two
// parts run concurrently, so the bandwidth term is the larger one.
Terms all_to_all(Bytes size, const CommTiers& t, Explanation* ex) {
  const int n = t.ranks;
  const int g = t.ranks_per_node;
  const Fabric f = flat_fabric(t);
  Seconds intra_time;
  if (g > 1) {
    STEPCAST_ASSERT(t.intra_bw.value() > 0.0, "the topology's bandwidths are validated positive");
    intra_time = size * (as_double(g - 1) / as_double(n)) / t.intra_bw;
  }
  Seconds inter_time;
  BytesPerSecond core_bw;
  if (t.nodes > 1) {
    STEPCAST_ASSERT(t.node_bw.value() > 0.0 && t.oversubscription >= 1.0, "validated by the topology loader");
    core_bw = t.node_bw / t.oversubscription;
    inter_time = size * (as_double(g) * as_double(n - g) / as_double(n)) / core_bw;
  }
  Terms r;
  r.bytes_sent = size * (as_double(n - 1) / as_double(n));
  r.steps = n - 1;
  r.latency_time = f.alpha * as_double(r.steps);
  r.bandwidth_time = std::max(intra_time, inter_time);
  r.bottleneck = inter_time > intra_time ? Bottleneck::kNodeNics : Bottleneck::kIntraNode;
  if (ex) {
    add(*ex, "ranks per node g", "ranks_per_node", fmt::format("{}", g));
    add(*ex, "latency alpha", std::string(f.alpha_formula), format_seconds(f.alpha));
    add(*ex, "bytes sent per rank", fmt::format("(N-1)/N x S = {}/{} x {} B", n - 1, n, byte_count(size)),
        size_text(r.bytes_sent));
    add(*ex, "intra-node part",
        fmt::format("(g-1)/N x S / intra_bw = {}/{} x {} B / {}", g - 1, n, byte_count(size),
                    format_bandwidth(t.intra_bw)),
        format_seconds(intra_time));
    add(*ex, "inter-node part",
        fmt::format("g(N-g)/N x S / (node_bw / oversubscription) = {} x {}/{} x {} B / ({} / {})", g, n - g, n,
                    byte_count(size), format_bandwidth(t.node_bw), num(t.oversubscription)),
        format_seconds(inter_time));
    add(*ex, "steps", "N-1", fmt::format("{}", r.steps));
    add(*ex, "latency term", fmt::format("steps x alpha = {} x {}", r.steps, format_seconds(f.alpha)),
        format_seconds(r.latency_time));
    add(*ex, "bandwidth term", "max(intra-node part, inter-node part)", format_seconds(r.bandwidth_time));
  }
  return r;
}

// Send/recv as nccl-tests' sendrecv_perf runs it: every rank sends S to the next and receives S
// from the previous, in one step. On one node the route is intra_bw; across nodes the ranks at a
// node's edge send through their own route out of the node, gpu_nic_bw (and intra_bw bounds the
// others).
Terms send_recv(Bytes size, const CommTiers& t, Explanation* ex) {
  Fabric f = flat_fabric(t);
  if (t.nodes > 1) {
    f.bw = t.gpu_nic_bw;
    f.bottleneck = Bottleneck::kGpuNic;
    f.bw_formula = "gpu_nic_bw (spans nodes)";
    if (t.ranks_per_node > 1 && t.intra_bw < t.gpu_nic_bw) {
      f.bw = t.intra_bw;
      f.bottleneck = Bottleneck::kIntraNode;
      f.bw_formula = "min(intra_bw, gpu_nic_bw) (spans nodes)";
    }
  }
  const Terms r = flat(size, 1.0, 1, f);
  if (ex) explain_flat(*ex, "1", 1.0, size, "1", f, r);
  return r;
}

std::string_view busbw_formula(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "2(N-1)/N";
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return "(N-1)/N";
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      return "1";
  }
  return "?";
}

CollectiveCost estimate(CollectiveOp op, Algorithm algorithm, Bytes size, const CommTiers& t, Explanation* ex) {
  if (!std::isfinite(size.value()) || size.value() < 0.0) {
    throw InputError(fmt::format("the size must be a finite number of bytes >= 0, got {} B", byte_count(size)));
  }
  if (t.ranks < 1) throw InputError(fmt::format("a collective needs at least 1 rank, got {}", t.ranks));
  if (!is_supported(op, algorithm)) {
    throw InputError(fmt::format("algorithm \"{}\" is not modelled for {}; {} accepts: {}", to_string(algorithm),
                                 to_string(op), to_string(op), accepted_algorithms(op)));
  }
  STEPCAST_ASSERT(t.nodes >= 1 && t.ranks_per_node >= 1 && t.nodes <= t.ranks,
                  "CommTiers: nodes and ranks per node are at least 1, and no node without a rank");

  if (ex) {
    add(*ex, "size S", "nccl-tests' size", size_text(size));
    add(*ex, "ranks N", fmt::format("{} node(s) x {} rank(s) per node", t.nodes, t.ranks_per_node),
        fmt::format("{}", t.ranks));
  }
  Terms r;
  if (t.ranks == 1) {
    if (ex) add(*ex, "one rank", "nothing to move", "0 s");
  } else {
    switch (algorithm) {
      case Algorithm::kRing:
        r = ring(op, size, t, ex);
        break;
      case Algorithm::kTree:
        r = tree(op, size, t, ex);
        break;
      case Algorithm::kHierarchical:
        r = hierarchical(op, size, t, ex);
        break;
      case Algorithm::kDirect:
        r = op == CollectiveOp::kAllToAll ? all_to_all(size, t, ex) : send_recv(size, t, ex);
        break;
    }
  }

  CollectiveCost c;
  c.size = size;
  c.ranks = t.ranks;
  c.nodes = t.nodes;
  c.bytes_sent_per_rank = r.bytes_sent;
  c.steps = r.steps;
  c.latency_time = r.latency_time;
  c.bandwidth_time = r.bandwidth_time;
  c.time = r.latency_time + r.bandwidth_time;
  c.bottleneck = r.bottleneck;
  // algbw and busbw as nccl-tests defines them (doc/PERFORMANCE.md): algbw = S / t.
  const double factor = busbw_factor(op, t.ranks);
  if (c.time.value() > 0.0) {
    c.algbw = size / c.time;
    c.busbw = c.algbw * factor;
  }
  if (ex) {
    add(*ex, "time",
        fmt::format("latency term + bandwidth term = {} + {}", format_seconds(c.latency_time),
                    format_seconds(c.bandwidth_time)),
        format_seconds(c.time));
    add(*ex, "algbw", fmt::format("S / time = {} B / {}", byte_count(size), format_seconds(c.time)),
        format_bandwidth(c.algbw));
    add(*ex, "busbw", fmt::format("algbw x {} = {} x {}", busbw_formula(op), format_bandwidth(c.algbw), num(factor)),
        format_bandwidth(c.busbw));
  }
  return c;
}

}  // namespace

double busbw_factor(CollectiveOp op, int ranks) {
  STEPCAST_ASSERT(ranks >= 1, "a collective has at least one rank");
  // nccl-tests doc/PERFORMANCE.md: the factor that makes busbw comparable to the hardware's
  // bandwidth whatever the rank count.
  const double n = as_double(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return (n - 1.0) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      return 1.0;
  }
  STEPCAST_UNREACHABLE("every CollectiveOp is listed above");
}

CollectiveCost estimate_collective(CollectiveOp op, Algorithm algorithm, Bytes size, const CommTiers& tiers) {
  return estimate(op, algorithm, size, tiers, nullptr);
}

CollectiveCost explain_collective(CollectiveOp op, Algorithm algorithm, Bytes size, const CommTiers& tiers) {
  Explanation ex;
  CollectiveCost c = estimate(op, algorithm, size, tiers, &ex);
  c.explanation = std::move(ex);
  return c;
}

}  // namespace stepcast::cost
