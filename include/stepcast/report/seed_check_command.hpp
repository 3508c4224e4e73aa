// `stepcast seed-check` (and `stepcast` alone): the seed's worked communication and memory check.
#pragma once

#include <string>

namespace stepcast::report {

struct SeedCheckRequest {
  std::string workload = "workloads/seed-7b.json";
  std::string flat = "topologies/flat-400gbps.json";
  std::string cluster = "topologies/p4d-24xlarge.json";
  bool json = false;
};

/// The seed's tables (or JSON): gradient all-reduce times and the FSDP memory example.
std::string seed_check_command(const SeedCheckRequest& request);

}  // namespace stepcast::report
