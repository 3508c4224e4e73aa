// The Topology class: the graph in a Boost.Graph adjacency list, routes by bidirectional
// breadth-first search, and the per-node and per-GPU figures that tiers() reads.
#include "stepcast/topology/topology.hpp"

#include <algorithm>
#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast::topology {

struct Topology::Graph {
  using Adjacency = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                          boost::property<boost::edge_index_t, LinkId>>;
  Adjacency adjacency;
  // Per GPU (rank order).
  std::vector<int> gpu_node;
  std::vector<BytesPerSecond> gpu_nic_bw;
  std::vector<Seconds> latency_from_first;  // route latency from GPU 0 (its BFS tree)
  // Per node.
  std::vector<BytesPerSecond> node_bw;
  std::vector<BytesPerSecond> intra_bw;  // zero for a node with one GPU
  std::vector<Seconds> intra_latency;
  std::vector<std::int64_t> first_hop_out;  // the outside vertex of the node's first leaving link; -1 if none
  // The NICs a GPU sends through, each with its rate out of the node (its GPU link capped by the
  // NIC's uplink); per node, all its NICs, for GPUs wired to none (graph form, NICs behind PCIe).
  struct NicShare {
    VertexId nic = 0;
    BytesPerSecond bw;
    LinkId link = 0;  // the GPU's link to it (unused in node_nics)
  };
  std::vector<std::vector<NicShare>> gpu_nics;
  std::vector<std::vector<NicShare>> node_nics;
  // tiers() results by (ranks, stride, concurrency): plan search asks for the same few groups many times.
  mutable std::mutex tiers_mutex;
  mutable std::map<std::tuple<int, int, Concurrency>, CommTiers> tiers_cache;
};

namespace {

constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();

struct Visit {
  LinkId parent = kNoLink;  // the link the search reached this vertex by
  int depth = 0;
};

// The two sides' visits of one route search, by vertex id: a vertex is visited by a side when its
// stamp is the search's. One per thread, grown to the largest topology searched, and never
// cleared: each search takes a new stamp (a simulated all-to-all asks for a route per GPU pair).
struct RouteScratch {
  std::uint64_t search = 0;
  std::array<std::vector<std::uint64_t>, 2> stamp;
  std::array<std::vector<Visit>, 2> visit;
};

VertexId other_end(const Link& l, VertexId v) { return l.a == v ? l.b : l.a; }

}  // namespace

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kSwitch:
      return "switch";
  }
  STEPCAST_UNREACHABLE("every VertexKind is named");
}

std::string_view to_string(LinkTier tier) {
  switch (tier) {
    case LinkTier::kIntraNode:
      return "intra-node";
    case LinkTier::kNic:
      return "nic";
    case LinkTier::kFabric:
      return "fabric";
  }
  STEPCAST_UNREACHABLE("every LinkTier is named");
}

std::string_view to_string(GpuNicPath path) {
  switch (path) {
    case GpuNicPath::kPix:
      return "PIX";
    case GpuNicPath::kPxb:
      return "PXB";
    case GpuNicPath::kPhb:
      return "PHB";
    case GpuNicPath::kNode:
      return "NODE";
    case GpuNicPath::kSys:
      return "SYS";
  }
  STEPCAST_UNREACHABLE("every GpuNicPath is named");
}

std::string_view to_string(HostCpu cpu) {
  switch (cpu) {
    case HostCpu::kIntel:
      return "intel";
    case HostCpu::kAmd:
      return "amd";
    case HostCpu::kArm:
      return "arm";
  }
  STEPCAST_UNREACHABLE("every HostCpu is named");
}

