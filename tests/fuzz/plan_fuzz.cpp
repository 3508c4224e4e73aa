// Fuzz target: any text as a compact plan ("dp=8,tp=2,...") parses, resolves and validates, or is
// refused with an InputError.
#include "fuzz_input.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  stepcast::workload::Workload model;
  model.name = "fuzz";
  model.shape = stepcast::workload::TransformerShape{};
  // Llama-3 8B (Meta model card: 32 layers, 4096 hidden, 32 heads, 8 kv heads, 14336 ffn).
  model.shape->layers = 32;
  model.shape->hidden = 4096;
  model.shape->heads = 32;
  model.shape->kv_heads = 8;
  model.shape->ffn_hidden = 14336;
  model.shape->gated_mlp = true;
  model.shape->vocab = 128256;
  model.shape->seq_len = 8192;
  model.parameters = stepcast::workload::parameter_count(*model.shape);
  stepcast::fuzz::expect_value_or_input_error([&] {
    auto plan = stepcast::plan::parse_plan(stepcast::fuzz::as_text(data, size));
    plan = stepcast::plan::resolve(plan, model, 64);
    stepcast::plan::validate(plan, model, 64);
  });
  return 0;
}
