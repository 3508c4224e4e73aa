// Fuzz target: any bytes as a topology file load or are refused with an InputError.
#include "fuzz_input.hpp"
#include "stepcast/topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = stepcast::fuzz::as_file(stepcast::fuzz::as_text(data, size), "topology.json");
  stepcast::fuzz::expect_value_or_input_error([&] {
    const auto topo = stepcast::topology::load_topology(path);
    (void)topo.tiers(topo.gpu_count());
  });
  return 0;
}
