// Fuzz target: any text as an nccl-tests log parses or is refused with an InputError (truncated,
// foreign and empty files included).
#include "fuzz_input.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  stepcast::fuzz::expect_value_or_input_error(
      [&] { (void)stepcast::calibrate::parse_nccl_tests_log(stepcast::fuzz::as_text(data, size), "fuzz.log"); });
  return 0;
}
