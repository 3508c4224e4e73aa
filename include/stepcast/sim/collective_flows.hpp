// Collectives as flows: the same algorithms as the analytical model (cost/collectives.hpp), played
// on the flow-level network as step-synchronous phases, so contention, uneven routes and
// concurrent traffic come out of the simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/des/time.hpp"
#include "stepcast/sim/network.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim {

/// One step of a collective: every member of `pattern` moves `bytes`; the step lasts the
/// drain plus `latency_steps` times the pattern's latency (a pipelined chain or tree pays its
/// depth once).
struct CollectivePhase {
  std::uint32_t pattern = 0;
  Bytes bytes;
  int latency_steps = 1;
  /// The collective model's latency for the phase, in place of latency_steps route latencies.
  std::optional<des::Tick> latency;
};

/// A collective as prepared patterns and the phases that use them, in order.
struct CollectiveSchedule {
  std::vector<TransferPattern> patterns;
  std::vector<CollectivePhase> phases;
  topology::LinkTier top_tier = topology::LinkTier::kIntraNode;
};

/// The schedule of `op` with `algorithm` for nccl-tests' size S over the GPUs `ranks` (indices into
/// topo.gpus(), in ring order). Ring all-reduce: 2(N-1) steps of S/N (reduce-scatter then
/// all-gather; Patarasuk and Yuan 2009); across nodes, one ring channel per NIC with rotated
/// node-local order so each channel leaves the node through a different NIC, as NCCL builds its
/// rings (NVIDIA/nccl src/graph/search.cc). Throws InputError for a combination the analytical
/// model refuses too.
CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, cost::CollectiveOp op,
                                    cost::Algorithm algorithm, Bytes size, std::span<const int> ranks);

/// The same collective run at once by several equal-sized groups (the data-parallel groups of
/// every tensor-parallel rank of a stage): one schedule whose phases move all groups together,
/// so they share the links they have in common.
CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, cost::CollectiveOp op,
                                    cost::Algorithm algorithm, Bytes size, std::span<const std::vector<int>> groups);

/// The collective as the cost model priced it (cost::price_collective), run at once by the equal
/// `groups`: NCCL's algorithms (and the closed-form ring) move each rank's bytes_per_rank over
/// ring-ordered pairs, one ring channel per NIC as build_collective lays them, each member at
/// most rate_per_rank / channels, and arrive the model's latency after the last byte. Alone on
/// idle links this takes the model's time; where the groups or other traffic share a link, the
/// links' max-min shares slow it. Other closed forms run their own phases as above.
CollectiveSchedule build_collective(Network& network, const topology::Topology& topo, cost::CollectiveOp op, Bytes size,
                                    const cost::CollectivePrice& price, std::span<const std::vector<int>> groups);

/// Receives the completion of collectives run by a CollectiveRunner.
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  virtual void on_collective_done(des::Tick now, std::uint64_t tag) = 0;
};

/// Plays schedules on a network, phase after phase; many collectives may run at once and share
/// the links. Network tags below 2^62 are this runner's; callers keep theirs apart.
class CollectiveRunner final : public TransferObserver {
 public:
  explicit CollectiveRunner(CollectiveObserver& observer) : observer_(&observer) {}
  void attach(Network& network) { network_ = &network; }

  /// Starts `schedule` now (it must outlive the run); `tag` comes back when its last phase arrives.
  void start(const CollectiveSchedule& schedule, std::uint64_t tag);
  void on_transfer_done(des::Tick now, std::uint64_t tag) override;

 private:
  struct Active {
    const CollectiveSchedule* schedule = nullptr;
    std::size_t phase = 0;
    std::uint64_t tag = 0;
  };
  void launch(std::uint32_t id);

  CollectiveObserver* observer_;
  Network* network_ = nullptr;
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_;
  TransferPattern nothing_;  // crosses no link: completes an empty schedule in event order
};

/// Runs one collective alone on `topo` and returns its time (for `--engine des` and tests).
Seconds simulate_collective(const topology::Topology& topo, cost::CollectiveOp op, cost::Algorithm algorithm,
                            Bytes size, std::span<const int> ranks);
/// The same for a collective priced by the cost model.
Seconds simulate_collective(const topology::Topology& topo, cost::CollectiveOp op, Bytes size,
                            const cost::CollectivePrice& price, std::span<const int> ranks);

}  // namespace stepcast::sim
