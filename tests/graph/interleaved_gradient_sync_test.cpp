// The data-parallel gradient reduce-scatters of an interleaved pipeline (zero=1, overlap on):
// Megatron-Core's interleaved schedule (pipeline_parallel/schedules.py) starts a model chunk's
// gradient sync on that chunk's last backward, so the chunks' reduce-scatters start through the
// pipeline's cooldown, not all after the stage's last backward.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/predict_plan.hpp"

namespace interleaved_gradient_sync_test {

using namespace stepcast;

TEST_SUITE("graph.interleaved_gradient_sync") {
  // Llama 2 70B on 64 p4d nodes, p = 8 stages of v = 10 chunks. Let t be the stage's gradient
  // reduce-scatters in all and b one micro-batch's backward of a stage (the shortest stage's, as
  // every window of the step). In the cooldown the first stage runs backwards only, one chunk's at
  // a time, b / v each; chunk k from the end runs its last one k x p chunk-backwards before the
  // stage's last ends. Its t / v of reduce-scatters start with that backward and queue behind the
  // chunks ready before it on the one stream, so what is left when the backward ends is
  //   max over k = 0 .. v-1 of (k + 1) t / v - (k p + 1) b / v
  // (k = 0: the last chunk's own share less its own backward), where the rule for a chunk alone
  // (v = 1) leaves t - b.
  TEST_CASE("an interleaved stage's chunks start their reduce-scatters through the cooldown") {
    const auto topo =
        topology::load_topology(std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies/p4d-24xlarge.json", 64);
    const auto w = workload::load_workload(std::filesystem::path(STEPCAST_SOURCE_DIR) / "workloads/llama2-70b.json");
    plan::Plan p;
    const auto pred = test::predict_plan(
        w,
        "dp=16,tp=4,pp=8,vp=10,zero=1,mbs=1,gbs=1024,seq=4096,recompute=none,schedule=interleaved,sp=on,flash=on,"
        "tp-overlap=on,overlap-param-gather=on",
        topo, p);
    const graph::StepGraph graph = test::plan_graph(w, p, topo);
    Seconds b = graph.stages.front().backward;
    for (const graph::StageWork& st : graph.stages) b = std::min(b, st.backward);
    const graph::CommTerm& rs = test::comm_term(pred, "ZeRO gradient reduce-scatter");
    const double t = rs.time.value();
    double expected = 0.0;
    for (int k = 0; k < 10; ++k) expected = std::max(expected, (k + 1) * t / 10.0 - (k * 8 + 1) * b.value() / 10.0);
    CHECK(rs.exposed.value() == doctest::Approx(expected));
    // Here the last chunk's tenth outlasts its own backward (t / 10 > b / 10) and the others
    // hide: far less than t - b, what waiting for the stage's last backward would leave.
    CHECK(expected == doctest::Approx((t - b.value()) / 10.0));
    CHECK(rs.exposed.value() < 0.2 * (t - b.value()));
  }
}

}  // namespace interleaved_gradient_sync_test