Topology::Topology(std::string name, std::string source, GpuSpec gpu, std::vector<Vertex> vertices,
                   std::vector<Link> links, double oversubscription, int trays_per_node, int gpus_per_tray)
    : name_(std::move(name)),
      source_(std::move(source)),
      gpu_(std::move(gpu)),
      vertices_(std::move(vertices)),
      links_(std::move(links)),
      oversubscription_(oversubscription),
      trays_per_node_(trays_per_node),
      gpus_per_tray_(gpus_per_tray),
      graph_(std::make_unique<Graph>()) {
  STEPCAST_ASSERT(oversubscription_ >= 1.0, "oversubscription is a ratio >= 1");
  Graph& g = *graph_;
  g.adjacency = Graph::Adjacency(vertices_.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = links_[i];
    STEPCAST_ASSERT(l.a < vertices_.size() && l.b < vertices_.size() && l.a != l.b, "links join two known vertices");
    STEPCAST_ASSERT(l.bandwidth.value() > 0.0 && l.latency.value() >= 0.0, "the loader checks link figures");
    boost::add_edge(l.a, l.b, static_cast<LinkId>(i), g.adjacency);
  }

  // GPUs in rank order: node by node, file order within a node.
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    if (vertices_[v].kind == VertexKind::kGpu) gpus_.push_back(static_cast<VertexId>(v));
  }
  STEPCAST_ASSERT(!gpus_.empty(), "the loader refuses a topology without GPUs");
  std::stable_sort(gpus_.begin(), gpus_.end(),
                   [&](VertexId a, VertexId b) { return vertices_[a].node < vertices_[b].node; });
  node_count_ = vertices_[gpus_.back()].node + 1;
  std::vector<int> first_gpu(static_cast<std::size_t>(node_count_) + 1, -1);
  std::vector<int> per_node(static_cast<std::size_t>(node_count_), 0);
  for (std::size_t r = 0; r < gpus_.size(); ++r) {
    const int node = vertices_[gpus_[r]].node;
    STEPCAST_ASSERT(node >= 0, "every GPU sits in a node");
    g.gpu_node.push_back(node);
    auto& first = first_gpu[static_cast<std::size_t>(node)];
    if (first < 0) first = static_cast<int>(r);
    ++per_node[static_cast<std::size_t>(node)];
  }
  for (const int n : per_node) STEPCAST_ASSERT(n > 0, "nodes are numbered 0..N-1 and each holds a GPU");
  gpus_per_node_ = *std::max_element(per_node.begin(), per_node.end());

  const std::vector<BytesPerSecond> uplink = index_node_links();
  index_intra_node(first_gpu, per_node);
  index_gpu_nics(first_gpu, uplink);
  index_latency_from_first();
}

// Links leaving a node: its bandwidth out, and the first vertex outside it (its leaf switch); per
// vertex, its capacity to outside its node.
std::vector<BytesPerSecond> Topology::index_node_links() {
  Graph& g = *graph_;
  const auto nodes = static_cast<std::size_t>(node_count_);
  g.node_bw.assign(nodes, BytesPerSecond{});
  g.first_hop_out.assign(nodes, -1);
  std::vector<BytesPerSecond> uplink(vertices_.size());  // per vertex: capacity to outside its node
  for (const Link& l : links_) {
    const int na = vertices_[l.a].node;
    const int nb = vertices_[l.b].node;
    if (na == nb) continue;
    uplink[l.a] += l.bandwidth;
    uplink[l.b] += l.bandwidth;
    for (const auto& [node, outside] : {std::pair{na, l.b}, std::pair{nb, l.a}}) {
      if (node < 0 || node >= node_count_) continue;
      g.node_bw[static_cast<std::size_t>(node)] += l.bandwidth;
      auto& hop = g.first_hop_out[static_cast<std::size_t>(node)];
      if (hop < 0) hop = outside;
    }
  }
  return uplink;
}

// Intra-node figures from the route between the node's first two GPUs.
void Topology::index_intra_node(const std::vector<int>& first_gpu, const std::vector<int>& per_node) {
  Graph& g = *graph_;
  const auto nodes = static_cast<std::size_t>(node_count_);
  g.intra_bw.assign(nodes, BytesPerSecond{});
  g.intra_latency.assign(nodes, Seconds{});
  for (std::size_t n = 0; n < nodes; ++n) {
    if (per_node[n] < 2) continue;
    const int a = first_gpu[n];
    BytesPerSecond bottleneck(std::numeric_limits<double>::infinity());
    Seconds latency;
    for (const Hop& h : route(a, a + 1)) {
      bottleneck = std::min(bottleneck, links_[h.link].bandwidth);
      latency += links_[h.link].latency;
    }
    g.intra_bw[n] = bottleneck;
    g.intra_latency[n] = latency;
  }
}

