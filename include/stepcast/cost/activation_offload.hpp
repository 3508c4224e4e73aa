// Activations offloaded to host memory (offload-layers=N), as Megatron-Core runs its cpu_offloading:
// Transformer Engine's AsyncDoubleBufferGroupOffloadHandler (transformer_engine/pytorch/
// cpu_offload.py) copies the saved activations of the first N transformer layers to the host on
// a stream of its own during the forward and back before their backward. The N copies are spread
// evenly over the L layers (its layer_window_map): the copy of layer i runs beside the compute of
// window i, and the compute waits for it where the window ends. What one GPU holds and waits for.
#pragma once

#include <vector>

#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// The layers of each of the N windows, in order: TE's layer_window_map ends window i at layer
/// (L / N) (i + 1) - 1, plus one more layer for each of the first L mod N windows.
/// Preconditions: 0 < offloaded < layers.
std::vector<int> offload_windows(int layers, int offloaded);

/// Layers whose activations a GPU holds at its peak (the end of the forward): the L - N it keeps,
/// and the last offloaded layer, whose copy ends with the forward. `layers` without offload.
int offload_resident_layers(int layers, int offloaded);

/// One micro-batch's waits for the copies.
struct OffloadWaits {
  Seconds copy;      ///< one layer's activations over the host link, each way
  Seconds forward;   ///< the forward's waits for the copies out
  Seconds backward;  ///< the backward's waits for the copies back
};

/// Window i overlaps its copy with the compute of its layers (the first window with one fewer:
/// its copy starts once layer 0 has run), forward and backward alike; the compute waits for what
/// the copy takes beyond that. Preconditions: 0 < offloaded < layers, host > 0.
OffloadWaits offload_waits(int layers, int offloaded, Bytes per_layer, BytesPerSecond host, Seconds layer_forward,
                           Seconds layer_backward);

}  // namespace stepcast::cost
