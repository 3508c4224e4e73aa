// host_overhead from eager PyTorch layers: issue time per layer over the launches the model
// counts for that layer, the median over the host-bound shapes.
#include <fmt/format.h>

#include <set>

#include "stepcast/calibrate/bench_operators.hpp"
#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::calibrate {
namespace {

/// The GPT layer scripts/measure-eager-host times, as a workload of `layer.layers` such layers.
workload::Workload eager_gpt(const EagerHostLayer& layer) {
  workload::TransformerShape s;
  s.layers = layer.layers;
  s.hidden = layer.hidden;
  s.heads = layer.heads;
  s.kv_heads = layer.heads;
  s.ffn_hidden = 4 * layer.hidden;
  s.vocab = 50257;  // GPT-2's; the embedding and head are not part of a layer's launches
  s.seq_len = layer.sequence;
  s.tied_embeddings = true;
  s.biases = true;
  s.learned_positions = true;
  s.dropout = true;
  s.norm = workload::Norm::kLayerNorm;
  workload::Workload w;
  w.name = "eager GPT layer";
  w.source = "the layer scripts/measure-eager-host times";
  w.shape = s;
  w.parameters = workload::parameter_count(s);
  w.active_parameters = w.parameters;
  return w;
}

/// Each host-bound shape's issue time per layer over `launches(shape)`, in the files' order.
std::vector<HostPerLaunch> host_per_launch(const std::vector<EagerHostFile>& files,
                                           const std::function<double(const EagerHostLayer&)>& launches) {
  std::vector<HostPerLaunch> out;
  for (const EagerHostFile& f : files) {
    for (const EagerHostLayer& l : f.shapes) {
      if (!l.host_bound) continue;
      const double n = launches(l);
      out.push_back({f.file, l, n, l.issue / static_cast<double>(l.layers) / n});
    }
  }
  return out;
}

}  // namespace

double model_layer_launches(const EagerHostLayer& layer) {
  const workload::Workload w = eager_gpt(layer);
  plan::Plan p;
  p.micro_batch_size = layer.micro_batch;
  p.seq_len = layer.sequence;
  p.precision = plan::Precision::kFp16;
  p.recompute = layer.full_recompute ? plan::Recompute::kFull : plan::Recompute::kNone;
  p.flash_attention = false;  // the script's attention is unfused: baddbmm, masked softmax, bmm
  p.flash_given = true;
  const plan::Plan resolved = plan::resolve(p, w, 1);
  plan::validate(resolved, w, 1, "the measured layer");
  double launches = 0.0;
  for (const BenchOperator& b : bench_operators(w, resolved, false)) {
    if (b.op.part == cost::OpPart::kLayer) launches += b.op.host_calls.value_or(b.op.kernels);
  }
  return launches;
}

std::optional<HostOverheadFit> fit_host_overhead(const std::vector<EagerHostFile>& files,
                                                 const std::function<double(const EagerHostLayer&)>& launches) {
  HostOverheadFit fit;
  fit.rows = host_per_launch(files, launches);
  if (fit.rows.empty()) return std::nullopt;
  std::vector<double> per_launch;
  std::set<int> hidden;
  std::set<bool> recompute;
  for (const HostPerLaunch& r : fit.rows) {
    per_launch.push_back(r.per_launch.value());
    hidden.insert(r.layer.hidden);
    recompute.insert(r.layer.full_recompute);
  }
  fit.host_overhead = Seconds(percentile(per_launch, 50.0));
  std::set<std::string> machines;
  std::string names;
  for (const EagerHostFile& f : files) {
    machines.insert(f.machine);
    names += (names.empty() ? "" : ", ") + f.file;
  }
  std::string on;
  for (const std::string& m : machines) on += (on.empty() ? "" : "; ") + m;
  fit.source = fmt::format(
      "eager PyTorch's host time per launch the model counts, the median over {} host-bound GPT layers (hidden "
      "{}-{}, {}) timed by scripts/measure-eager-host on {} ({})",
      fit.rows.size(), *hidden.begin(), *hidden.rbegin(),
      recompute.size() == 2 ? "with and without full recompute"
      : *recompute.begin()  ? "with full recompute"
                            : "without recompute",
      on, names);
  return fit;
}

}  // namespace stepcast::calibrate
