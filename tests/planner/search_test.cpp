// Plan search on a small case: a GPT 1.3B model on 16 A100 40 GiB GPUs (two p4d nodes). The
// candidate count is derived by hand below; a brute force over a wider space finds no fitting
// plan the search missed; the result is the same for any thread count.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/planner/candidates.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"

namespace search_test {

using namespace stepcast;

namespace {

// The 1.3B GPT of Megatron-LM's examples (24 layers, hidden 2048, 16 heads), GPT-3 XL's size
// (Brown et al. 2020, Table 2.1), vocabulary padded to 51200, sequences of 2048 tokens.
workload::Workload gpt_1_3b() {
  workload::TransformerShape s;
  s.layers = 24;
  s.hidden = 2048;
  s.heads = 16;
  s.kv_heads = 16;
  s.ffn_hidden = 8192;
  s.vocab = 51200;
  s.seq_len = 2048;
  s.biases = true;
  s.learned_positions = true;
  s.norm = workload::Norm::kLayerNorm;
  workload::Workload w;
  w.name = "gpt-1.3b";
  w.source = "test";
  w.shape = s;
  w.parameters = workload::parameter_count(s);
  return w;
}

const topology::Topology& two_p4d_nodes() {
  static const topology::Topology topo =
      topology::load_topology(std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies/p4d-24xlarge.json", 2);
  return topo;
}

planner::SearchSpace space_16() {
  planner::SearchSpace space;
  space.gpus = 16;
  space.gpus_per_node = 8;
  space.global_batch = 64;
  space.seq_len = 2048;
  space.max_micro_batch = 16;
  return space;
}

}  // namespace

TEST_SUITE("planner.search") {
  TEST_CASE("rejections are grouped by rule code, whatever their numbers, and the first example keeps them") {
    // The interleaving rule is broken with micro-batch counts 1, 2 and 4 and pp 2, 4 and 8 (hand
    // count below): one group. Each group's example is its lowest candidate's verdict, of its rule.
    const auto result = planner::search(gpt_1_3b(), two_p4d_nodes(), space_16());
    std::set<plan::Rule> rules;
    for (const auto& r : result.rejections) {
      CHECK(rules.insert(r.rule).second);  // one group per rule
      CHECK(r.example.rule == r.rule);
    }
    const auto interleave = std::find_if(result.rejections.begin(), result.rejections.end(),
                                         [](const auto& r) { return r.rule == plan::Rule::kInterleavedMicroBatches; });
    REQUIRE(interleave != result.rejections.end());
    // The lowest such candidate: tp=1, pp=2, dp=8 at mbs 8, one micro-batch (64 / (8 x 8)).
    CHECK(plan::describe(interleave->example) == "schedule=interleaved needs micro-batches (1) divisible by pp (2)");
    CHECK(interleave->example.number("micro_batches") == 1);
    // Largest group first, ties by the rule's summary.
    for (std::size_t i = 1; i < result.rejections.size(); ++i) {
      const auto& a = result.rejections[i - 1];
      const auto& b = result.rejections[i];
      CHECK((a.count > b.count || (a.count == b.count && plan::rule_summary(a.rule) < plan::rule_summary(b.rule))));
    }
  }

  TEST_CASE("1.3B on 16 GPUs: 22938 candidates, 2031 break a rule, counted per rule") {
    // Hand count. Per (tp, pp): dp = 16/(tp*pp); schedules S (pp=1: 1; pp>1: GPipe, 1F1B,
    // ZB-H1 + one interleaved per vp >= 2 dividing 24/pp: pp=2 -> 12 has 5 such vp -> 8,
    // pp=4 -> 6 -> {2,3,6} -> 6, pp=8 -> 3 -> {3} -> 4, pp=16 divides neither 24 nor 26 and has
    // no first/last split (middle stages of ceil(24/16) = 2 leave 24 - 2*14 < 2) -> 3);
    // shardings Z (dp=1: 1; else 6 plus ZeRO-1 and ZeRO-2 again with overlap-param-gather=on = 8,
    // +1 hybrid when g = 8/(tp*pp) has 2 <= g < dp, g | dp);
    // micro-batches M (powers of two <= min(16, 64/dp)); recompute 3; T tensor settings when
    // tp > 1 (sp off, sp on, sp on with tp-overlap: 3); R rank orders 2 when pp > 1 and dp > 1.
    //   tp=1:  pp=1 dp=16 1*9*3*3=81   pp=2 dp=8 8*9*4*3*2=1728  pp=4 dp=4 6*9*5*3*2=1620
    //          pp=8 dp=2 4*8*5*3*2=960  pp=16 dp=1 3*1*5*3=45                           -> 4434
    //   tp=2:  pp=1 dp=8 1*9*4*9=324   pp=2 dp=4 8*9*5*9*2=6480  pp=4 dp=2 6*8*5*9*2=4320
    //          pp=8 dp=1 4*1*5*9=180                                                     -> 11304
    //   tp=4:  pp=1 dp=4 1*9*5*9=405   pp=2 dp=2 8*8*5*9*2=5760  pp=4 dp=1 6*1*5*9=270   -> 6435
    //   tp=8:  pp=1 dp=2 1*8*5*9=360   pp=2 dp=1 8*1*5*9=360                             -> 720
    //   tp=16: pp=1 dp=1 1*1*5*9=45                                                      -> 45
    //   total 4434 + 11304 + 6435 + 720 + 45 = 22938.
    // Broken rules: tp=16 exceeds a node: 45. pp=16 does not divide 24 layers: 45.
    // Interleaved needs micro-batches m = 64/(dp*mbs) divisible by pp:
    //   tp=1 pp=2 dp=8 (m=1 at mbs 8): 5 vp * 9 * 1 * 3 * 2 = 270; tp=1 pp=4 dp=4 (m=2,1): 3*9*2*3*2 = 324;
    //   tp=1 pp=8 dp=2 (m=4,2): 1*8*2*3*2 = 96; tp=2 pp=2 dp=4 (m=1): 5*9*1*9*2 = 810;
    //   tp=2 pp=4 dp=2 (m=2): 3*8*1*9*2 = 432; tp=2 pp=8 dp=1 (m=4): 1*1*1*9 = 9 -> 1941.
    //   Total 45 + 45 + 1941 = 2031 invalid, 20907 valid.
    const auto result = planner::search(gpt_1_3b(), two_p4d_nodes(), space_16());
    CHECK(result.candidates == 22938);
    // The count a budget reads before the search builds anything.
    CHECK(planner::count_candidates(space_16(), gpt_1_3b()) == 22938);
    CHECK(result.invalid == 2031);
    // Fitting plans are counted before spellings of one plan are merged into one row (plan_dedup.hpp).
    CHECK(result.ranked.size() + result.merged + result.not_fitting == 20907);
    std::size_t tp_rule = 0, layer_rule = 0, interleave_rule = 0, memory = 0;
    for (const auto& r : result.rejections) {
      if (r.rule == plan::Rule::kTpWithinNode) tp_rule = r.count;
      if (r.rule == plan::Rule::kPpVpDivideLayers) layer_rule = r.count;
      if (r.rule == plan::Rule::kInterleavedMicroBatches) interleave_rule = r.count;
      if (r.rule == plan::Rule::kFitsGpuMemory) memory = r.count;
    }
    CHECK(tp_rule == 45);
    CHECK(layer_rule == 45);
    CHECK(interleave_rule == 1941);
    CHECK(memory == result.not_fitting);
    // No pipeline wins: 1.3B parameters fit one 40 GiB GPU once state is sharded (16 B/param x
    // 1.3e9 / 16 ranks = 1.3 GB), so splitting layers over stages only adds a bubble ((p-1)/m of
    // the compute, Narayanan et al. 2021). Pure data parallel, whose traffic overlaps the
    // backward pass, is within 2% of the best: a tensor split can only win by the larger
    // micro-batch's GEMM efficiency, its sequence-parallel collectives riding beside the GEMMs.
    REQUIRE(!result.ranked.empty());
    const auto& best = result.ranked.front();
    CHECK(best.plan.pp == 1);
    const auto pure_dp = std::find_if(result.ranked.begin(), result.ranked.end(),
                                      [](const planner::RankedPlan& r) { return r.plan.dp == 16; });
    REQUIRE(pure_dp != result.ranked.end());
    CHECK(pure_dp->metrics.step_time.value() <= 1.02 * best.metrics.step_time.value());
  }

  TEST_CASE("no plan reported as fitting exceeds the GPU memory in the memory model") {
    const auto result = planner::search(gpt_1_3b(), two_p4d_nodes(), space_16());
    REQUIRE(!result.ranked.empty());
    const Bytes capacity = two_p4d_nodes().gpu().memory;
    for (const auto& r : result.ranked) {
      const auto memory = cost::estimate_memory(gpt_1_3b(), r.plan);
      CHECK_MESSAGE(memory.total <= capacity, plan::to_string(r.plan));
    }
    for (std::size_t i = 1; i < result.ranked.size(); ++i) {
      CHECK(result.ranked[i - 1].metrics.step_time <= result.ranked[i].metrics.step_time);
    }
  }

  TEST_CASE("brute force over a wider space finds no valid fitting plan the search missed") {
    // Every degree split of 16 GPUs, every vp 1..12 with every schedule, every sharding (hybrid
    // with every shard group), every micro-batch size 1..16, recompute and sp. The rules come
    // from plan::problems and the memory model, not from the planner. Combinations that differ
    // in name only are folded as the search space defines them: pp=1 runs no schedule,
    // interleaving one chunk (vp=1) is 1F1B, dp=1 has nothing to shard, FSDP NO_SHARD and
    // hybrid over shard groups of one rank are DDP, hybrid over all dp ranks is FULL_SHARD;
    // other hybrid groups are searched over the node only.
    const auto w = gpt_1_3b();
    const auto& topo = two_p4d_nodes();
    const planner::SearchSpace space = space_16();
    std::set<std::string> brute;
    for (int tp = 1; tp <= 8; ++tp) {
      for (int pp = 1; pp <= 16; ++pp) {
        if (16 % (tp * pp) != 0) continue;
        const int dp = 16 / (tp * pp);
        for (int vp = 1; vp <= 12; ++vp) {
          for (const auto schedule :
               {plan::Schedule::kGpipe, plan::Schedule::k1F1B, plan::Schedule::kInterleaved, plan::Schedule::kZbH1}) {
            for (int sharding = 0; sharding <= static_cast<int>(plan::Sharding::kFsdpNone); ++sharding) {
              for (int group = 1; group <= dp; ++group) {
                const auto sh = static_cast<plan::Sharding>(sharding);
                if (sh == plan::Sharding::kFsdpHybrid ? dp % group != 0 : group != dp) continue;
                for (int mbs = 1; mbs <= 16; ++mbs) {
                  for (const auto rc : {plan::Recompute::kNone, plan::Recompute::kSelective, plan::Recompute::kFull}) {
                    for (const auto& [sp, overlap] : {std::pair{false, false}, {true, false}, {true, true}}) {
                      for (const auto order :
                           {plan::RankOrder::kStagesOutermost, plan::RankOrder::kStagesInsideReplicas}) {
                        // The rank order only moves ranks with a pipeline and replicas of it.
                        if ((pp == 1 || dp == 1) && order != plan::RankOrder::kStagesOutermost) continue;
                        plan::Plan p;
                        p.dp = dp;
                        p.tp = tp;
                        p.pp = pp;
                        p.vp = vp;
                        p.schedule = schedule;
                        p.sharding = sh;
                        p.shard_group = group;
                        p.micro_batch_size = mbs;
                        p.recompute = rc;
                        p.sequence_parallel = sp;
                        p.tp_overlap = overlap;
                        p.rank_order = order;
                        p.global_batch = 64;
                        p.seq_len = 2048;
                        if (!plan::problems(p, w, 16).empty()) continue;
                        if (pp == 1 || (schedule == plan::Schedule::kInterleaved && vp == 1))
                          p.schedule = plan::Schedule::k1F1B;
                        if (dp == 1 || sh == plan::Sharding::kFsdpNone) {
                          p.sharding = plan::Sharding::kDdp;
                          p.shard_group = dp;
                        }
                        if (p.sharding == plan::Sharding::kFsdpHybrid) {
                          // A shard group of one rank replicates (DDP); one of all dp ranks is FULL_SHARD.
                          if (group == 1) p.sharding = plan::Sharding::kDdp;
                          if (group == dp) p.sharding = plan::Sharding::kFsdpFull;
                          if (group != 1 && group != dp && group * tp * pp != 8) continue;
                          p.shard_group = p.sharding == plan::Sharding::kFsdpHybrid ? group : dp;
                        }
                        const auto memory = cost::estimate_memory(w, p);
                        if (!cost::check_fit(memory, topo.gpu().memory).fits) continue;
                        brute.insert(plan::to_string(p));
                        // A sharded optimizer may also gather beside the next forward, in the same memory.
                        if (p.sharding == plan::Sharding::kZero1 || p.sharding == plan::Sharding::kZero2) {
                          p.overlap_param_gather = true;
                          brute.insert(plan::to_string(p));
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    const auto result = planner::search(w, topo, space);
    std::set<std::string> found;
    // Every fitting spelling is found: as a row, or merged into the row of the plan it spells.
    for (const auto& r : result.ranked) {
      found.insert(plan::to_string(r.plan));
      for (const auto& e : r.equivalents) found.insert(plan::to_string(e));
    }
    CHECK(found.size() == result.ranked.size() + result.merged);  // no plan twice
    CHECK(brute.size() == found.size());
    for (const auto& s : brute) CHECK_MESSAGE(found.count(s) == 1, "missed: " << s);
  }

  TEST_CASE("every ranked plan's step is what a fresh prediction gives (no cache shared between variants)") {
    // The search reuses one compute estimate across plans that differ only in rank order,
    // tp-overlap and the overlap flags; each plan predicted alone, without caches, must agree.
    const auto w = gpt_1_3b();
    const auto& topo = two_p4d_nodes();
    const auto result = planner::search(w, topo, space_16());
    REQUIRE(result.ranked.size() > 1000);
    graph::StepOptions alone;
    alone.explain = false;
    alone.memory.explain = false;
    for (const auto& r : result.ranked) {
      CHECK_MESSAGE(graph::predict_step(w, r.plan, topo, alone).step_time == r.metrics.step_time,
                    plan::to_string(r.plan));
    }
  }

  TEST_CASE("the result is the same for 1, 2 and 3 threads") {
    planner::SearchOptions one;
    one.threads = 1;
    const auto a = planner::search(gpt_1_3b(), two_p4d_nodes(), space_16(), one);
    for (const int threads : {2, 3}) {
      planner::SearchOptions many;
      many.threads = threads;
      const auto b = planner::search(gpt_1_3b(), two_p4d_nodes(), space_16(), many);
      REQUIRE(a.ranked.size() == b.ranked.size());
      for (std::size_t i = 0; i < a.ranked.size(); ++i) {
        CHECK(a.ranked[i].id == b.ranked[i].id);
        CHECK(a.ranked[i].metrics.step_time == b.ranked[i].metrics.step_time);
      }
      REQUIRE(a.rejections.size() == b.rejections.size());
      for (std::size_t i = 0; i < a.rejections.size(); ++i) {
        CHECK(a.rejections[i].rule == b.rejections[i].rule);
        CHECK(a.rejections[i].count == b.rejections[i].count);
        CHECK(plan::describe(a.rejections[i].example) == plan::describe(b.rejections[i].example));
      }
    }
  }

  TEST_CASE("a bare parameter count cannot be searched") {
    workload::Workload w;
    w.name = "seed-7b";
    w.parameters = 7e9;
    CHECK_THROWS_AS(planner::search(w, two_p4d_nodes(), space_16()), InputError);
  }
}

}  // namespace search_test
