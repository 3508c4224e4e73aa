// Fuzz target: any bytes as a workload file (stepcast JSON or a Hugging Face config.json) load
// or are refused with an InputError.
#include "fuzz_input.hpp"
#include "stepcast/workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = stepcast::fuzz::as_file(stepcast::fuzz::as_text(data, size), "workload.json");
  stepcast::fuzz::expect_value_or_input_error([&] { (void)stepcast::workload::load_workload(path); });
  return 0;
}
