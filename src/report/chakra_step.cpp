// A step graph as one Chakra trace per GPU. The compute stream is a chain of nodes; calls placed
// inside a layer depend on the compute before them and the compute after them on them (a blocking
// call) or only the slice or layer they run beside; a stage stream's calls are chained in issue
// order, a gather a layer ahead of the layer that waits for it; gradient buckets follow the task
// that completes them; sends and receives pair by stage, micro-batch and direction.
#include "stepcast/report/chakra_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "stepcast/core/errors.hpp"
#include "stepcast/sim/pipeline_order.hpp"

namespace stepcast::report {

namespace {

using chakra::NodeKind;
using chakra::TraceNode;
using graph::Anchor;
using sim::PipelineOp;

chakra::Collective collective_of(cost::CollectiveOp op) {
  switch (op) {
    case cost::CollectiveOp::kAllReduce:
      return chakra::Collective::kAllReduce;
    case cost::CollectiveOp::kAllGather:
      return chakra::Collective::kAllGather;
    case cost::CollectiveOp::kReduceScatter:
      return chakra::Collective::kReduceScatter;
    case cost::CollectiveOp::kAllToAll:
      return chakra::Collective::kAllToAll;
    case cost::CollectiveOp::kBroadcast:
      return chakra::Collective::kBroadcast;
    case cost::CollectiveOp::kReduce:
      return chakra::Collective::kReduce;
    case cost::CollectiveOp::kSendRecv:
      break;
  }
  STEPCAST_UNREACHABLE("a send/recv is written as a send and a receive");
}

// What every GPU's trace reads: each group kind's groups at a stage (members ascending) and the
// collective model's time of each call.
class Tables {
 public:
  Tables(const graph::StepGraph& g, const topology::Topology& topo, const cost::CollectiveModel& model)
      : g_(&g), topo_(&topo), model_(&model) {}

  // A group of GPUs as the traces name it: its members in ring order and ascending, and its name.
  struct Group {
    std::vector<int> ring;
    std::vector<int> ascending;
    std::string name;
  };

  // The group of `gpu` among the group kind's groups at `stage`.
  const Group& group_of(std::size_t group, int stage, int gpu) {
    auto [it, fresh] = groups_.try_emplace({group, stage});
    Membership& m = it->second;
    if (fresh) {
      m.of_gpu.assign(static_cast<std::size_t>(g_->layout.gpus()), 0);
      const graph::GroupSets sets = g_->groups[group].members(stage);
      for (std::size_t i = 0; i < sets.size(); ++i) {
        Group entry{sets[i], sets[i], fmt::format("{} {} stage {}", g_->groups[group].role, i, stage)};
        std::sort(entry.ascending.begin(), entry.ascending.end());
        for (const int member : sets[i]) m.of_gpu[static_cast<std::size_t>(member)] = i;
        m.groups.push_back(std::move(entry));
      }
    }
    return m.groups[m.of_gpu[static_cast<std::size_t>(gpu)]];
  }

  Seconds price(std::size_t node, Bytes size) {
    auto [it, fresh] = prices_.try_emplace({node, size.value()});
    if (fresh) {
      const graph::CommNode& n = g_->comm[node];
      const graph::GroupSpec& spec = g_->groups[n.group];
      const cost::CollectiveGroup group =
          cost::collective_group(*topo_, topo_->tiers(spec.ranks, spec.stride, spec.concurrency));
      // As both engines price a step's call: NCCL's price and the collective overhead beyond it.
      it->second = cost::price_collective(group, n.op, size, *model_).time + g_->compute.params.collective_overhead;
    }
    return it->second;
  }

