// Reading a network's terms (network_json.hpp).
#include "network_json.hpp"

#include <fmt/format.h>

#include <string>

#include "catalogue.hpp"
#include "stepcast/core/problems.hpp"

namespace stepcast::topology {
namespace {

double efficiency_of(const JsonReader& r) {
  const double e = r.number();
  if (!(e >= kLeastNetworkEfficiency && e <= 1.0)) {
    r.fail(fmt::format(
        "an efficiency is the share of NCCL's modelled bandwidth the network achieves, between {} and 1, got {}",
        kLeastNetworkEfficiency, e));
  }
  return e;
}

NetworkTerms read_block(const JsonReader& r) {
  r.check_keys({"name", "bandwidth_efficiency", "p2p_bandwidth_efficiency", "latency_factor", "source", "fitted_on"});
  NetworkTerms n;
  ProblemList problems;
  problems.check([&] { n.name = r.at("name").string(); });
  NetworkFactors& f = n.factors;
  problems.check([&] { f.bandwidth_efficiency = efficiency_of(r.at("bandwidth_efficiency")); });
  problems.check([&] { f.p2p_bandwidth_efficiency = efficiency_of(r.at("p2p_bandwidth_efficiency")); });
  problems.check([&] {
    const JsonReader factor = r.at("latency_factor");
    f.latency_factor = factor.number();
    if (!(f.latency_factor >= kLeastLatencyFactor && f.latency_factor <= kMostLatencyFactor)) {
      factor.fail(fmt::format("a factor on NCCL's latency between {} and {}, got {}", kLeastLatencyFactor,
                              kMostLatencyFactor, f.latency_factor));
    }
  });
  problems.check([&] {
    n.source = r.at("source").string();
    if (n.source.empty()) r.at("source").fail("must say where the terms come from, got an empty string");
  });
  problems.throw_if_any();
  n.file = r.file();
  return n;
}

}  // namespace

NetworkTerms read_network(const JsonReader& r) {
  if (!r.json().is_string()) return read_block(r);
  const std::filesystem::path file = catalogue_file(r, "networks", "network");
  const nlohmann::json doc = read_json_file(file);
  return read_block(JsonReader(doc, file.string()));
}

void expand_named_network(nlohmann::json& doc, const std::filesystem::path& topology_file) {
  if (!doc.is_object() || !doc.contains("node") || !doc["node"].is_object()) return;
  nlohmann::json& node = doc["node"];
  if (!node.contains("nics") || !node["nics"].is_object() || !node["nics"].contains("network")) return;
  if (!node["nics"]["network"].is_string()) return;
  const JsonReader root(doc, topology_file.string());
  node["nics"]["network"] =
      read_json_file(catalogue_file(root.at("node").at("nics").at("network"), "networks", "network"));
}

}  // namespace stepcast::topology
