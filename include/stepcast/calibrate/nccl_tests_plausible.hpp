// Measured collectives that no machine can produce: a row whose bus bandwidth is ten times the
// fastest link of the topology it ran on, or whose time is below a tenth of its latency floor.
#pragma once

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// Refuses the first impossible row of `measurements` (nccl-tests logs or stepcast-nccl-bench
/// JSON) on `topology`, with its file and line: for a run of two or more ranks and a row of
/// nonzero size, the bus bandwidth its size and time give (nccl-tests' PERFORMANCE.md factor)
/// must not exceed 10 x the fastest link or HBM of the topology, and its time must not be below a
/// tenth of the smallest nonzero link latency. The factor of ten leaves room for what the file's
/// figures do not hold (NVLink SHARP's in-switch reduction, a latency written high).
void check_physically_possible(const Measurements& measurements, const topology::Topology& topology);

}  // namespace stepcast::calibrate