 private:
  const graph::StepGraph* g_;
  const topology::Topology* topo_;
  const cost::CollectiveModel* model_;
  struct Membership {
    std::vector<Group> groups;
    std::vector<std::size_t> of_gpu;
  };
  std::map<std::pair<std::size_t, int>, Membership> groups_;
  std::map<std::pair<std::size_t, double>, Seconds> prices_;
};

using Deps = std::vector<std::uint64_t>;

// Where a layer's start calls end, by lane: the compute waits for the blocking ones before it, for
// the first-slice ones after its first slice and for the layer-end ones after its last.
struct LaneEnds {
  Deps blocking;
  Deps first_slice;
  Deps layer_end;
};

// One GPU's trace, built task by task.
class GpuTrace {
 public:
  GpuTrace(const graph::StepGraph& g, Tables& tables, int gpu, std::vector<TraceNode>& out)
      : g_(g), tables_(tables), gpu_(gpu), stage_(g.layout.stage_of(gpu)), out_(out) {}

  void build();

 private:
  std::uint64_t add(TraceNode n) {
    n.id = out_.size();
    out_.push_back(std::move(n));
    return out_.back().id;
  }
  std::uint64_t compute(std::string name, Seconds duration, Deps deps) {
    TraceNode n;
    n.name = std::move(name);
    n.duration = duration;
    n.data_deps = std::move(deps);
    return add(std::move(n));
  }
  std::uint64_t call(std::size_t node, Bytes size, Deps deps);
  std::uint64_t ring_call(std::size_t node, Bytes size, Deps deps);
  std::uint64_t stream_calls(const std::vector<std::pair<std::size_t, Bytes>>& calls, Deps deps);
  std::vector<std::pair<std::size_t, Bytes>> layer_calls(Anchor anchor, int pass, int chunk, int layer, bool root,
                                                         std::optional<graph::Join> join) const;
  Deps chain(const std::vector<std::pair<std::size_t, Bytes>>& calls, Deps deps);
  std::uint64_t join(std::string name, Deps deps);
  Deps task(const PipelineOp& op, Deps deps);
  Deps layer(const PipelineOp& op, int pos, int layers, Seconds work, const Deps& before);
  Deps slices(const PipelineOp& op, Seconds work, const LaneEnds& lanes);
  void buckets(const PipelineOp& op, std::size_t index, std::uint64_t after);
  void send(const PipelineOp& op, std::uint64_t after);
  std::optional<std::uint64_t> receive(const PipelineOp& op);
  int peer(int stage, bool forward) const;
  std::uint32_t tag(int virtual_stage, bool backward, int micro_batch) const {
    const auto m = static_cast<std::uint32_t>(g_.micro_batches);
    return static_cast<std::uint32_t>(virtual_stage) * 2 * m + (backward ? m : 0) +
           static_cast<std::uint32_t>(micro_batch);
  }

