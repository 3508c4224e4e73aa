// The one collective model: NCCL's pick for the group, the NICs shared with the groups beside it,
// the step priced by it. Figures are hand-derived from NVIDIA/nccl src/graph/search.cc, paths.cc
// and NCCL 2.29's src/tuning/ (latencies in us, bandwidths in GB/s = 1e9 B/s), as in
// nccl_tuning_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/cluster.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace collective_model_test {

using namespace stepcast;
using namespace stepcast::cost;
using graph::CommTerm;
using graph::StepPrediction;

namespace {

const std::string kSource = STEPCAST_SOURCE_DIR;

topology::Topology shipped(const char* file, int nodes) {
  return topology::load_topology(kSource + "/topologies/" + file, nodes);
}

// The same with its network's terms at 1: NCCL's model as NCCL states it, which the hand
// derivations below restate (the terms have their own test, tests/cost/network_terms_test.cpp).
topology::Topology nccl_as_stated(const char* file, int nodes) {
  return topology::load_topology_with_sets(kSource + "/topologies/" + file, nodes,
                                           {"nics.network.latency_factor=1", "nics.network.bandwidth_efficiency=1",
                                            "nics.network.p2p_bandwidth_efficiency=1"});
}

CollectivePrice price(const topology::Topology& topo, CollectiveOp op, Bytes size, int ranks, int stride = 1,
                      topology::Concurrency concurrency = {}) {
  return price_collective(collective_group(topo, topo.tiers(ranks, stride, concurrency)), op, size, {});
}

StepPrediction predict(const char* workload_file, const std::string& plan_text, const topology::Topology& topo) {
  const auto w = workload::load_workload(kSource + "/workloads/" + workload_file);
  const auto p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  return predict_step(w, p, topo, options);
}

const CommTerm& term(const StepPrediction& p, std::string_view role) {
  for (const CommTerm& t : p.communication) {
    if (t.role == role) return t;
  }
  FAIL("no term for the group");
  return p.communication.front();
}

double us(Seconds s) { return s.value() * 1e6; }

}  // namespace

