// The terms behind a figure, for `--explain`: every number the tool prints is traceable.
#pragma once

#include <string>
#include <vector>

namespace stepcast {

/// One term of a derivation: what it is, the formula with its inputs, and its value with a unit.
struct ExplainTerm {
  std::string label;    // "bandwidth term"
  std::string formula;  // "2(N-1)/N x S / B = 2*15/16 x 14e9 B / 50e9 B/s"
  std::string value;    // "0.525 s"
};

using Explanation = std::vector<ExplainTerm>;

/// Renders terms as aligned text lines ("  label  formula = value").
std::string render_explanation(const Explanation& terms);

}  // namespace stepcast