  const graph::StepGraph& g_;
  Tables& tables_;
  int gpu_;
  int stage_;
  std::vector<TraceNode>& out_;
  std::optional<std::uint64_t> stream_;  // the stage stream's last call
  std::map<std::size_t, std::uint32_t> ring_calls_;
  Deps prefetched_;                        // the next layer's gathers, issued a layer ahead
  Deps waiting_send_;                      // a blocking send the next task waits for
  std::vector<std::uint64_t> step_start_;  // the step-start gathers, in order
  bool layered_ = false;                   // some call sits inside the layers: tasks run layer by layer
  std::vector<std::size_t> grad_ops_;      // tasks that complete weight gradients
  std::vector<std::size_t> chunk_last_;    // the last of them for each model chunk
};

std::uint64_t GpuTrace::call(std::size_t node, Bytes size, Deps deps) {
  const graph::CommNode& n = g_.comm[node];
  if (n.op == cost::CollectiveOp::kSendRecv) return ring_call(node, size, std::move(deps));
  const Tables::Group& group = tables_.group_of(n.group, stage_, gpu_);
  TraceNode t;
  t.name = n.name;
  t.kind = NodeKind::kCollective;
  t.collective = collective_of(n.op);
  t.bytes = size;
  t.duration = tables_.price(node, size);
  t.group = group.name;
  t.group_ranks = group.ascending;
  t.data_deps = std::move(deps);
  return add(std::move(t));
}

// A ring's step: a send to the next rank of the group and a receive from the one before, tagged
// by the node and how many of its calls came before (every rank of the group runs the same).
std::uint64_t GpuTrace::ring_call(std::size_t node, Bytes size, Deps deps) {
  const graph::CommNode& n = g_.comm[node];
  const std::vector<int>& members = tables_.group_of(n.group, stage_, gpu_).ring;
  const auto me = static_cast<std::size_t>(std::find(members.begin(), members.end(), gpu_) - members.begin());
  const std::uint32_t occurrence = ring_calls_[node]++;
  const std::uint32_t label = (1u << 31) | (static_cast<std::uint32_t>(node) << 20) | (occurrence & 0xFFFFF);
  TraceNode t;
  t.name = n.name;
  t.bytes = size;
  t.duration = tables_.price(node, size);
  t.tag = label;
  t.data_deps = deps;
  t.kind = NodeKind::kSend;
  t.peer = members[(me + 1) % members.size()];
  const std::uint64_t sent = add(t);
  t.kind = NodeKind::kRecv;
  t.peer = members[(me + members.size() - 1) % members.size()];
  t.data_deps = std::move(deps);
  t.data_deps.push_back(sent);
  return add(std::move(t));
}

// Calls on the stage's stream, each after the stream's previous one.
std::uint64_t GpuTrace::stream_calls(const std::vector<std::pair<std::size_t, Bytes>>& calls, Deps deps) {
  std::optional<std::uint64_t> last;
  for (const auto& [node, size] : calls) {
    Deps d = deps;
    if (stream_) d.push_back(*stream_);
    stream_ = call(node, size, std::move(d));
    last = stream_;
  }
  return last ? *last : (deps.empty() ? 0 : deps.back());
}

// A layer's calls at `anchor`, round by round as the simulator runs them (graph/step_graph.hpp).
std::vector<std::pair<std::size_t, Bytes>> GpuTrace::layer_calls(Anchor anchor, int pass, int chunk, int layer,
                                                                 bool root, std::optional<graph::Join> join) const {
  std::vector<std::pair<std::size_t, Bytes>> out;
  // The root parameters ride with the first layer even where the first chunk holds none.
  const auto rounds_of = [&](const graph::CommNode& n) {
    const int r = g_.rounds_at(n, stage_, chunk, layer);
    return root && n.root.value() > 0.0 ? std::max(r, 1) : r;
  };
  for (const bool recompute : {true, false}) {
    if (pass == 0 && recompute) continue;
    int rounds = 0;
    for (const graph::CommNode& n : g_.comm) rounds = std::max(rounds, rounds_of(n));
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < g_.comm.size(); ++i) {
        const graph::CommNode& n = g_.comm[i];
        if (n.anchor != anchor || (join && n.join != *join) || round >= rounds_of(n)) continue;
        const bool runs =
            pass == 0 ? n.pass != graph::Pass::kBackward
                      : (anchor == Anchor::kLayerEnd ||
                         (recompute ? n.pass == graph::Pass::kForwardAndRecompute : n.pass == graph::Pass::kBackward));
        if (!runs) continue;
        for (int c = 0; c < n.layer_calls; ++c) out.emplace_back(i, root && round == 0 ? n.size + n.root : n.size);
      }
    }
    if (anchor == Anchor::kLayerEnd) break;
  }
  return out;
}

int GpuTrace::peer(int stage, bool forward) const {
  const graph::Layout& l = g_.layout;
  const int replica = l.replica_of(gpu_);
  const int to = forward ? (stage + 1) % l.pp : (stage + l.pp - 1) % l.pp;
  return l.gpu(replica, to, gpu_ % l.tp);
}

std::optional<std::uint64_t> GpuTrace::receive(const PipelineOp& op) {
  const int vs = op.chunk * g_.layout.pp + stage_;
  const int virtual_stages = g_.layout.pp * g_.vp;
  const bool forward = op.kind == PipelineOp::Kind::kForward;
  if ((forward && vs == 0) || (op.kind == PipelineOp::Kind::kBackward && vs + 1 == virtual_stages) ||
      op.kind == PipelineOp::Kind::kWeightGrad)
    return std::nullopt;
  TraceNode t;
  t.name = fmt::format("receive {}{}.{}", forward ? 'F' : 'B', op.micro_batch, op.chunk);
  t.kind = NodeKind::kRecv;
  t.peer = peer(stage_, !forward);
  t.tag = tag(vs, !forward, op.micro_batch);
  for (std::size_t i = 0; i < g_.comm.size(); ++i) {
    if (g_.comm[i].anchor == Anchor::kStageSend) {
      t.bytes = g_.comm[i].size;
      t.duration = tables_.price(i, t.bytes);
    }
  }
  return add(std::move(t));
}