// What one GPU alone can send out of its node: each of its NIC links, capped by that NIC's
// uplink. A GPU with no NIC of its own (graph form, NICs behind a PCIe switch) falls back to
// the bottleneck of its route to the first GPU of another node.
void Topology::index_gpu_nics(const std::vector<int>& first_gpu, const std::vector<BytesPerSecond>& uplink) {
  Graph& g = *graph_;
  const auto nodes = static_cast<std::size_t>(node_count_);
  g.gpu_nic_bw.assign(gpus_.size(), BytesPerSecond{});
  g.gpu_nics.resize(gpus_.size());
  g.node_nics.resize(nodes);
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    const int node = vertices_[v].node;
    if (vertices_[v].kind == VertexKind::kNic && node >= 0 && node < node_count_) {
      g.node_nics[static_cast<std::size_t>(node)].push_back({static_cast<VertexId>(v), uplink[v]});
    }
  }
  for (std::size_t r = 0; r < gpus_.size(); ++r) {
    const VertexId v = gpus_[r];
    BytesPerSecond out;
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g.adjacency))) {
      const Link& l = links_[boost::get(boost::edge_index, g.adjacency, e)];
      const VertexId w = other_end(l, v);
      if (vertices_[w].kind == VertexKind::kNic && vertices_[w].node == vertices_[v].node) {
        const BytesPerSecond bw = std::min(l.bandwidth, uplink[w]);
        out += bw;
        g.gpu_nics[r].push_back({w, bw, boost::get(boost::edge_index, g.adjacency, e)});
      }
    }
    if (out.value() == 0.0 && node_count_ > 1) {
      const int node = g.gpu_node[r];
      const int other = first_gpu[node == 0 ? 1 : 0];
      BytesPerSecond bottleneck(std::numeric_limits<double>::infinity());
      for (const Hop& h : route(static_cast<int>(r), other))
        bottleneck = std::min(bottleneck, links_[h.link].bandwidth);
      out = bottleneck;
    }
    g.gpu_nic_bw[r] = out;
  }
}

// Latency from GPU 0 to every GPU along a breadth-first tree that no other GPU forwards
// through; tiers() reads the longest of these for a group's inter-node latency.
void Topology::index_latency_from_first() {
  Graph& g = *graph_;
  std::vector<Seconds> latency(vertices_.size());
  std::vector<bool> seen(vertices_.size(), false);
  std::deque<VertexId> queue{gpus_[0]};
  seen[gpus_[0]] = true;
  while (!queue.empty()) {
    const VertexId v = queue.front();
    queue.pop_front();
    if (vertices_[v].kind == VertexKind::kGpu && v != gpus_[0]) continue;
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g.adjacency))) {
      const Link& l = links_[boost::get(boost::edge_index, g.adjacency, e)];
      const VertexId w = other_end(l, v);
      if (seen[w]) continue;
      seen[w] = true;
      latency[w] = latency[v] + l.latency;
      queue.push_back(w);
    }
  }
  g.latency_from_first.reserve(gpus_.size());
  for (const VertexId v : gpus_) g.latency_from_first.push_back(latency[v]);
}

Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

int Topology::node_of_gpu(int gpu_index) const {
  STEPCAST_ASSERT(gpu_index >= 0 && gpu_index < gpu_count(), "GPU index in range");
  return graph_->gpu_node[static_cast<std::size_t>(gpu_index)];
}

std::vector<Hop> Topology::route(int src_gpu, int dst_gpu) const {
  STEPCAST_ASSERT(src_gpu >= 0 && src_gpu < gpu_count() && dst_gpu >= 0 && dst_gpu < gpu_count(), "GPU index in range");
  if (src_gpu == dst_gpu) return {};
  return route_between(gpus_[static_cast<std::size_t>(src_gpu)], gpus_[static_cast<std::size_t>(dst_gpu)]);
}

