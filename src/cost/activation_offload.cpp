#include "stepcast/cost/activation_offload.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

std::vector<int> offload_windows(int layers, int offloaded) {
  STEPCAST_ASSERT(offloaded > 0 && offloaded < layers, "offload windows need 0 < offloaded < layers");
  std::vector<int> sizes(static_cast<std::size_t>(offloaded), layers / offloaded);
  for (int i = 0; i < layers % offloaded; ++i) ++sizes[static_cast<std::size_t>(i)];
  return sizes;
}

int offload_resident_layers(int layers, int offloaded) { return offloaded > 0 ? layers - offloaded + 1 : layers; }

OffloadWaits offload_waits(int layers, int offloaded, Bytes per_layer, BytesPerSecond host, Seconds layer_forward,
                           Seconds layer_backward) {
  STEPCAST_ASSERT(host.value() > 0.0, "an offload needs a host link");
  OffloadWaits out;
  out.copy = per_layer / host;
  const std::vector<int> windows = offload_windows(layers, offloaded);
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const double beside = windows[i] - (i == 0 ? 1 : 0);
    out.forward += std::max(Seconds(0.0), out.copy - layer_forward * beside);
    out.backward += std::max(Seconds(0.0), out.copy - layer_backward * beside);
  }
  return out;
}

}  // namespace stepcast::cost