void GpuTrace::send(const PipelineOp& op, std::uint64_t after) {
  const int vs = op.chunk * g_.layout.pp + stage_;
  const bool forward = op.kind == PipelineOp::Kind::kForward;
  if ((forward && vs + 1 == g_.layout.pp * g_.vp) || (op.kind == PipelineOp::Kind::kBackward && vs == 0) ||
      op.kind == PipelineOp::Kind::kWeightGrad)
    return;
  TraceNode t;
  t.name = fmt::format("send {}{}.{}", forward ? 'F' : 'B', op.micro_batch, op.chunk);
  t.kind = NodeKind::kSend;
  t.peer = peer(stage_, forward);
  t.tag = tag(forward ? vs + 1 : vs - 1, !forward, op.micro_batch);
  for (std::size_t i = 0; i < g_.comm.size(); ++i) {
    if (g_.comm[i].anchor == Anchor::kStageSend) {
      t.bytes = g_.comm[i].size;
      t.duration = tables_.price(i, t.bytes);
    }
  }
  t.data_deps = {after};
  add(std::move(t));
}

// Calls one after another, the first after `deps`.
Deps GpuTrace::chain(const std::vector<std::pair<std::size_t, Bytes>>& calls, Deps deps) {
  for (const auto& [node, size] : calls) deps = {call(node, size, std::move(deps))};
  return deps;
}

// A zero-time compute node where several paths meet (Chakra has no other join).
std::uint64_t GpuTrace::join(std::string name, Deps deps) {
  if (deps.size() == 1) return deps.front();
  return compute(std::move(name), Seconds(0.0), std::move(deps));
}

void GpuTrace::build() {
  for (const graph::CommNode& n : g_.comm) {
    const Anchor a = n.anchor;
    layered_ = layered_ || a == Anchor::kAfterSlice || a == Anchor::kBesideSlice || a == Anchor::kLayerStart ||
               a == Anchor::kLayerPrefetch || a == Anchor::kLayerEnd;
  }
  const std::vector<PipelineOp> ops = sim::pipeline_order(g_.schedule, g_.layout.pp, stage_, g_.micro_batches, g_.vp);
  const bool split = std::any_of(ops.begin(), ops.end(),
                                 [](const PipelineOp& op) { return op.kind == PipelineOp::Kind::kWeightGrad; });
  chunk_last_.assign(static_cast<std::size_t>(g_.vp), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != (split ? PipelineOp::Kind::kWeightGrad : PipelineOp::Kind::kBackward)) continue;
    grad_ops_.push_back(i);
    chunk_last_[static_cast<std::size_t>(ops[i].chunk)] = i;
  }
  const bool replicated = g_.layout.replicas > 1;
  std::vector<std::pair<std::size_t, Bytes>> start;
  std::vector<std::pair<std::size_t, Bytes>> after;
  for (std::size_t i = 0; i < g_.comm.size() && replicated; ++i) {
    const graph::CommNode& n = g_.comm[i];
    if (n.anchor == Anchor::kAfterOptimizer) after.emplace_back(i, n.size);
    if (n.anchor != Anchor::kStepStart) continue;
    for (double j = 0; j + 1.0 <= n.pieces + 1e-9; j += 1.0) start.emplace_back(i, n.size);
    if (const double rest = n.pieces - std::floor(n.pieces + 1e-9); rest > 1e-9) start.emplace_back(i, n.size * rest);
  }
  for (const auto& c : start) step_start_.push_back(stream_calls({c}, {}));
  Deps tail;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!step_start_.empty() && i < 2) tail.push_back(i == 0 ? step_start_.front() : step_start_.back());
    tail = task(ops[i], std::move(tail));
    buckets(ops[i], i, tail.front());
  }
  if (stream_) tail.push_back(*stream_);
  const std::uint64_t optimizer = compute("optimizer", g_.optimizer, std::move(tail));
  for (const auto& c : after) stream_calls({c}, {optimizer});
}