std::vector<std::vector<Hop>> Topology::routes(int src_gpu, int dst_gpu) const {
  STEPCAST_ASSERT(src_gpu >= 0 && src_gpu < gpu_count() && dst_gpu >= 0 && dst_gpu < gpu_count(), "GPU index in range");
  const Graph& g = *graph_;
  const auto& out = g.gpu_nics[static_cast<std::size_t>(src_gpu)];
  const auto& in = g.gpu_nics[static_cast<std::size_t>(dst_gpu)];
  const std::size_t k = std::min(out.size(), in.size());
  if (src_gpu == dst_gpu || k < 2 || node_of_gpu(src_gpu) == node_of_gpu(dst_gpu)) return {route(src_gpu, dst_gpu)};
  std::vector<std::vector<Hop>> all;
  for (std::size_t j = 0; j < k; ++j) {
    std::vector<Hop> hops{Hop{out[j].link, links_[out[j].link].b == out[j].nic}};
    for (const Hop& h : route_between(out[j].nic, in[j].nic)) hops.push_back(h);
    hops.push_back(Hop{in[j].link, links_[in[j].link].a == in[j].nic});
    all.push_back(std::move(hops));
  }
  return all;
}

std::vector<Hop> Topology::route_between(VertexId from, VertexId to) const {
  const auto& adj = graph_->adjacency;
  const VertexId ends[2] = {from, to};
  // Bidirectional breadth-first search: each side grows one whole level at a time, the side
  // whose frontier has fewer links first (the source side on ties), so a hub switch with
  // thousands of links is reached from both sides but rarely expanded. Among the meetings of the level that first
  // meets, the shortest wins, then the first found: the result depends only on vertex and link order.
  thread_local RouteScratch scratch;
  const std::uint64_t stamp = ++scratch.search;
  for (std::size_t side = 0; side < 2; ++side) {
    if (scratch.stamp[side].size() < vertices_.size()) {
      scratch.stamp[side].resize(vertices_.size(), 0);
      scratch.visit[side].resize(vertices_.size());
    }
  }
  const auto visited = [&](std::size_t side, VertexId v) { return scratch.stamp[side][v] == stamp; };
  const auto visit = [&](std::size_t side, VertexId v, Visit at) {
    scratch.stamp[side][v] = stamp;
    scratch.visit[side][v] = at;
  };
  std::vector<VertexId> frontier[2] = {{ends[0]}, {ends[1]}};
  int depth[2] = {0, 0};
  visit(0, ends[0], Visit{});
  visit(1, ends[1], Visit{});
  const auto out_edges_of = [&](const std::vector<VertexId>& vs) {
    std::size_t n = 0;
    for (const VertexId v : vs) n += boost::out_degree(v, adj);
    return n;
  };
  VertexId meet = 0;
  int best = std::numeric_limits<int>::max();
  while (best == std::numeric_limits<int>::max()) {
    STEPCAST_ASSERT(!frontier[0].empty() && !frontier[1].empty(), "the loader checks that every GPU pair has a route");
    const std::size_t side = out_edges_of(frontier[1]) < out_edges_of(frontier[0]) ? 1 : 0;
    std::vector<VertexId> next;
    ++depth[side];
    for (const VertexId v : frontier[side]) {
      for (const auto e : boost::make_iterator_range(boost::out_edges(v, adj))) {
        const LinkId id = boost::get(boost::edge_index, adj, e);
        const VertexId w = other_end(links_[id], v);
        // GPUs do not forward: the only GPU a side may step onto is the other side's end.
        if (vertices_[w].kind == VertexKind::kGpu && w != ends[1 - side]) continue;
        if (visited(side, w)) continue;
        visit(side, w, Visit{id, depth[side]});
        if (visited(1 - side, w)) {
          const int length = depth[side] + scratch.visit[1 - side][w].depth;
          if (length < best) {
            best = length;
            meet = w;
          }
          continue;
        }
        next.push_back(w);
      }
    }
    frontier[side] = std::move(next);
  }
  // Walk from the meeting vertex back to each end.
  std::vector<Hop> hops;
  for (VertexId v = meet; v != ends[0];) {
    const LinkId id = scratch.visit[0][v].parent;
    const VertexId prev = other_end(links_[id], v);
    hops.push_back(Hop{id, links_[id].a == prev});
    v = prev;
  }
  std::reverse(hops.begin(), hops.end());
  for (VertexId v = meet; v != ends[1];) {
    const LinkId id = scratch.visit[1][v].parent;
    const VertexId next = other_end(links_[id], v);
    hops.push_back(Hop{id, links_[id].a == v});
    v = next;
  }
  return hops;
}

