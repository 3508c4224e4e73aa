// Reading a measurement file of either kind: nccl-tests text or stepcast-nccl-bench JSON.
#include "stepcast/calibrate/measurement.hpp"

#include <fstream>
#include <sstream>

#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {

Measurements read_measurements(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), {}, "cannot open file (does it exist?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_nccl_bench_json(text, file.string());
  return parse_nccl_tests_log(text, file.string());
}

}  // namespace stepcast::calibrate
