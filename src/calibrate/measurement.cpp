// Reading a measurement file of either kind: nccl-tests text or stepcast-nccl-bench JSON; and
// checking its runs against what the command line states about them.
#include "stepcast/calibrate/measurement.hpp"

#include <fmt/format.h>

#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/input_file.hpp"

namespace stepcast::calibrate {

Measurements parse_measurements(const std::string& text, const std::string& origin, const RunFacts& facts) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return parse_nccl_tests_log(text, origin, facts);
  Measurements m = parse_nccl_bench_json(text, origin);
  for (std::size_t i = 0; i < m.runs.size(); ++i)
    check_run_facts(m.runs[i], facts, origin, fmt::format("/results/{}", i));
  return m;
}

Measurements read_measurements(const std::filesystem::path& file, const RunFacts& facts) {
  return parse_measurements(read_text_file(file), file.string(), facts);
}

void check_run_facts(const MeasuredCollective& run, const RunFacts& facts, const std::string& file,
                     const std::string& where) {
  const auto refuse = [&](const std::string& what) { throw InputError(file, where, what); };
  if (facts.op && *facts.op != run.op) {
    refuse(fmt::format("the {} run measured {}, but --op says {}", run.program, cost::to_string(run.op),
                       cost::to_string(*facts.op)));
  }
  if (facts.ranks && *facts.ranks != run.ranks) {
    refuse(fmt::format("the {} run has {} ranks, but --ranks says {}", run.program, run.ranks, *facts.ranks));
  }
  if (run.hosts <= 0) return;  // the file does not say where the ranks ran
  if (facts.nodes && *facts.nodes != run.hosts) {
    refuse(
        fmt::format("the {} run's ranks ran on {} hosts, but --nodes says {}", run.program, run.hosts, *facts.nodes));
  }
  const int per_host = (run.ranks + run.hosts - 1) / run.hosts;
  if (facts.gpus_per_node && *facts.gpus_per_node != per_host) {
    refuse(fmt::format("the {} run has {} ranks per host ({} ranks on {} hosts), but --gpus-per-node says {}",
                       run.program, per_host, run.ranks, run.hosts, *facts.gpus_per_node));
  }
}

}  // namespace stepcast::calibrate
