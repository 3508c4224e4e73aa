// The shipped MPT shapes (workloads/mpt-*.json) against the parameter counts llm-foundry's
// benchmarking table prints for them (scripts/train/benchmarking/README.md, commit 49521837,
// "NumParams" at sequence length 2048): an exact match confirms biases, LayerNorm with bias,
// learned positions and tied embeddings, which the yamls leave to MPTConfig's defaults.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/workload/workload.hpp"

namespace mpt_workloads_test {

TEST_SUITE("workload.mpt") {
  TEST_CASE("every MPT shape has llm-foundry's NumParams to the parameter") {
    const std::filesystem::path root = STEPCAST_SOURCE_DIR;
    const std::pair<const char*, double> expected[] = {
        {"125m", 125311488.0},  {"350m", 355985408.0},  {"760m", 760470528.0},
        {"1b", 1315950592.0},   {"3b", 2651837440.0},   {"7b", 6658859008.0},
        {"13b", 12853954560.0}, {"30b", 29975214080.0}, {"70b", 64862437376.0}};
    for (const auto& entry : expected) {
      // Named, not a structured binding: clang 14 cannot capture those in CAPTURE's lambda.
      const char* size = entry.first;
      const double params = entry.second;
      CAPTURE(size);
      const auto w = stepcast::workload::load_workload(root / (std::string("workloads/mpt-") + size + ".json"));
      CHECK(w.parameters == params);
    }
  }
}

}  // namespace mpt_workloads_test