TEST_SUITE("graph.collective_model") {
  TEST_CASE(
      "25 MiB all-reduce over 128 DGX H100 nodes: NCCL's tree/LL128 in 401.6 us, intra-node hops at NVLink latency") {
    // NCCL's search (by hand): 8 NICs of 50 GB/s per node, a GPU's 18 NVLinks x 20.6 = 370.8
    // GB/s. Hopper inter speeds from 48: 48 fits 7 channels (370.8 / 48), 45 fits 8 = 360 GB/s,
    // nothing slower does better before 22/45 < 0.49 stops the search; no duplication on Hopper
    // below 50 GB/s with more than 4 channels. Bus 360 GB/s.
    // Tree/LL128: 360 x 0.92 = 331.2, capped at 8 ch x 36.0 (Hopper, > 2 nodes) = 288; x 120/128
    // = 270, capped at 8 x 29.0 = 232; algbw 232 x 0.5 = 116, x 0.9 tree correction at
    // log2(25 MiB / 64 B) = 18: 104.4 GB/s; 26214400 B / 104.4e9 = 251.1 us. Latency 14.0 + 2 x
    // ((8 - 1) x 1.25 NVLink + log2(128) = 7 x 8.5 network) = 150.5 us. In all 401.6 us, where
    // charging all 2046 ring steps the network's latency would take 29 ms.
    const topology::Topology topo = nccl_as_stated("dgx-h100.json", 128);
    const CollectivePrice p = price(topo, CollectiveOp::kAllReduce, Bytes(26214400.0), 1024);
    REQUIRE(p.nccl.has_value());
    CHECK(model_name(p) == "tree/LL128");
    CHECK(us(p.latency) == doctest::Approx(150.5));
    CHECK(us(p.bandwidth_time) == doctest::Approx(26214400.0 / 104.4e9 * 1e6));
    CHECK(us(p.time) == doctest::Approx(401.6).epsilon(1e-3));
  }

  TEST_CASE("the step prices its gradient buckets with the same model: Llama-2 7B DDP on 1024 H100s") {
    // 6.738e9 bf16 gradients = 13.48e9 B in 25 MiB buckets: 514 full buckets at 401.6 us each
    // (above) and a partial last one, 515 calls, so the term lies between 514 and 515 bucket times,
    // each call with the step's collective overhead beyond NCCL's price.
    const topology::Topology topo = nccl_as_stated("dgx-h100.json", 128);
    const StepPrediction p = predict("llama2-7b.json", "dp=1024,gbs=1024,flash=on", topo);
    const CommTerm& ddp = term(p, "data");
    const double overhead = p.compute_detail.params.collective_overhead.value();
    CHECK(ddp.model == "tree/LL128");
    CHECK(ddp.calls.count() == 515);
    CHECK(ddp.time.value() >= 514 * (401.5e-6 + overhead));
    CHECK(ddp.time.value() <= 515 * (401.7e-6 + overhead));
  }

  TEST_CASE("p4d, tp = 8: each tensor rank's data-parallel group gets half of the EFA NIC it shares") {
    // GPU 0 of each node alone on NIC 0 (12.5 GB/s): NCCL finds one 12 GB/s channel (Ampere inter
    // speeds: 12 fits once, 6 fits twice for the same 12; no duplication below 25 GB/s). 1 GiB
    // ring/Simple all-reduce over 2 ranks: algbw 12 x 2/2 = 12 GB/s, 89.48 ms. GPU 1 of each node
    // runs its own group through the same NIC: 6.25 GB/s each, the bandwidth part twice as long.
    const topology::Topology topo = shipped("p4d-24xlarge.json", 2);
    const Bytes size(1073741824.0);
    const CollectivePrice alone = price(topo, CollectiveOp::kAllReduce, size, 2, 8);
    const CollectivePrice shared = price(topo, CollectiveOp::kAllReduce, size, 2, 8, topology::Concurrency{8, 1});
    CHECK(model_name(alone) == "ring/Simple");
    CHECK(alone.bandwidth_time.value() == doctest::Approx(1073741824.0 / 12e9));
    CHECK(shared.nic_share == doctest::Approx(0.5));
    CHECK(shared.latency.value() == doctest::Approx(alone.latency.value()));
    CHECK(shared.bandwidth_time.value() == doctest::Approx(2.0 * alone.bandwidth_time.value()));
  }

  TEST_CASE("send/recv on NCCL's p2p channels: 8 x H100 over NVLink, and one GPU per node over its NIC") {
    // One node (src/graph/paths.cc by hand): the communicator's 2 x 12 = 24 channels round up to 32
    // p2p channels; an NVLink peer may use 2 x 18 NVLinks = 36 (64 as a power of two), so each peer
    // gets 32 channels of 30 GB/s = 960 GB/s, capped at the GPU's 18 x 20.6 = 370.8 GB/s. 1 GiB:
    // 2.8957 ms, plus one
    // ring/Simple step (8.4 + 3.4 us). nccl-tests measured 2974.5 us on such a node (xxrjun log).
    const topology::Topology one = shipped("dgx-h100.json", 1);
    const CollectivePrice p = price(one, CollectiveOp::kSendRecv, Bytes(1073741824.0), 8);
    CHECK(model_name(p) == "p2p/Simple");
    REQUIRE(p.p2p.has_value());
    CHECK(p.p2p->channels_per_peer == 32);
    CHECK(us(p.latency) == doctest::Approx(11.8));
    CHECK(p.bandwidth_time.value() == doctest::Approx(1073741824.0 / 370.8e9));
    // 10 nodes, GPU 0 of each: one NIC of 50 GB/s, ring graph 2 x 24 GB/s (48 duplicated), the
    // communicator 4 channels, so 4 p2p channels; a network peer gets max(1 NIC, ceil(50 / 14 GB/s
    // per channel) = 4), halved while 4 x ceil(10 peers / 8 per batch) = 8 > 4: 2 channels of
    // 14 GB/s = 28 GB/s. 1 GiB: 38.35 ms (measured 43.15 ms on 10 H100 nodes, one GPU each).
    const topology::Topology ten = nccl_as_stated("dgx-h100.json", 10);
    const CollectivePrice q = price(ten, CollectiveOp::kSendRecv, Bytes(1073741824.0), 10, 8);
    CHECK(q.p2p->channels_per_peer == 2);
    CHECK(q.bandwidth_time.value() == doctest::Approx(1073741824.0 / 28e9));
    CHECK(us(q.latency) == doctest::Approx(8.4 + 14.0));
  }

  TEST_CASE("all-to-all across nodes is bound by the node's NICs, which PXN spreads every GPU's traffic over") {
    // 4 DGX H100 nodes, 32 ranks: each rank's off-node share is 24/32 S; a node's 8 ranks send
    // 8 x 24/32 S through its 8 x 50 GB/s NICs. 1 GiB: 6 x 1 GiB / 400 GB/s = 16.1 ms.
    const topology::Topology topo = nccl_as_stated("dgx-h100.json", 4);
    const CollectivePrice p = price(topo, CollectiveOp::kAllToAll, Bytes(1073741824.0), 32);
    CHECK(p.bandwidth_time.value() == doctest::Approx(8.0 * 24.0 / 32.0 * 1073741824.0 / 400e9));
  }

  TEST_CASE("grad-reduce=fp32 reduces twice the bytes of grad-reduce=bf16 in the same buckets") {
    // Megatron-Core's DDP (zero=0 with grad-reduce=) buckets max(40M, 1M x 16) = 40M parameters
    // whatever the type: Llama 2 7B's 6,738,415,616 are 168.5 buckets, 169 calls, of 8e7 B in bf16
    // and 1.6e8 B in fp32. PyTorch's DDP (no grad-reduce=) counts its 25 MiB buckets in bytes:
    // 13,476,831,232 B of bf16 gradients are 514.1 of them, 515 calls.
    const topology::Topology topo = shipped("dgx-h100.json", 2);
    const CommTerm torch_ddp = term(predict("llama2-7b.json", "dp=16,gbs=64,flash=on", topo), "data");
    CHECK(torch_ddp.calls.count() == 515);
    CHECK(torch_ddp.size.value() == doctest::Approx(26'214'400.0));
    const CommTerm bf16 = term(predict("llama2-7b.json", "dp=16,gbs=64,flash=on,grad-reduce=bf16", topo), "data");
    const CommTerm fp32 = term(predict("llama2-7b.json", "dp=16,gbs=64,flash=on,grad-reduce=fp32", topo), "data");
    CHECK(bf16.calls.count() == 169);
    CHECK(fp32.calls.count() == 169);
    CHECK(bf16.size.value() == doctest::Approx(8e7));
    CHECK(fp32.size.value() == doctest::Approx(1.6e8));
    // Twice the bytes in as many calls: more time, but less than twice it, the calls' latency and
    // overhead being the same.
    CHECK(fp32.time.value() > bf16.time.value());
    CHECK(fp32.time.value() < 2.0 * bf16.time.value());
  }

  TEST_CASE("tp-overlap: with slices longer than their collectives only one chunk of tp is exposed") {
    // Llama-2 70B on one DGX H100 node, tp = 8, sequence parallel: each slice's all-gather and
    // reduce-scatter of s x b x h take far less than the slice's GEMMs, so per slice comm / tp
    // stays exposed (Wang et al. 2022's decomposition): 1/8 of the collectives' time.
    const topology::Topology topo = shipped("dgx-h100.json", 1);
    const StepPrediction plain = predict("llama2-70b.json", "tp=8,sp=on,gbs=8,recompute=full,flash=on", topo);
    const StepPrediction over =
        predict("llama2-70b.json", "tp=8,sp=on,gbs=8,recompute=full,flash=on,tp-overlap=on", topo);
    const CommTerm& a = term(plain, "tensor");
    const CommTerm& b = term(over, "tensor");
    CHECK(a.exposed.value() == doctest::Approx(a.time.value()));
    CHECK(b.exposed.value() == doctest::Approx(b.time.value() / 8.0));
    CHECK(over.step_time < plain.step_time);
  }

  TEST_CASE(
      "overlap-grad-reduce=off exposes the whole reduction, overlap-param-gather=on hides the gather behind the first "
      "forward") {
    // Llama-2 7B, zero=1 (Megatron-Core's distributed optimizer) over 16 H100s on 2 DGX nodes, 4
    // micro-batches. Its 6,738,415,616 parameters (32 layers of 202,383,360; 2 x 32000 x 4096 + 4096
    // outside them) are reduced and gathered in Megatron-Core's buckets of max(40M, 1M x 16) = 40M
    // parameters (8e7 B in bf16): 168 whole buckets of the 13,476,831,232 B and a last one, 169
    // calls, all stages at once; after the backward (overlap-grad-reduce=off) in one bucket, the whole
    // buffer. Exposed beside the forward: max(one bucket, all buckets - the first micro-batch's forward).
    const topology::Topology topo = shipped("dgx-h100.json", 2);
    const char* base = "dp=16,zero=1,gbs=64,flash=on";
    const StepPrediction plain = predict("llama2-7b.json", base, topo);
    const StepPrediction after = predict("llama2-7b.json", std::string(base) + ",overlap-grad-reduce=off", topo);
    const StepPrediction beside = predict("llama2-7b.json", std::string(base) + ",overlap-param-gather=on", topo);
    const auto find = [](const StepPrediction& p, CollectiveOp op) {
      for (const CommTerm& t : p.communication) {
        if (t.role == "data" && t.op == op) return t;
      }
      FAIL("no data-parallel term");
      return CommTerm{};
    };
    const CommTerm rs = find(plain, CollectiveOp::kReduceScatter);
    const CommTerm rs_after = find(after, CollectiveOp::kReduceScatter);
    CHECK(rs.calls.count() == 169);
    CHECK(rs.exposed.value() < rs.time.value());
    const Seconds overhead = plain.compute_detail.params.collective_overhead;
    const Seconds whole =
        price(topo, CollectiveOp::kReduceScatter, Bytes(13'476'831'232.0), 16, 1, topology::Concurrency{1, 1}).time;
    CHECK(rs_after.calls.count() == 1);
    CHECK(rs_after.time.value() == doctest::Approx((whole + overhead).value()));
    CHECK(rs_after.exposed.value() == doctest::Approx(rs_after.time.value()));
    // Exposed whole, the one reduction no longer takes its blocks' share of the H100's 132 SMs from
    // the compute the buckets hid behind: the step grows by its time less the buckets' exposed
    // part and less that share of their hidden time.
    CHECK((after.step_time - plain.step_time).value() ==
          doctest::Approx((rs_after.time - rs.exposed).value() - (rs.time - rs.exposed).value() * rs.blocks / 132.0));

    const CommTerm ag = find(beside, CollectiveOp::kAllGather);
    CHECK(ag.calls.count() == 169);
    CHECK(ag.size.value() == doctest::Approx(8e7));
    const Seconds bucket = price(topo, CollectiveOp::kAllGather, Bytes(8e7), 16, 1, topology::Concurrency{1, 1}).time;
    const Seconds forward = beside.compute_detail.stages.front().forward;
    // Beside the first forward, which its blocks slow by their share of the SMs while it hides
    // them, and that much longer forward hides as much more of them.
    const double outlast = std::max(bucket.value(), ag.time.value() - forward.value());
    const double slowed = (ag.time.value() - outlast) * ag.blocks / 132.0;
    CHECK(ag.exposed.value() == doctest::Approx(outlast - std::min(outlast, slowed)));
    CHECK(ag.exposed.value() < find(plain, CollectiveOp::kAllGather).exposed.value());
    CHECK(beside.step_time < plain.step_time);
  }

  TEST_CASE("overlap-param-gather=on with model chunks: each chunk's gathers wait only for its own first forward") {
    // Llama-2 7B, zero=1 on 2 DGX H100 nodes: pp = 2 inside the replicas (order=tp-pp-cp-ep-dp), so
    // each stage's dp = 8 group spans both nodes; seq 512, gbs 16: m = 2 micro-batches, v = 4 model
    // chunks. Megatron-Core gathers the first two chunks' parameters at the step's start and chunk
    // c's (c >= 2) when chunk c - 1 runs its first forward (schedules.py, param_sync_func), one
    // stream; each chunk's first forward waits for its own gathers (chunk 0's for its first bucket),
    // and min(pp, m) = 2 forwards of a chunk run before the next chunk's first. With g = G / 4 of the
    // gathers' time G per chunk and f the shortest stage's forward / 4 per chunk, g > 2f:
    //   chunk 0 waits g - f; chunk 1, gathered by 2g, is due at (g - f) + 2f: waits g - f more;
    //   chunk 2, issued at 2g, gathered by 3g, is due at 2g + 2f: waits g - 2f; chunk 3 the same;
    // 4g - 6f = G - 6f in all (G - f if every gather waited behind the first forward alone). The
    // first chunk's share of the gathers, beside its first forward, slows it by their blocks' share
    // of the 132 SMs and so hides that much more of them.
    const topology::Topology topo = shipped("dgx-h100.json", 2);
    const StepPrediction p =
        predict("llama2-7b.json",
                "dp=8,pp=2,vp=4,zero=1,mbs=1,gbs=16,seq=512,schedule=interleaved,order=tp-pp-cp-ep-dp,flash=on,"
                "overlap-param-gather=on",
                topo);
    const CommTerm* gather = nullptr;
    for (const CommTerm& t : p.communication) {
      if (t.role == "data" && t.op == CollectiveOp::kAllGather) gather = &t;
    }
    REQUIRE(gather != nullptr);
    Seconds forward = p.compute_detail.stages.front().forward;
    for (const auto& stage : p.compute_detail.stages) forward = std::min(forward, stage.forward);
    const double g = gather->time.value() / 4.0;
    const double f = forward.value() / 4.0;
    REQUIRE(g > 2.0 * f);
    const double wait = 4.0 * g - 6.0 * f;
    const double slowed = (gather->time.value() - wait) * gather->blocks / 132.0 / 4.0;
    CHECK(gather->exposed.value() == doctest::Approx(wait - std::min(wait, slowed)));
  }

  TEST_CASE("interleaved pipeline sends hide behind the next chunk: only the fill and drain hops are exposed") {
    // Llama-2 7B, tp = 8 on each of 2 DGX H100 nodes, pp = 2, gbs 8: m = 8 micro-batches. Each
    // stage sends 2 m v transfers of s b h / t = 4096 x 4096 x 2 / 8 = 4 MiB across the nodes.
    // 1F1B blocks on all 2 x 8 = 16; the stage that sets the pace (an end one) on its own 8, and the
    // other 8 it waits for are in its bubble. Interleaved with v = 2: 32 transfers, each far shorter
    // than a chunk's compute (a quarter of 7B's layers), so only the first micro-batch's 2(pv - 1)
    // = 6 hops through the chunks and back stay exposed: 6/32 of the sends' time.
    const topology::Topology topo = shipped("dgx-h100.json", 2);
    const CommTerm one = term(predict("llama2-7b.json", "tp=8,pp=2,gbs=8,flash=on", topo), "pipeline");
    const CommTerm inter =
        term(predict("llama2-7b.json", "tp=8,pp=2,vp=2,schedule=interleaved,gbs=8,flash=on", topo), "pipeline");
    CHECK(one.size.value() == doctest::Approx(4.0 * 1024 * 1024));
    CHECK(one.calls.count() == 16);
    CHECK(one.exposed.value() == doctest::Approx(one.time.value() / 2.0));
    CHECK(inter.calls.count() == 32);
    CHECK(inter.exposed.value() == doctest::Approx(inter.time.value() * 6.0 / 32.0));
  }

  TEST_CASE("a named closed form or a closed-form calibration prices with the closed form") {
    const topology::Topology topo = shipped("p4d-24xlarge.json", 2);
    const topology::CommTiers tiers = topo.tiers(16);
    const CollectiveGroup group = collective_group(topo, tiers);
    CollectiveModel ring;
    ring.closed_form = Algorithm::kRing;
    const CollectivePrice p = price_collective(group, CollectiveOp::kAllReduce, Bytes(14e9), ring);
    CHECK(model_name(p) == "ring");
    CHECK(p.time.value() ==
          doctest::Approx(
              estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, Bytes(14e9), tiers).time.value()));
    Calibration fitted;
    fitted.tiers.node_bw = CalibratedBandwidth{BytesPerSecond(25e9), "test"};
    CollectiveModel calibrated;
    calibrated.calibration = &fitted;
    const CollectivePrice c = price_collective(group, CollectiveOp::kAllReduce, Bytes(14e9), calibrated);
    CHECK(model_name(c) == "ring");
    CHECK(c.time.value() == doctest::Approx(estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, Bytes(14e9),
                                                                apply(fitted, tiers))
                                                .time.value()));
  }

  TEST_CASE("property: never faster than the bandwidth bound of the tier it crosses") {
    // One node: a rank puts its bytes on its own links (intra_bw each way). Across nodes, a node's
    // ranks together send at least nccl-tests' busbw factor for the node count x S through the NICs
    // they share (node_bw): the lower bound of Patarasuk and Yuan (2009), 2(N-1)/N S per node for
    // an all-reduce over N nodes, which NCCL's NVLS-Tree between two nodes reaches (each node sends
    // its reduced S once, up or down the tree). Switches that reduce (CollNet, and NVLS through it)
    // lower the all-reduce's bound to S per node, sent once into them; all-gather and reduce-scatter
    // keep (N-1)/N S, what a node must receive or send whoever reduces.
    std::mt19937_64 rng(20261130);
    const topology::Topology topos[] = {
        shipped("dgx-h100.json", 4),
        shipped("p4d-24xlarge.json", 4),
        shipped("alcf-polaris.json", 8),
        shipped("p5-48xlarge.json", 2),
        topology::load_topology_with_sets(kSource + "/topologies/dgx-a100.json", 4, {"collnet.enabled=true"}),
        topology::load_topology_with_sets(kSource + "/topologies/dgx-h100.json", 4, {"collnet.enabled=true"})};
    const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                CollectiveOp::kBroadcast, CollectiveOp::kAllToAll,  CollectiveOp::kSendRecv};
    for (int i = 0; i < 400; ++i) {
      const topology::Topology& topo = topos[rng() % 6];
      const CollectiveOp op = ops[rng() % 6];
      const int stride = 1 << (rng() % 4);
      const int max_ranks = (topo.gpu_count() - 1) / stride + 1;
      const int ranks = 2 + static_cast<int>(rng() % static_cast<std::uint64_t>(max_ranks - 1));
      const int groups = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(stride));
      const Bytes size(std::ldexp(1.0, 10 + static_cast<int>(rng() % 24)));
      const topology::CommTiers t = topo.tiers(ranks, stride, topology::Concurrency{groups, 1});
      const CollectivePrice p = price_collective(collective_group(topo, t), op, size, {});
      const bool in_network = p.flows.heads > 0 && op == CollectiveOp::kAllReduce;
      const double factor = in_network ? 1.0 : busbw_factor(op, t.nodes == 1 ? ranks : t.nodes);
      const double bound = t.nodes == 1 ? p.flows.bytes_per_rank.value() / t.intra_bw.value()
                                        : factor * size.value() / t.node_bw.value();
      const bool p2p = op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
      INFO("seed 20261130, case " << i << ": " << topo.name() << " " << to_string(op) << " " << ranks
                                  << " ranks, stride " << stride << ", " << groups << " groups, " << size.value()
                                  << " B");
      if (!p2p) CHECK(p.bandwidth_time.value() >= bound * (1.0 - 1e-9));
      CHECK(p.time.value() >= p.bandwidth_time.value());
    }
  }

  TEST_CASE("property: adding concurrent groups never makes a collective faster") {
    std::mt19937_64 rng(7);
    const topology::Topology topo = shipped("p4d-24xlarge.json", 4);
    for (int i = 0; i < 100; ++i) {
      const int stride = 1 << (1 + rng() % 3);  // 2, 4, 8: groups beside it on the other GPUs
      const int ranks = topo.gpu_count() / stride;
      const Bytes size(std::ldexp(1.0, 12 + static_cast<int>(rng() % 20)));
      const CollectiveOp op = rng() % 2 ? CollectiveOp::kAllReduce : CollectiveOp::kAllGather;
      double previous = 0.0;
      for (int groups = 1; groups <= stride; ++groups) {
        const double t = price(topo, op, size, ranks, stride, topology::Concurrency{groups, 1}).time.value();
        INFO("seed 7, case " << i << ", " << groups << " groups");
        CHECK(t >= previous * (1.0 - 1e-12));
        previous = t;
      }
    }
  }

  TEST_CASE(
      "property: more NIC bandwidth never slows a step's communication (beyond NCCL's own channel-count effects)") {
    // NCCL's search is not monotone in the NIC's rate: 4 NICs of 65 GB/s give 16 channels of
    // 15 GB/s, 4 of 130 GB/s give 10 of 24 GB/s (same 240 GB/s bus, the GPU's NVLinks), and the
    // per-channel LL128 cap (20 GB/s x channels) then makes a mid-size LL128 bucket slower. Such
    // effects stay below 1e-4 of a step; anything larger is a bug of stepcast's own. The compute
    // beside the collectives is left out: more channels hold more SMs, which it may lose.
    std::mt19937_64 rng(11);
    const char* plans[] = {"dp=16,gbs=64,flash=on",
                           "dp=4,tp=4,gbs=64,flash=on",
                           "dp=8,tp=2,zero=1,gbs=64,flash=on",
                           "fsdp=16,gbs=64,flash=on",
                           "dp=2,tp=4,pp=2,gbs=64,sp=on,flash=on",
                           "dp=4,tp=2,pp=2,zero=2,gbs=64,flash=on"};
    for (int i = 0; i < 40; ++i) {
      topology::ClusterSpec s;
      s.name = "test-cluster";
      s.source = "hand-made for tests";
      s.gpu = topology::load_gpu_file(STEPCAST_SOURCE_DIR "/topologies/gpus/a100-sxm4-40gb.json");
      s.gpus_per_node = 8;
      s.intra_bandwidth_per_gpu = BytesPerSecond(300e9);
      s.intra_latency = Seconds(1.7e-6);
      s.nics_per_node = 1 << (rng() % 4);
      s.nic_latency = Seconds(7e-6);
      s.nodes = 2;
      s.fabric = topology::FabricKind::kSingleSwitch;
      const double nic = 5e9 + 5e9 * static_cast<double>(rng() % 20);
      s.nic_bandwidth = BytesPerSecond(nic);
      const topology::Topology slow = topology::make_cluster(s);
      s.nic_bandwidth = BytesPerSecond(nic * (1.0 + 0.1 * static_cast<double>(1 + rng() % 10)));
      const topology::Topology fast = topology::make_cluster(s);
      const std::string plan = plans[rng() % 6];
      INFO("seed 11, case " << i << ": " << plan << ", " << s.nics_per_node << " NICs of " << nic << " B/s, faster "
                            << s.nic_bandwidth.value());
      const auto communicating = [](const StepPrediction& p) {
        return (p.step_time - p.compute_beside_collectives).value();
      };
      CHECK(communicating(predict("llama2-7b.json", plan, fast)) <=
            communicating(predict("llama2-7b.json", plan, slow)) * (1.0 + 1e-4));
    }
  }
}

}  // namespace collective_model_test
