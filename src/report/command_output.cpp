// Running a command's independent units in this process.
#include "stepcast/report/command_output.hpp"

namespace stepcast::report {

std::vector<std::string> run_here(const std::vector<double>& costs,
                                  const std::function<std::string(std::size_t)>& work) {
  std::vector<std::string> out;
  out.reserve(costs.size());
  for (std::size_t i = 0; i < costs.size(); ++i) out.push_back(work(i));
  return out;
}

}  // namespace stepcast::report
