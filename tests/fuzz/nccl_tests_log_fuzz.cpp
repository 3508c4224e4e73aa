// Fuzz target: any text as an nccl-tests log parses or is refused with an InputError (truncated,
// foreign and empty files included), both alone and with command-line facts (--op, --ranks,
// --nodes, --gpus-per-node) that fill in or contradict what the log says.
#include "fuzz_input.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = stepcast::fuzz::as_text(data, size);
  stepcast::fuzz::expect_value_or_input_error(
      [&] { (void)stepcast::calibrate::parse_nccl_tests_log(text, "fuzz.log"); });
  stepcast::calibrate::RunFacts facts;
  facts.op = stepcast::cost::CollectiveOp::kAllReduce;
  facts.ranks = 8;
  facts.nodes = 2;
  facts.gpus_per_node = 4;
  stepcast::fuzz::expect_value_or_input_error(
      [&] { (void)stepcast::calibrate::parse_nccl_tests_log(text, "fuzz.log", facts); });
  return 0;
}
