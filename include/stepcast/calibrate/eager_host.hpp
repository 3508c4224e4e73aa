// The host time per kernel launch, measured: scripts/measure-eager-host times a Megatron-LM style
// GPT layer in eager PyTorch (validate/README.md), and where the host issues its kernels more
// slowly than the GPU runs them, that issue time over the launches the model counts for the same
// layer is what the model's host_overhead stands for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::calibrate {

/// One timed shape: `layers` GPT layers (hidden, heads, sequence, micro-batch), forward and
/// backward, with or without full recompute.
struct EagerHostLayer {
  int hidden = 0;
  int heads = 0;
  int sequence = 0;
  int micro_batch = 0;
  int layers = 0;
  bool full_recompute = false;
  Seconds issue;            ///< host time to issue the forward and backward of all `layers`
  bool host_bound = false;  ///< the script's verdict: the host, not the GPU, set the time
};

/// A scripts/measure-eager-host file.
struct EagerHostFile {
  std::string file;
  std::string machine;  ///< "NVIDIA H200, Intel(R) Xeon(R) Processor, PyTorch 2.11.0+cu130"
  std::vector<EagerHostLayer> shapes;
};

/// Whether the text is a scripts/measure-eager-host file (a JSON object whose "tool" says so).
bool is_eager_host_json(const std::string& text);

/// Reads one; missing or malformed fields throw InputError naming the file and field.
EagerHostFile parse_eager_host_json(const std::string& text, const std::string& origin);

/// The kernel launches the model's host pays for one layer of the timed shape: the layer
/// operators (cost/operators.hpp) of a GPT layer as the script builds it (biases, LayerNorm,
/// learned positions, GeLU, dropout, unfused attention, fp16), each operator's framework calls.
double model_layer_launches(const EagerHostLayer& layer);

/// One host-bound shape's issue time per layer over the launches the model counts for it.
struct HostPerLaunch {
  std::string file;
  EagerHostLayer layer;
  double launches = 0.0;
  Seconds per_launch;
};

/// host_overhead as the files give it: the median per-launch time of every host-bound shape (each
/// a row, in the files' order), with a sentence of what it came from; none without a host-bound
/// shape.
struct HostOverheadFit {
  Seconds host_overhead;
  std::vector<HostPerLaunch> rows;
  std::string source;
};
std::optional<HostOverheadFit> fit_host_overhead(
    const std::vector<EagerHostFile>& files,
    const std::function<double(const EagerHostLayer&)>& launches = model_layer_launches);

}  // namespace stepcast::calibrate
