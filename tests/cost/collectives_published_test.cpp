// The collective model against published figures: every tests/published/ file on collectives
// names its source and tolerance, and each case was evaluated by hand from the cited formula.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

namespace collectives_published_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

const std::string kPublished = STEPCAST_SOURCE_DIR "/tests/published/";

CollectiveOp op_of(const JsonReader& r) {
  const std::optional<CollectiveOp> op = parse_collective_op(r.string());
  if (!op) r.fail("unknown collective");
  return *op;
}

// Checks one file of alpha-beta ring costs: p ranks on one switch-like tier with the case's alpha
// and bandwidth (beta = 1/bandwidth), as the papers' model assumes.
void check_ring_costs(const std::string& name) {
  const nlohmann::json doc = read_json_file(kPublished + name);
  const JsonReader file(doc, name);
  file.check_keys({"source", "rel_tol", "cases"});
  CHECK_FALSE(file.at("source").string().empty());
  const double rel_tol = file.at("rel_tol").positive_number();
  for (const JsonReader& c : file.at("cases").elements()) {
    c.check_keys({"op", "ranks", "size", "alpha", "bandwidth", "time_s", "derivation"});
    topology::CommTiers t;
    t.ranks = static_cast<int>(c.at("ranks").count());
    t.nodes = 1;
    t.ranks_per_node = t.ranks;
    t.intra_bw = c.at("bandwidth").positive_quantity<BytesPerSecond>();
    t.intra_latency = c.at("alpha").quantity<Seconds>();
    const CollectiveCost cost =
        estimate_collective(op_of(c.at("op")), Algorithm::kRing, c.at("size").quantity<Bytes>(), t);
    CAPTURE(c.pointer());
    CHECK(cost.time.value() == doctest::Approx(c.at("time_s").positive_number()).epsilon(rel_tol));
  }
}

}  // namespace

TEST_SUITE("cost.collectives") {
  TEST_CASE("published: nccl-tests' busbw factors (doc/PERFORMANCE.md)") {
    const std::string name = "nccl_tests_busbw_factors.json";
    const nlohmann::json doc = read_json_file(kPublished + name);
    const JsonReader file(doc, name);
    file.check_keys({"source", "rel_tol", "cases"});
    const double rel_tol = file.at("rel_tol").positive_number();
    for (const JsonReader& c : file.at("cases").elements()) {
      c.check_keys({"op", "ranks", "factor"});
      CAPTURE(c.pointer());
      const CollectiveOp op = op_of(c.at("op"));
      const int ranks = static_cast<int>(c.at("ranks").count());
      const double factor = c.at("factor").positive_number();
      CHECK(busbw_factor(op, ranks) == doctest::Approx(factor).epsilon(rel_tol));
      // The estimate applies the same factor: busbw / algbw.
      topology::CommTiers t;
      t.ranks = ranks;
      t.nodes = 1;
      t.ranks_per_node = ranks;
      t.intra_bw = gbyte_per_s(100);
      const CollectiveCost cost = estimate_collective(op, algorithms_for(op).front(), gib(1), t);
      CHECK(cost.busbw.value() / cost.algbw.value() == doctest::Approx(factor).epsilon(rel_tol));
    }
  }

  TEST_CASE("published: ring all-gather and reduce-scatter costs of Thakur, Rabenseifner and Gropp 2005") {
    check_ring_costs("thakur2005_ring_costs.json");
  }

  TEST_CASE("published: ring all-reduce cost of Patarasuk and Yuan 2009") {
    check_ring_costs("patarasuk_yuan2009_ring_allreduce.json");
  }
}

}  // namespace collectives_published_test
