// Text rendering of explanation terms.
#include "stepcast/core/explain.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace stepcast {

std::string render_explanation(const Explanation& terms) {
  std::size_t width = 0;
  for (const ExplainTerm& t : terms) width = std::max(width, t.label.size());
  std::string out;
  for (const ExplainTerm& t : terms) {
    out += fmt::format("  {:<{}}  {} = {}\n", t.label, width, t.formula, t.value);
  }
  return out;
}

}  // namespace stepcast
