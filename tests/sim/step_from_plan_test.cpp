// The step graph of a plan: layers, TP collectives and FSDP gathers as simulate builds them from
// `stepcast predict`'s inputs. Expected figures come from Llama-2 7B's published shape
// (workloads/llama2-7b.json: 32 layers, h = 4096, ffn = 11008, gated MLP, 32000-token vocabulary).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_from_plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

using namespace stepcast;

namespace {

sim::StepSpec spec_of(const std::string& plan_text, int nodes) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
  const topology::Topology t = topology::load_topology(root + "/topologies/p4d-24xlarge.json", nodes);
  plan::Plan p = plan::parse_plan(plan_text);
  p.seq_len = 2048;
  p = plan::resolve(p, w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  cost::StepOptions options;
  options.explain = false;
  return sim::plan_step(p, cost::predict_step(w, p, t, options)).spec;
}

// One layer: attention 4h^2 (32 kv heads = 32 heads), gated MLP 3 h ffn, two RMSNorms of h:
// 67,108,864 + 135,266,304 + 8,192 = 202,383,360 parameters, 2 B each in bf16.
constexpr double kLayerBytes = 202383360.0 * 2;
// Outside the layers: input embedding and output layer, 2 x 32000 x 4096, and the final norm.
constexpr double kRootBytes = (2.0 * 32000 * 4096 + 4096) * 2;

}  // namespace

TEST_SUITE("sim.step_from_plan") {
  TEST_CASE("FULL_SHARD: 32 layers, each gathered twice and reduce-scattered over the 16 ranks") {
    const sim::StepSpec s = spec_of("fsdp=16,mbs=1,gbs=32,flash=on", 2);
    CHECK(s.layers == 32);
    REQUIRE(s.sharded.has_value());
    CHECK(s.sharded->regather);
    CHECK(s.sharded->shard_ranks == 16);
    CHECK(s.sharded->gather.value() == doctest::Approx(kLayerBytes).epsilon(1e-9));
    CHECK(s.sharded->reduce_scatter.value() == doctest::Approx(kLayerBytes).epsilon(1e-9));
    CHECK(s.sharded->root_gather.value() == doctest::Approx(kRootBytes).epsilon(1e-6));
    CHECK(s.sharded->replica_all_reduce.value() == 0.0);
    CHECK(s.syncs.empty());
    CHECK_FALSE(s.tensor_parallel.has_value());
  }

  TEST_CASE("SHARD_GRAD_OP keeps the gathered parameters for the backward") {
    const sim::StepSpec s = spec_of("fsdp=grad-op,mbs=1,gbs=32,flash=on", 2);
    REQUIRE(s.sharded.has_value());
    CHECK_FALSE(s.sharded->regather);
  }

  TEST_CASE("HYBRID_SHARD 8x2: gathers over 8 ranks, each shard's gradients all-reduced over the 2 replicas") {
    // A shard holds 1/8 of a layer's gradients: 404,766,720 / 8 B per all-reduce.
    const sim::StepSpec s = spec_of("fsdp=hybrid:8x2,mbs=1,gbs=32,flash=on", 2);
    REQUIRE(s.sharded.has_value());
    CHECK(s.sharded->shard_ranks == 8);
    CHECK(s.sharded->replica_all_reduce.value() == doctest::Approx(kLayerBytes / 8).epsilon(1e-9));
  }

  TEST_CASE("TP with sequence parallel: an all-gather and a reduce-scatter of s b h per slice") {
    // S = 2048 tokens x 1 sequence x 4096 x 2 B = 16,777,216 B; full recompute adds the
    // forward's two slices to the backward (4). pp = 2: 16 layers per stage.
    const sim::StepSpec s = spec_of("tp=2,pp=2,sp=on,recompute=full,mbs=1,gbs=32", 1);
    CHECK(s.layers == 16);
    REQUIRE(s.tensor_parallel.has_value());
    CHECK(s.tensor_parallel->ops.size() == 2);
    CHECK(s.tensor_parallel->size.value() == doctest::Approx(2048.0 * 4096 * 2));
    CHECK(s.tensor_parallel->forward_slices == 2);
    CHECK(s.tensor_parallel->backward_slices == 4);
    CHECK_FALSE(s.sharded.has_value());
  }

  TEST_CASE("ZeRO-1: gradients reduce-scattered in buckets, then all of a rank's parameters gathered once") {
    const sim::StepSpec s = spec_of("dp=16,zero=1,mbs=1,gbs=32,flash=on", 2);
    CHECK_FALSE(s.sharded.has_value());
    REQUIRE(s.syncs.size() == 1);
    CHECK(s.syncs.front().op == cost::CollectiveOp::kReduceScatter);
    // 32 layers and the parameters outside them, 2 B each.
    CHECK(s.parameter_gather.value() == doctest::Approx(32 * kLayerBytes + kRootBytes));
  }

  TEST_CASE("DDP: gradient buckets, no per-layer collectives") {
    const sim::StepSpec s = spec_of("dp=16,mbs=1,gbs=32,flash=on", 2);
    CHECK_FALSE(s.sharded.has_value());
    CHECK_FALSE(s.tensor_parallel.has_value());
    CHECK(s.syncs.size() == 1);
  }

  TEST_CASE("tp-overlap: the simulated step runs each slice's collectives beside its compute, as the formula does") {
    // Both engines expose per slice what the collectives take beyond the compute plus a 1/tp chunk;
    // on one p4d node nothing else shares the NVSwitch, so they agree within 1%.
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
    const topology::Topology t = topology::load_topology(root + "/topologies/p4d-24xlarge.json", 1);
    for (const char* text : {"tp=8,sp=on,gbs=4", "tp=8,sp=on,gbs=4,tp-overlap=on"}) {
      plan::Plan p = plan::parse_plan(text);
      p.seq_len = 2048;
      p = plan::resolve(p, w, t.gpu_count());
      cost::StepOptions options;
      options.explain = false;
      const cost::StepPrediction predicted = cost::predict_step(w, p, t, options);
      const sim::StepResult simulated = sim::simulate_step(t, sim::plan_step(p, predicted).spec);
      CAPTURE(std::string(text));
      CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.01));
      CHECK(simulated.breakdown.tp_comm.value() ==
            doctest::Approx(predicted.exposed_communication.value()).epsilon(0.02));
    }
  }

  TEST_CASE("overlap-grad-reduce and overlap-param-gather: the simulated step exposes what the formula does") {
    // Llama-2 7B with zero=1 on 2 p4d nodes: the reduction after the backward, or the parameter
    // gather beside the first forward, played as flows; both engines within 2% of each other.
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
    const topology::Topology t = topology::load_topology(root + "/topologies/p4d-24xlarge.json", 2);
    for (const char* text : {"dp=16,zero=1,gbs=64", "dp=16,zero=1,gbs=64,overlap-grad-reduce=off",
                             "dp=16,zero=1,gbs=64,overlap-param-gather=on"}) {
      plan::Plan p = plan::parse_plan(text);
      p.seq_len = 2048;
      p = plan::resolve(p, w, t.gpu_count());
      plan::validate(p, w, t.gpu_count());
      cost::StepOptions options;
      options.explain = false;
      const cost::StepPrediction predicted = cost::predict_step(w, p, t, options);
      const sim::StepResult simulated = sim::simulate_step(t, sim::plan_step(p, predicted).spec);
      CAPTURE(std::string(text));
      CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.02));
    }
  }
}
