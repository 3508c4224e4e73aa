// Capacity cells one at a time, as MPI ranks run them: table --refine shows the plan the event
// engine finds fastest among the analytical top K, and a cell rebuilt on rank 0 from its choice
// alone (candidate id, counts, note, simulated time) equals the cell its rank computed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "stepcast/planner/capacity.hpp"
#include "stepcast/planner/refine.hpp"
#include "stepcast/workload/workload.hpp"

namespace capacity_cells_test {

using namespace stepcast;

namespace {

const std::filesystem::path kRoot(STEPCAST_SOURCE_DIR);

// MPT-1B on one and two p4d nodes (8 and 16 A100s), and 12 GPUs, which fill no whole node.
planner::CapacityRequest request(std::size_t refine) {
  planner::CapacityRequest req;
  req.workloads.push_back(workload::load_workload(kRoot / "workloads/mpt-1b.json"));
  req.topologies.push_back(kRoot / "topologies/p4d-24xlarge.json");
  req.gpus = {8, 12, 16};
  req.global_batch = 256;
  req.seq_len = 2048;
  req.search.threads = 1;
  req.refine = refine;
  return req;
}

// Llama 3 8B at 8192 tokens on GB200 NVL72 racks, `gpus` GPUs, `global_batch` sequences.
planner::CapacityRequest gb200_llama3_8b(int gpus, int global_batch) {
  planner::CapacityRequest req;
  req.workloads.push_back(workload::load_workload(kRoot / "workloads/llama3-8b.json"));
  req.topologies.push_back(kRoot / "topologies/gb200-nvl72.json");
  req.gpus = {gpus};
  req.global_batch = global_batch;
  req.seq_len = 8192;
  req.search.threads = 1;
  return req;
}

planner::CellChoice choice_of(const planner::CapacityCell& c) {
  return {c.per_domain, c.plan_id, c.fits, c.candidates, c.note, c.simulated_step_time};
}

}  // namespace

TEST_CASE("table --refine 3 shows the engine's fastest of the analytical top 3") {
  const planner::CapacityRequest req = request(3);
  const planner::CellSpec spec{0, 0, 16};
  const planner::CapacityCell cell = planner::capacity_cell(req, spec);
  REQUIRE(cell.fits);
  REQUIRE(cell.simulated_step_time);
  // The top 3 by the analytical model, each simulated on its own.
  const topology::Topology topo = topology::load_topology(req.topologies[0], 2);
  planner::SearchSpace space;
  space.gpus = 16;
  space.gpus_per_node = 8;
  space.global_batch = 256;
  space.seq_len = 2048;
  planner::SearchOptions options;
  options.threads = 1;
  const planner::SearchResult result = planner::search(req.workloads[0], topo, space, options);
  REQUIRE(result.ranked.size() >= 3);
  Seconds fastest = planner::simulated_step_time(req.workloads[0], topo, result.ranked[0].plan, options.step);
  for (std::size_t i = 1; i < 3; ++i) {
    fastest =
        std::min(fastest, planner::simulated_step_time(req.workloads[0], topo, result.ranked[i].plan, options.step));
  }
  CHECK(cell.simulated_step_time->value() == fastest.value());
  CHECK(planner::simulated_step_time(req.workloads[0], topo, *cell.plan, options.step).value() == fastest.value());
}

TEST_CASE("a cell rebuilt from its choice alone equals the cell computed whole") {
  for (const std::size_t refine : {std::size_t{0}, std::size_t{2}}) {
    const planner::CapacityRequest req = request(refine);
    for (const planner::CellSpec& spec : planner::capacity_cells(req)) {
      CAPTURE(spec.gpus);
      const planner::CapacityCell whole = planner::capacity_cell(req, spec);
      const planner::CapacityCell rebuilt = planner::rebuild_cell(req, spec, choice_of(whole));
      CHECK(rebuilt.plan.has_value() == whole.plan.has_value());
      if (whole.plan) CHECK(plan::to_string(*rebuilt.plan) == plan::to_string(*whole.plan));
      CHECK(rebuilt.metrics.step_time.value() == whole.metrics.step_time.value());
      CHECK(rebuilt.metrics.memory.total.value() == whole.metrics.memory.total.value());
      CHECK(rebuilt.metrics.mfu == whole.metrics.mfu);
      CHECK(rebuilt.note == whole.note);
      CHECK(rebuilt.nodes == whole.nodes);
      CHECK(rebuilt.simulated_step_time == whole.simulated_step_time);
    }
  }
  // 12 GPUs do not fill whole nodes of 8: a cell with a note and no plan, rebuilt as it was.
  const planner::CapacityCell skipped = planner::capacity_cell(request(0), {0, 0, 12});
  CHECK_FALSE(skipped.plan);
  CHECK(skipped.note == "12 GPUs do not fill whole nodes of 8");
}

TEST_CASE("a GB200 cell of 128 GPUs runs on 64 of each of 2 racks, as the search places it, and rebuilds") {
  planner::CapacityRequest req = gb200_llama3_8b(128, 256);
  const planner::CapacityCell cell = planner::capacity_cell(req, {0, 0, 128});
  REQUIRE(cell.plan.has_value());
  CHECK(cell.note == "64 of each of 2 NVLink domains' 72 GPUs");
  // Two racks of 18 trays, as --nodes counts them.
  CHECK(cell.nodes == 36);
  // The cell is the same as one asked for with --gpus-per-domain 64.
  req.gpus_per_domain = 64;
  const planner::CapacityCell asked = planner::capacity_cell(req, {0, 0, 128});
  CHECK(plan::to_string(*asked.plan) == plan::to_string(*cell.plan));
  CHECK(asked.metrics.step_time.value() == cell.metrics.step_time.value());
  req.gpus_per_domain = 0;
  const planner::CapacityCell rebuilt = planner::rebuild_cell(req, {0, 0, 128}, choice_of(cell));
  CHECK(rebuilt.note == cell.note);
  CHECK(rebuilt.metrics.step_time.value() == cell.metrics.step_time.value());
}

TEST_CASE("a GB200 cell of 576 GPUs is searched on 8 whole racks and on 64 of each of 9, shows the faster, rebuilds") {
  // 576 = 8 x 72 = 9 x 64. Each placement asked for alone (--gpus-per-domain 72, 64) gives the
  // two cells; the table's cell is the faster, noting the other's step.
  planner::CapacityRequest req = gb200_llama3_8b(576, 1152);
  const planner::CapacityCell cell = planner::capacity_cell(req, {0, 0, 576});
  REQUIRE(cell.plan.has_value());
  req.gpus_per_domain = 72;
  const planner::CapacityCell whole = planner::capacity_cell(req, {0, 0, 576});
  req.gpus_per_domain = 64;
  const planner::CapacityCell part = planner::capacity_cell(req, {0, 0, 576});
  req.gpus_per_domain = 0;
  REQUIRE(whole.fits);
  REQUIRE(part.fits);
  const bool part_faster = part.metrics.step_time < whole.metrics.step_time;
  const planner::CapacityCell& faster = part_faster ? part : whole;
  const planner::CapacityCell& slower = part_faster ? whole : part;
  CHECK(cell.metrics.step_time.value() == faster.metrics.step_time.value());
  CHECK(cell.per_domain == (part_faster ? 64 : 0));
  CHECK(cell.candidates == whole.candidates + part.candidates);
  const std::string other = part_faster ? "on whole NVLink domains: " : "on 64 of each of 9 NVLink domains: ";
  CHECK(cell.note.find(other + fmt::format("{:.3f} s", slower.metrics.step_time.value())) != std::string::npos);
  const planner::CapacityCell rebuilt = planner::rebuild_cell(req, {0, 0, 576}, choice_of(cell));
  CHECK(rebuilt.note == cell.note);
  CHECK(rebuilt.nodes == cell.nodes);
  CHECK(rebuilt.metrics.step_time.value() == cell.metrics.step_time.value());
}

}  // namespace capacity_cells_test
