// A stream of kernels the host launches one after another while the GPU runs them in the same
// order: the host may run ahead as far as it likes (CUDA's asynchronous launch queue), so small
// kernels run at the host's pace and large ones at the GPU's.
#pragma once

#include <algorithm>

#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// With host time h_i and GPU time g_i per kernel, the stream takes max over k of
/// (h_1 + ... + h_k) + (g_k + ... + g_n): the makespan of a two-machine flow shop in a fixed
/// order (Johnson 1954). Streams compose exactly: A then B takes max(A + G_B, H_A + B), and n
/// repeats of A take A + (n - 1) max(H_A, G_A).
struct LaunchStream {
  Seconds makespan;  ///< first launch to last kernel's end
  Seconds host;      ///< summed host time
  Seconds gpu;       ///< summed GPU time

  /// One kernel.
  static LaunchStream of(Seconds host, Seconds gpu) { return {host + gpu, host, gpu}; }

  /// This stream, then `next`.
  [[nodiscard]] LaunchStream then(const LaunchStream& next) const {
    if (host.value() == 0.0 && gpu.value() == 0.0) return next;
    return {std::max(makespan + next.gpu, host + next.makespan), host + next.host, gpu + next.gpu};
  }

  /// This stream `n` times in a row (n >= 1; fewer gives the empty stream).
  [[nodiscard]] LaunchStream times(double n) const {
    if (n < 1.0) return {};
    return {makespan + std::max(host, gpu) * (n - 1.0), host * n, gpu * n};
  }
};

}  // namespace stepcast::cost
