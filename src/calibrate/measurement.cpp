// Reading a measurement file of either kind: nccl-tests text or stepcast-nccl-bench JSON.
#include "stepcast/calibrate/measurement.hpp"

#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/core/input_file.hpp"

namespace stepcast::calibrate {

Measurements parse_measurements(const std::string& text, const std::string& origin) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_nccl_bench_json(text, origin);
  return parse_nccl_tests_log(text, origin);
}

Measurements read_measurements(const std::filesystem::path& file) {
  return parse_measurements(read_text_file(file), file.string());
}

}  // namespace stepcast::calibrate