Deps GpuTrace::task(const PipelineOp& op, Deps deps) {
  deps.insert(deps.end(), waiting_send_.begin(), waiting_send_.end());
  waiting_send_.clear();
  if (const auto received = receive(op)) deps.push_back(*received);
  const graph::StageWork& w = g_.stages[static_cast<std::size_t>(stage_)];
  const bool zb = g_.schedule == plan::Schedule::kZbH1;
  const cost::ChunkCompute& c = w.chunks[static_cast<std::size_t>(op.chunk)];
  const Seconds work = op.kind == PipelineOp::Kind::kForward    ? c.forward
                       : op.kind == PipelineOp::Kind::kBackward ? (zb ? c.backward - c.weight_grad : c.backward)
                                                                : c.weight_grad;
  const std::string name = fmt::format("{}{}.{}",
                                       op.kind == PipelineOp::Kind::kForward    ? 'F'
                                       : op.kind == PipelineOp::Kind::kBackward ? 'B'
                                                                                : 'W',
                                       op.micro_batch, op.chunk);
  Deps tail;
  if (!layered_ || op.kind == PipelineOp::Kind::kWeightGrad) {
    tail = {compute(name, work, std::move(deps))};
  } else {
    const int layers = w.passes(op.chunk);
    tail = std::move(deps);
    for (int pos = 0; pos < layers; ++pos) tail = layer(op, pos, layers, work / layers, tail);
  }
  const std::uint64_t end = join(name + " end", std::move(tail));
  const std::size_t before = out_.size();
  send(op, end);
  const bool sent = out_.size() > before;
  if (sent && g_.comm.end() != std::find_if(g_.comm.begin(), g_.comm.end(), [](const graph::CommNode& n) {
                return n.anchor == Anchor::kStageSend && n.blocking;
              })) {
    waiting_send_ = {out_.back().id};
  }
  return {end};
}

Deps GpuTrace::layer(const PipelineOp& op, int pos, int layers, Seconds work, const Deps& before) {
  const bool backward = op.kind == PipelineOp::Kind::kBackward;
  const int pass = backward ? 1 : 0;
  const int at = backward ? layers - 1 - pos : pos;
  const auto root = [&](int l) { return op.chunk == 0 && l == 0; };
  // This layer's gathers (issued a layer ahead but for the pass's first), then the next layer's.
  Deps gathered = pos == 0 ? Deps{} : std::move(prefetched_);
  if (pos == 0) {
    const auto calls = layer_calls(Anchor::kLayerPrefetch, pass, op.chunk, at, root(at), std::nullopt);
    if (!calls.empty()) gathered = {stream_calls(calls, before)};
  }
  Deps start = before;
  start.insert(start.end(), gathered.begin(), gathered.end());
  prefetched_.clear();
  if (pos + 1 < layers) {
    const int next = backward ? at - 1 : at + 1;
    const auto calls = layer_calls(Anchor::kLayerPrefetch, pass, op.chunk, next, root(next), std::nullopt);
    if (!calls.empty()) prefetched_ = {stream_calls(calls, start)};
  }
  LaneEnds lanes;
  lanes.blocking =
      chain(layer_calls(Anchor::kLayerStart, pass, op.chunk, at, false, graph::Join::kBeforeCompute), start);
  lanes.first_slice =
      chain(layer_calls(Anchor::kLayerStart, pass, op.chunk, at, false, graph::Join::kFirstSlice), start);
  lanes.layer_end = chain(layer_calls(Anchor::kLayerStart, pass, op.chunk, at, false, graph::Join::kLayerEnd), start);
  Deps done = slices(op, work, lanes);
  if (backward) {
    const auto calls = layer_calls(Anchor::kLayerEnd, pass, op.chunk, at, root(at), std::nullopt);
    if (!calls.empty()) stream_calls(calls, done);
  }
  return done;
}