CommTiers Topology::tiers(int ranks, int stride, Concurrency concurrency) const {
  STEPCAST_ASSERT(ranks >= 1 && stride >= 1, "a group has at least one rank and a positive stride");
  STEPCAST_ASSERT(static_cast<std::int64_t>(ranks - 1) * stride < gpu_count(), "the group fits in the topology");
  STEPCAST_ASSERT(concurrency.groups >= 1 && concurrency.offset >= 0, "concurrent groups: at least the group itself");
  if (concurrency.groups == 1) concurrency.offset = 0;
  const Graph& g = *graph_;
  const std::tuple key{ranks, stride, concurrency};
  {
    const std::lock_guard lock(g.tiers_mutex);
    if (const auto it = g.tiers_cache.find(key); it != g.tiers_cache.end()) return it->second;
  }
  const CommTiers t = compute_tiers(ranks, stride, concurrency, slowest_group_start(ranks, stride));
  const std::lock_guard lock(g.tiers_mutex);
  // Bounded, so a sweep over many group shapes cannot grow it without end.
  constexpr std::size_t kMaxCached = 4096;
  if (g.tiers_cache.size() < kMaxCached) g.tiers_cache.emplace(key, t);
  return t;
}

// The plan's groups of one kind tile the GPUs: blocks of ranks x stride GPUs, each holding
// `stride` groups that start at its first `stride` GPUs. They run in step (a layer's all-to-all,
// the step's gradient sync), so the slowest sets the pace: the one over the most nodes, as a
// 64-rank expert group from GPU 64 of 72-GPU racks spans two racks where the first spans one
// (ties: the most leaf switches, whose uplinks a fat tree oversubscribes).
int Topology::slowest_group_start(int ranks, int stride) const {
  const Graph& g = *graph_;
  const std::int64_t block = static_cast<std::int64_t>(ranks) * stride;
  const std::int64_t span = static_cast<std::int64_t>(ranks - 1) * stride;
  int slowest = 0;
  std::pair<int, int> most{0, 0};  // (nodes, leaf switches) spanned
  for (std::int64_t b = 0; b + span < gpu_count(); b += block) {
    for (std::int64_t start = b; start < b + stride && start + span < gpu_count(); ++start) {
      std::pair<int, int> spanned{0, 0};
      std::int64_t leaf = -1;
      for (int r = 0, current = -1; r < ranks; ++r) {
        const int node = g.gpu_node[static_cast<std::size_t>(start + static_cast<std::int64_t>(r) * stride)];
        if (node == current) continue;
        current = node;
        ++spanned.first;
        const std::int64_t node_leaf = g.first_hop_out[static_cast<std::size_t>(node)];
        spanned.second += node_leaf != leaf ? 1 : 0;
        leaf = node_leaf;
      }
      if (spanned > most) {
        most = spanned;
        slowest = static_cast<int>(start);
      }
    }
  }
  return slowest;
}

