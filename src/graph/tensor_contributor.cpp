// Tensor parallel (Shoeybi et al. 2019): two all-reduces of s x b x h per layer in the forward,
// after the attention and after the MLP (Figure 4), and their conjugates in the backward; with
// sequence parallel each becomes a reduce-scatter plus an all-gather of the same S (Korthikanti et
// al. 2022, section 4.2.2). They sit between dependent GEMMs: each ends a slice of the layer's
// compute. With tp-overlap they run in tp chunks beside the slice's GEMMs, one chunk always
// exposed (Wang et al. 2022, "Overlap Communication with Dependent Computation via
// Decomposition", ASPLOS'23). A hybrid stack's layers are single sublayers (a Mamba-2 mixer,
// attention or an MLP), each ending in one such collective. Under a low-precision plan the
// all-gathers carry quantized data: Transformer Engine casts the column-parallel GEMMs' input and
// the row-parallel ones' output gradient on each rank's shard and gathers the 8- or 4-bit copy
// (linear.py: gather_along_first_dim with the quantizer; userbuffers' overlap fills an FP8
// buffer), while the reduce-scatters sum 16-bit GEMM outputs. Latent attention's down projections
// are not TE column-parallel linears: Megatron-Core gathers their input in 16 bits.
#include "graph_support.hpp"
#include "stepcast/cost/low_precision.hpp"

namespace stepcast::graph {

void add_tensor_parallel(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  if (p.tp < 2) return;
  const Layout layout = graph.layout;
  GroupSpec spec;
  spec.role = "tensor";
  spec.ranks = p.tp;
  spec.members = [layout](int stage) {
    GroupSets groups;
    for (int r = 0; r < layout.replicas; ++r) {
      std::vector<int> g;
      for (int t = 0; t < layout.tp; ++t) g.push_back(layout.gpu(r, stage, t));
      groups.push_back(std::move(g));
    }
    return groups;
  };
  const std::size_t group = graph.add_group(std::move(spec));
  const auto& shape = context.workload.shape;
  const int slices = shape && shape->hybrid ? 1 : 2;
  graph.forward_slices = slices;
  graph.backward_slices = backward_slices(p, slices);
  CommNode node;
  node.group = group;
  node.size = detail::activation(context);
  node.anchor = p.tp_overlap ? Anchor::kBesideSlice : Anchor::kAfterSlice;
  node.tail = p.tp_overlap ? 1.0 / p.tp : 0.0;
  if (p.sequence_parallel) {
    const Bytes reduced = node.size;
    if (cost::is_low_precision(p.precision) && !(shape && shape->mla)) {
      node.size = reduced / detail::activation_element_bytes(p) * cost::quantized_bytes_per_element(p.precision);
    }
    node.name = "TP all-gather (sequence parallel)";
    node.op = cost::CollectiveOp::kAllGather;
    graph.comm.push_back(node);
    node.size = reduced;
    node.name = "TP reduce-scatter (sequence parallel)";
    node.op = cost::CollectiveOp::kReduceScatter;
  } else {
    node.name = "TP all-reduce";
    node.op = cost::CollectiveOp::kAllReduce;
  }
  graph.comm.push_back(std::move(node));
}

}  // namespace stepcast::graph
