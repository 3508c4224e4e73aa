// The step-time predictor on a shipped topology: the breakdown sums to the step time, the
// figures follow from compute alone where nothing communicates, and more bandwidth never
// adds time.
#include <doctest/doctest.h>

#include <filesystem>

#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace step_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

graph::StepPrediction predict(const std::string& workload_file, const std::string& plan_text,
                              const topology::Topology& topo, std::optional<double> fraction = std::nullopt) {
  const auto w = workload::load_workload(kSource / "workloads" / workload_file);
  const auto p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.achieved_fraction = fraction;
  return graph::predict_step(w, p, topo, options);
}

}  // namespace

TEST_SUITE("graph.step") {
  TEST_CASE("step time is compute + bubble + exposed communication + optimizer, and tokens/s and MFU follow from it") {
    const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 2);
    const auto p = predict("llama2-7b.json", "fsdp=16,gbs=256,flash=on", topo);
    CHECK(p.step_time.value() ==
          doctest::Approx((p.compute + p.bubble + p.exposed_communication + p.optimizer).value()));
    Seconds exposed(0.0);
    for (const auto& t : p.communication) {
      CHECK(t.exposed.value() <= t.time.value() * (1.0 + 1e-12) + 1e-12);
      exposed += t.exposed;
    }
    CHECK(exposed.value() == doctest::Approx(p.exposed_communication.value()));
    CHECK(p.tokens_per_s == doctest::Approx(256.0 * 4096.0 / p.step_time.value()));
    CHECK(p.mfu == doctest::Approx(p.compute_detail.flops.model.value() / p.step_time.value() / (16.0 * 312e12)));
    CHECK(p.memory.total.value() < p.fit.capacity.value());
    CHECK(p.fit.fits);
  }

  TEST_CASE("one GPU communicates nothing: the step is compute + optimizer, compute = FLOPs / achieved rate") {
    const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 1);
    // Megatron-LM 1.7B shape, batch 8 x 2048 tokens, 50% of the 312 TFLOP/s bf16 peak.
    // FLOPs by Narayanan's formula with 72 (no recompute): 72 x 8 x 2048 x 24 x 2304^2 x
    // (1 + 2048/13824 + 51200/663552) = 1.4977e14 x 1.2253 ... computed below from the pieces.
    const double B = 8, s = 2048, l = 24, h = 2304, V = 51200;
    const double flops = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
    const auto p = predict("megatron2021-1.7b.json", "dp=8,gbs=8",
                           topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 1), 0.5);
    // The compute beside the data-parallel all-reduce it hides runs on the SMs NCCL's blocks leave:
    // each term's hidden time x its blocks / the A100's 108 SMs.
    double beside = 0.0;
    for (const auto& t : p.communication) beside += (t.time - t.exposed).value() * t.blocks / 108.0;
    CHECK(p.compute_beside_collectives.value() == doctest::Approx(beside));
    CHECK((p.compute - p.compute_beside_collectives).value() == doctest::Approx(flops / 8.0 / 156e12));
    const auto single = [&] {
      const auto w = workload::load_workload(kSource / "workloads/megatron2021-1.7b.json");
      auto plan1 = plan::resolve(plan::parse_plan("dp=1,gbs=8"), w, 0);
      graph::StepOptions options;
      options.achieved_fraction = 0.5;
      return graph::predict_step(w, plan1, topo, options);
    }();
    CHECK(single.communication.empty());
    CHECK(single.compute.value() == doctest::Approx(flops / 156e12));
    CHECK(single.step_time.value() == doctest::Approx((single.compute + single.optimizer).value()));
  }

  TEST_CASE("tensor and pipeline parallel add their collectives and the bubble (p-1)/m") {
    const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 2);
    const auto p = predict("llama2-13b.json", "tp=4,pp=2,gbs=64,sp=on,recompute=selective", topo);
    // p = 2, m = 64 / (2 x 1) = 32. 1F1B runs the heavier stage's 32 micro-batches (the last: the
    // output layer and loss) and the other's once: (p-1)/m of it, scaled by the stages' ratio. The
    // tensor calls inside the layers, the same on both stages, pull it a little towards 1/32.
    const auto& stages = p.compute_detail.stages;
    const double ratio = (stages[0].forward + stages[0].backward) / (stages[1].forward + stages[1].backward);
    REQUIRE(ratio < 1.0);
    CHECK(p.bubble_fraction >= ratio / 32.0);
    CHECK(p.bubble_fraction <= 1.0 / 32.0);
    bool has_tp = false;
    bool has_pp = false;
    for (const auto& t : p.communication) {
      has_tp = has_tp || t.role == "tensor";
      has_pp = has_pp || t.role == "pipeline";
    }
    CHECK(has_tp);
    CHECK(has_pp);
  }

  TEST_CASE(
      "ZeRO-1 reduce-scatters in Megatron-Core's 40M-parameter buckets: only the last one outlasts the backward") {
    // 16 A100s, one per node, each on its own 400 Gbps (50e9 B/s) NIC: the seed's flat machine.
    // Megatron-Core's bucket is max(40M, 1M x dp = 16M) = 40M parameters, 8e7 B of bf16 gradients.
    // NCCL 2.29's model (src/graph/search.cc and src/tuning/, by hand): through one 50 GB/s NIC the
    // search settles on one 48 GB/s channel, duplicated into 2 x 24 GB/s (speed >= 25 on Ampere),
    // bus 48 GB/s; reduce-scatter runs a ring only. Ring/Simple: algbw 48 x 16/15 = 51.2 GB/s,
    // 8e7 B / 51.2e9 B/s = 1.5625 ms; latency baseLat 8.4 us + 15 inter-node steps x 14 us = 218.4 us;
    // 1.7809 ms in all, and the step's collective overhead beyond NCCL's price. Ring/LL128
    // (bus 48 x 0.92 capped at 2 channels x 20 = 40), ring/LL (48 x 0.5 capped at llMaxBw 20.4)
    // and PAT (one GPU per node: 48 x 0.75 = 36) are slower. The other buckets hide behind a
    // backward of about a second; the last one is exposed.
    const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", 16);
    const auto p = predict("llama2-7b.json", "dp=16,zero=1,flash=on", topo);
    bool found = false;
    for (const auto& t : p.communication) {
      if (t.op != cost::CollectiveOp::kReduceScatter) continue;
      found = true;
      CHECK(t.size.value() == doctest::Approx(8e7));
      CHECK(t.model == "ring/Simple");
      CHECK(t.exposed.value() == doctest::Approx(1.7809e-3 + p.compute_detail.params.collective_overhead.value()));
    }
    CHECK(found);
  }

  TEST_CASE("the same inputs give the same prediction, byte for byte") {
    const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 2);
    const auto a = predict("llama2-7b.json", "dp=4,tp=4,zero=1,gbs=64", topo);
    const auto b = predict("llama2-7b.json", "dp=4,tp=4,zero=1,gbs=64", topo);
    CHECK(a.step_time.value() == b.step_time.value());
    CHECK(a.memory.total.value() == b.memory.total.value());
  }
}

}  // namespace step_test
