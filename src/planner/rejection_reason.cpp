// Grouping rule violations by rule: the numbers in a problem text differ between candidates,
// the rule does not.
#include <cctype>
#include <string>

#include "stepcast/planner/search.hpp"

namespace stepcast::planner {

std::string rejection_reason(std::string_view problem) {
  std::string out;
  std::size_t i = 0;
  while (i < problem.size()) {
    // " (32)" and " (fp8)": the parenthesised value of a quantity named just before.
    if (problem[i] == ' ' && i + 1 < problem.size() && problem[i + 1] == '(') {
      const std::size_t close = problem.find(')', i);
      if (close != std::string_view::npos) {
        i = close + 1;
        continue;
      }
    }
    // " = 4*2 = 8": the product spelled out; the rule ends before it.
    if (problem.substr(i).starts_with(" = ")) {
      std::size_t j = i + 3;
      while (j < problem.size() && problem[j] != ' ') ++j;
      i = j;
      if (problem.substr(i).starts_with(" = ")) {
        j = i + 3;
        while (j < problem.size() && problem[j] != ' ') ++j;
        i = j;
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(problem[i])) != 0) {
      while (i < problem.size() && std::isdigit(static_cast<unsigned char>(problem[i])) != 0) ++i;
      out += 'N';
      continue;
    }
    out += problem[i++];
  }
  return out;
}

}  // namespace stepcast::planner