CommTiers Topology::compute_tiers(int ranks, int stride, Concurrency concurrency, int start) const {
  const Graph& g = *graph_;
  CommTiers t;
  t.ranks = ranks;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  BytesPerSecond node_bw(kInf), intra_bw(kInf), gpu_nic_bw(kInf);
  Seconds intra_latency, inter_latency;
  int nodes = 0, busiest = 0, on_node = 0, current = -1;
  const int first_node = g.gpu_node[static_cast<std::size_t>(start)];
  const std::int64_t first_leaf = g.first_hop_out[static_cast<std::size_t>(first_node)];
  bool several_leaves = false;
  for (int r = 0; r < ranks; ++r) {
    const auto gpu = static_cast<std::size_t>(start) + static_cast<std::size_t>(r) * static_cast<std::size_t>(stride);
    const int node = g.gpu_node[gpu];
    if (node != current) {
      const auto n = static_cast<std::size_t>(node);
      current = node;
      ++nodes;
      on_node = 0;
      node_bw = std::min(node_bw, g.node_bw[n]);
      if (g.intra_bw[n].value() > 0.0) {
        intra_bw = std::min(intra_bw, g.intra_bw[n]);
        intra_latency = std::max(intra_latency, g.intra_latency[n]);
      }
      several_leaves = several_leaves || g.first_hop_out[n] != first_leaf;
    }
    busiest = std::max(busiest, ++on_node);
    gpu_nic_bw = std::min(gpu_nic_bw, g.gpu_nic_bw[gpu]);
    // Routes from GPU 0 stand for routes from the group's first GPU: the fabric looks alike from
    // every node (a group starting past node 0 reaches its other nodes by routes of the same tiers).
    if (node != first_node) inter_latency = std::max(inter_latency, g.latency_from_first[gpu]);
  }
  t.nodes = nodes;
  t.ranks_per_node = busiest;
  t.intra_bw = intra_bw.value() == kInf ? BytesPerSecond{} : intra_bw;
  t.intra_latency = intra_latency;
  t.node_bw = node_bw;
  t.gpu_nic_bw = gpu_nic_bw;
  t.inter_latency = inter_latency;
  t.oversubscription = several_leaves ? oversubscription_ : 1.0;
  if (nodes > 1) add_nic_figures(t, ranks, stride, concurrency, start);
  return t;
}

// Per node of the group: the NICs its ranks use and, with the concurrent groups' GPUs counted as
// users too, each NIC's rate split evenly among its users (max-min fair for equal demands, as the
// flow-level simulator shares a link). The group's figure is its weakest node's.
void Topology::add_nic_figures(CommTiers& t, int ranks, int stride, Concurrency concurrency, int start) const {
  const Graph& g = *graph_;
  const auto gpu_at = [&](int group, int r) {
    return start + static_cast<std::int64_t>(group) * concurrency.offset + static_cast<std::int64_t>(r) * stride;
  };
  // The NICs a GPU uses: its own, or every NIC of its node when it is wired to none.
  const auto nics_of = [&](std::size_t gpu) -> const std::vector<Graph::NicShare>& {
    return g.gpu_nics[gpu].empty() ? g.node_nics[static_cast<std::size_t>(g.gpu_node[gpu])] : g.gpu_nics[gpu];
  };
  // Users of each NIC among the GPUs of every concurrent group, and the group's own users.
  std::map<VertexId, std::pair<int, int>> users;  // NIC -> (all users, the group's users)
  for (int k = 0; k < concurrency.groups; ++k) {
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t gpu = gpu_at(k, r);
      if (gpu >= gpu_count()) break;
      for (const Graph::NicShare& n : nics_of(static_cast<std::size_t>(gpu))) {
        auto& u = users[n.nic];
        ++u.first;
        if (k == 0) ++u.second;
      }
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  BytesPerSecond alone(kInf), shared(kInf);
  int fewest = std::numeric_limits<int>::max();
  int current = -1;
  std::map<VertexId, BytesPerSecond> node_nics;  // the NICs the group uses on the current node
  const auto close_node = [&] {
    if (node_nics.empty()) return;
    BytesPerSecond a, s;
    for (const auto& [nic, bw] : node_nics) {
      const auto& u = users.at(nic);
      a += bw;
      s += bw * (static_cast<double>(u.second) / static_cast<double>(u.first));
    }
    alone = std::min(alone, a);
    shared = std::min(shared, s);
    fewest = std::min(fewest, static_cast<int>(node_nics.size()));
    node_nics.clear();
  };
  for (int r = 0; r < ranks; ++r) {
    const auto gpu = static_cast<std::size_t>(gpu_at(0, r));
    if (g.gpu_node[gpu] != current) {
      close_node();
      current = g.gpu_node[gpu];
    }
    for (const Graph::NicShare& n : nics_of(gpu)) node_nics.emplace(n.nic, n.bw);
  }
  close_node();
  if (fewest == std::numeric_limits<int>::max()) {
    // No NIC vertices (a graph whose GPUs reach the fabric directly): the links leaving the node.
    t.nics = 1;
    t.group_nic_bw = t.node_bw;
    return;
  }
  t.nics = fewest;
  t.group_nic_bw = alone;
  t.node_bw = shared;
}

}  // namespace stepcast::topology