Deps GpuTrace::slices(const PipelineOp& op, Seconds work, const LaneEnds& lanes) {
  const int count = op.kind == PipelineOp::Kind::kForward ? g_.forward_slices : g_.backward_slices;
  std::vector<std::pair<std::size_t, Bytes>> after;
  std::vector<std::pair<std::size_t, Bytes>> beside;
  // A chunk that holds no layer has no calls in its slices.
  const bool calls = g_.stages[static_cast<std::size_t>(stage_)].chunks[static_cast<std::size_t>(op.chunk)].layers > 0;
  for (std::size_t i = 0; i < g_.comm.size() && calls; ++i) {
    if (g_.comm[i].anchor == Anchor::kAfterSlice) after.emplace_back(i, g_.comm[i].size);
    if (g_.comm[i].anchor == Anchor::kBesideSlice) beside.emplace_back(i, g_.comm[i].size);
  }
  Deps prev = lanes.blocking;
  for (int k = 0; k < count; ++k) {
    const std::uint64_t c = compute(k == 0 ? "slice 0" : fmt::format("slice {}", k), work / count, prev);
    Deps next = {c};
    if (!beside.empty()) {
      const Deps comm = chain(beside, prev);
      next.insert(next.end(), comm.begin(), comm.end());
    }
    if (!after.empty()) next = chain(after, {join("slice end", next)});
    if (k == 0) next.insert(next.end(), lanes.first_slice.begin(), lanes.first_slice.end());
    prev = std::move(next);
  }
  prev.insert(prev.end(), lanes.layer_end.begin(), lanes.layer_end.end());
  return {join("layer end", std::move(prev))};
}

// Gradient buckets as the simulator places them (sim/step_run_build.cpp): a micro-batch's share
// after each gradient task under ZeRO-2, a model chunk's after its last one, or all after the step's
// last when not overlapped.
void GpuTrace::buckets(const PipelineOp& op, std::size_t index, std::uint64_t after) {
  if (g_.layout.replicas <= 1 || std::find(grad_ops_.begin(), grad_ops_.end(), index) == grad_ops_.end()) return;
  const bool last = index == grad_ops_.back();
  const bool chunk_ends = index == chunk_last_[static_cast<std::size_t>(op.chunk)];
  std::vector<std::pair<std::size_t, Bytes>> calls;
  for (std::size_t i = 0; i < g_.comm.size(); ++i) {
    const graph::CommNode& n = g_.comm[i];
    if (n.anchor != Anchor::kGradientReady) continue;
    double count = 0.0;
    if (n.every_micro_batch || (n.overlapped && chunk_ends)) count = n.pieces / g_.vp;
    if (!n.overlapped && last) count = n.pieces;
    for (double j = 0; j + 1.0 <= count + 1e-9; j += 1.0) calls.emplace_back(i, n.size);
    if (const double rest = count - std::floor(count + 1e-9); rest > 1e-9) calls.emplace_back(i, n.size * rest);
  }
  if (!calls.empty()) stream_calls(calls, {after});
}

}  // namespace

std::vector<chakra::TraceNode> chakra_trace_of(const graph::StepGraph& graph, const topology::Topology& topology,
                                               const cost::CollectiveModel& model, int gpu) {
  Tables tables(graph, topology, model);
  std::vector<TraceNode> out;
  GpuTrace(graph, tables, gpu, out).build();
  return out;
}

chakra::ChakraFiles write_step_chakra(const std::filesystem::path& directory, const graph::StepGraph& graph,
                                      const topology::Topology& topology, const cost::CollectiveModel& model,
                                      int threads, const std::vector<OutputContent>& with) {
  // Each worker its own tables (they fill as they are read) and buffer.
  const auto sources = [&]() -> chakra::RankSource {
    return [&graph, tables = Tables(graph, topology, model),
            buffer = std::vector<TraceNode>{}](int gpu) mutable -> const std::vector<TraceNode>& {
      buffer.clear();
      GpuTrace(graph, tables, gpu, buffer).build();
      return buffer;
    };
  };
  return chakra::write_chakra(directory, graph.layout.gpus(), sources, "stepcast", threads, with);
}

}  // namespace stepcast::report
