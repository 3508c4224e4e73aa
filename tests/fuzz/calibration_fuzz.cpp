// Fuzz target: any text as a calibration file parses or is refused with an InputError.
#include "fuzz_input.hpp"
#include "stepcast/cost/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(stepcast::fuzz::as_text(data, size));
  stepcast::fuzz::expect_value_or_input_error([&] { (void)stepcast::cost::parse_calibration(text, "fuzz.json"); });
  return 0;
}
