// What a command's work will cost before it starts: CPU time and memory of simulating a plan,
// searching plans and simulating a collective, from the request's counts alone. Estimates within
// a few times of the truth, enough to refuse requests that would run for hours or exhaust memory.
#pragma once

#include <cstddef>

#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::planner {

/// CPU time on one core, and peak memory.
struct WorkEstimate {
  Seconds time;
  Bytes memory;

  /// Adds the work of `other` run in the same process, after or beside this: the times add, and
  /// so does the memory beyond the process's own (an upper bound for work run one after another).
  WorkEstimate& operator+=(const WorkEstimate& other);
  /// Adds the work of `other` run after this in the same process, this one's memory freed first
  /// (one run's simulation after another's): the times add, the memory is the larger.
  WorkEstimate& then(const WorkEstimate& other);
};

/// One step of `plan` on the event engine (sim::simulate_step): its compute tasks (pipeline stages x
/// micro-batches x model chunks x passes) and the per-layer collectives inside them, each weighted
/// by the ranks it spans. `every_replica`: per-step noise simulates every data-parallel replica;
/// `trace`: the spans are kept and written. Precondition: the plan is resolved and valid.
WorkEstimate simulation_work(const workload::Workload& workload, const plan::Plan& plan, bool every_replica,
                             bool trace);

/// The analytical search (or capacity cell) over `candidates` plans.
WorkEstimate search_work(std::size_t candidates);

/// A collective over `ranks` ranks run as flows on the event engine, once for each of `sizes`.
WorkEstimate collective_simulation_work(int ranks, std::size_t sizes);

}  // namespace stepcast::planner
