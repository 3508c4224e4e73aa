// Reading and writing calibration files. Every value carries a "source"; unknown keys are
// errors; quantities are strings with units, written back in SI so a reload is exact.
#include "stepcast/cost/calibration.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::cost {
namespace {

using nlohmann::json;

CalibratedBandwidth read_bandwidth(const JsonReader& r) {
  r.check_keys({"value", "source"});
  return {r.at("value").positive_quantity<BytesPerSecond>(), r.at("source").string()};
}

CalibratedLatency read_latency(const JsonReader& r) {
  r.check_keys({"value", "source"});
  const Seconds alpha = r.at("value").quantity<Seconds>();
  if (alpha.value() < 0.0) r.at("value").fail("a latency cannot be negative");
  return {alpha, r.at("source").string()};
}

TierOverrides read_tiers(const JsonReader& r) {
  r.check_keys({"intra_bw", "intra_latency", "node_bw", "gpu_nic_bw", "inter_latency"});
  TierOverrides o;
  if (auto v = r.find("intra_bw")) o.intra_bw = read_bandwidth(*v);
  if (auto v = r.find("intra_latency")) o.intra_latency = read_latency(*v);
  if (auto v = r.find("node_bw")) o.node_bw = read_bandwidth(*v);
  if (auto v = r.find("gpu_nic_bw")) o.gpu_nic_bw = read_bandwidth(*v);
  if (auto v = r.find("inter_latency")) o.inter_latency = read_latency(*v);
  return o;
}

FitSummary read_fit(const JsonReader& r) {
  r.check_keys({"points", "median_abs_error_pct", "max_abs_error_pct"});
  FitSummary f;
  f.points = static_cast<int>(r.at("points").count());
  f.median_abs_error_pct = r.at("median_abs_error_pct").number();
  f.max_abs_error_pct = r.at("max_abs_error_pct").number();
  return f;
}

CollectiveCalibration read_collective(const JsonReader& r) {
  r.check_keys({"op", "min_size", "max_size", "tiers", "fit", "source"});
  CollectiveCalibration c;
  const JsonReader op = r.at("op");
  const auto parsed = parse_collective_op(op.string());
  if (!parsed) op.fail(fmt::format("unknown collective \"{}\"", op.string()));
  c.op = *parsed;
  c.min_size = r.has("min_size") ? r.at("min_size").quantity<Bytes>() : Bytes(0.0);
  if (auto v = r.find("max_size")) {
    c.max_size = v->quantity<Bytes>();
    if (*c.max_size < c.min_size) v->fail("max_size is below min_size");
  }
  c.tiers = read_tiers(r.at("tiers"));
  if (auto v = r.find("fit")) c.fit = read_fit(*v);
  c.source = r.at("source").string();
  return c;
}

double read_efficiency(const JsonReader& r) {
  const double f = r.positive_number();
  if (f > 1.0) r.fail(fmt::format("an efficiency is a fraction of the peak, at most 1, got {}", f));
  return f;
}

Seconds read_overhead(const JsonReader& r) {
  const Seconds t = r.quantity<Seconds>();
  if (t.value() < 0.0) r.fail(fmt::format("an overhead must not be negative, got \"{}\"", r.string()));
  return t;
}

ComputeCalibration read_compute(const JsonReader& r) {
  r.check_keys({"gemm_efficiency", "memory_efficiency", "attention_forward_efficiency", "attention_backward_efficiency",
                "kernel_overhead", "host_overhead", "source", "fitted_on"});
  ComputeCalibration c;
  if (auto v = r.find("gemm_efficiency")) {
    for (const auto& [name, value] : v->members()) {
      try {
        (void)plan::parse_precision(name, value.file());
      } catch (const InputError& e) {
        value.fail(e.message());
      }
      c.gemm_efficiency.emplace(name, read_efficiency(value));
    }
  }
  if (auto v = r.find("memory_efficiency")) c.memory_efficiency = read_efficiency(*v);
  if (auto v = r.find("attention_forward_efficiency")) c.attention_forward_efficiency = read_efficiency(*v);
  if (auto v = r.find("attention_backward_efficiency")) c.attention_backward_efficiency = read_efficiency(*v);
  if (auto v = r.find("kernel_overhead")) c.kernel_overhead = read_overhead(*v);
  if (auto v = r.find("host_overhead")) c.host_overhead = read_overhead(*v);
  c.source = r.at("source").string();
  if (auto v = r.find("fitted_on")) {
    for (const auto& [field, text] : v->members()) {
      const bool set = field.starts_with("gemm_efficiency.")      ? c.gemm_efficiency.contains(field.substr(16))
                       : field == "memory_efficiency"             ? c.memory_efficiency.has_value()
                       : field == "attention_forward_efficiency"  ? c.attention_forward_efficiency.has_value()
                       : field == "attention_backward_efficiency" ? c.attention_backward_efficiency.has_value()
                       : field == "kernel_overhead"               ? c.kernel_overhead.has_value()
                       : field == "host_overhead"                 ? c.host_overhead.has_value()
                                                                  : false;
      if (!set) text.fail(fmt::format("\"{}\" is not a field this compute section sets", field));
      c.fitted_on.emplace(field, text.string());
    }
  }
  return c;
}

CalibratedNcclProtocol read_nccl_protocol(const JsonReader& r) {
  r.check_keys({"latency_factor", "bandwidth_efficiency", "fit", "source"});
  CalibratedNcclProtocol p;
  p.tuning.latency_factor = r.at("latency_factor").positive_number();
  p.tuning.bandwidth_efficiency = r.at("bandwidth_efficiency").positive_number();
  if (auto v = r.find("fit")) p.fit = read_fit(*v);
  p.source = r.at("source").string();
  return p;
}

FittedRange read_range(const JsonReader& r) {
  r.check_keys({"min_size", "max_size", "min_ranks", "max_ranks", "min_nodes", "max_nodes"});
  FittedRange f;
  f.min_size = r.at("min_size").quantity<Bytes>();
  f.max_size = r.at("max_size").quantity<Bytes>();
  if (f.max_size < f.min_size) r.at("max_size").fail("max_size is below min_size");
  f.min_ranks = static_cast<int>(r.at("min_ranks").count());
  f.max_ranks = static_cast<int>(r.at("max_ranks").count());
  if (f.max_ranks < f.min_ranks) r.at("max_ranks").fail("max_ranks is below min_ranks");
  f.min_nodes = static_cast<int>(r.at("min_nodes").count());
  f.max_nodes = static_cast<int>(r.at("max_nodes").count());
  if (f.max_nodes < f.min_nodes) r.at("max_nodes").fail("max_nodes is below min_nodes");
  return f;
}

// {NAME: {"value": ..., "source": "...", "measured": true|false}}: each a free parameter of this
// build, within its bounds; "measured" (default false) marks a value measured rather than fitted.
CalibratedParameters read_parameters(const JsonReader& r) {
  CalibratedParameters out;
  for (const auto& [name, entry] : r.members()) {
    const topology::ParameterSpec* spec = topology::find_parameter(name);
    if (!spec) {
      entry.fail(fmt::format("\"{}\" is not a free parameter of this build ({})", name, topology::parameter_names()));
    }
    entry.check_keys({"value", "source", "measured"});
    const JsonReader v = entry.at("value");
    const double value = spec->unit == topology::ParameterUnit::kSeconds ? v.quantity<Seconds>().value() : v.number();
    if (!(value >= spec->lower && value <= spec->upper)) {
      v.fail(fmt::format("{} must lie in its bounds {} to {}, got {}", name,
                         topology::format_parameter(*spec, spec->lower), topology::format_parameter(*spec, spec->upper),
                         topology::format_parameter(*spec, value)));
    }
    out.values.emplace(name, value);
    out.sources.emplace(name, entry.at("source").string());
    if (const auto m = entry.find("measured"); m && m->boolean()) out.measured.insert(name);
  }
  return out;
}

Calibration read_calibration(const JsonReader& root) {
  // "fitted_on" lists the runs files of a defaults file (topologies/model-defaults.json's form).
  root.check_keys(
      {"source", "tiers", "collectives", "compute", "nccl_protocols", "fitted_range", "parameters", "fitted_on"});
  Calibration c;
  c.source = root.at("source").string();
  if (auto v = root.find("tiers")) c.tiers = read_tiers(*v);
  if (auto v = root.find("collectives")) {
    for (const JsonReader& e : v->elements()) c.collectives.push_back(read_collective(e));
  }
  if (auto v = root.find("compute")) c.compute = read_compute(*v);
  if (auto v = root.find("fitted_range")) c.range = read_range(*v);
  if (auto v = root.find("parameters")) c.parameters = read_parameters(*v);
  if (auto v = root.find("fitted_on")) {
    for (const JsonReader& e : v->elements()) (void)e.string();
  }
  if (auto v = root.find("nccl_protocols")) {
    for (const auto& [name, value] : v->members()) {
      const std::optional<NcclProtocol> protocol = parse_nccl_protocol(name);
      if (!protocol)
        value.fail(fmt::format("unknown NCCL protocol \"{}\"; accepted: {}", name, accepted_nccl_protocols()));
      c.nccl_protocols.emplace(*protocol, read_nccl_protocol(value));
    }
  }
  return c;
}

// SI with "%.9g" (STYLE.md B6): exact enough to reload, identical for identical inputs.
json write_bandwidth(const CalibratedBandwidth& b) {
  return json{{"value", fmt::format("{:.9g} B/s", b.value.value())}, {"source", b.source}};
}

json write_latency(const CalibratedLatency& l) {
  return json{{"value", fmt::format("{:.9g} s", l.value.value())}, {"source", l.source}};
}

json write_tiers(const TierOverrides& o) {
  json j = json::object();
  if (o.intra_bw) j["intra_bw"] = write_bandwidth(*o.intra_bw);
  if (o.intra_latency) j["intra_latency"] = write_latency(*o.intra_latency);
  if (o.node_bw) j["node_bw"] = write_bandwidth(*o.node_bw);
  if (o.gpu_nic_bw) j["gpu_nic_bw"] = write_bandwidth(*o.gpu_nic_bw);
  if (o.inter_latency) j["inter_latency"] = write_latency(*o.inter_latency);
  return j;
}

json write_number(double v) { return json::parse(fmt::format("{:.9g}", v)); }

json write_fit(const FitSummary& f) {
  return json{{"points", f.points},
              {"median_abs_error_pct", write_number(f.median_abs_error_pct)},
              {"max_abs_error_pct", write_number(f.max_abs_error_pct)}};
}

}  // namespace

Calibration parse_calibration(const std::string& text, const std::string& origin) {
  const json j = parse_json_text(text, origin);
  return read_calibration(JsonReader(j, origin));
}

Calibration load_calibration(const std::filesystem::path& file) {
  const json j = read_json_file(file);
  return read_calibration(JsonReader(j, file.string()));
}

std::string to_json_text(const Calibration& calibration) {
  json j = json::object();
  j["source"] = calibration.source;
  if (!calibration.tiers.empty()) j["tiers"] = write_tiers(calibration.tiers);
  if (!calibration.collectives.empty()) {
    json list = json::array();
    for (const CollectiveCalibration& c : calibration.collectives) {
      json e{{"op", std::string(to_string(c.op))},
             {"min_size", fmt::format("{:.9g} B", c.min_size.value())},
             {"tiers", write_tiers(c.tiers)},
             {"source", c.source}};
      if (c.max_size) e["max_size"] = fmt::format("{:.9g} B", c.max_size->value());
      if (c.fit) e["fit"] = write_fit(*c.fit);
      list.push_back(std::move(e));
    }
    j["collectives"] = std::move(list);
  }
  if (const auto& c = calibration.compute) {
    json e{{"source", c->source}};
    if (!c->gemm_efficiency.empty()) {
      json g = json::object();
      for (const auto& [name, v] : c->gemm_efficiency) g[name] = write_number(v);
      e["gemm_efficiency"] = std::move(g);
    }
    if (c->memory_efficiency) e["memory_efficiency"] = write_number(*c->memory_efficiency);
    if (c->attention_forward_efficiency)
      e["attention_forward_efficiency"] = write_number(*c->attention_forward_efficiency);
    if (c->attention_backward_efficiency)
      e["attention_backward_efficiency"] = write_number(*c->attention_backward_efficiency);
    if (c->kernel_overhead) e["kernel_overhead"] = fmt::format("{:.9g} s", c->kernel_overhead->value());
    if (c->host_overhead) e["host_overhead"] = fmt::format("{:.9g} s", c->host_overhead->value());
    if (!c->fitted_on.empty()) e["fitted_on"] = c->fitted_on;
    j["compute"] = std::move(e);
  }
  if (!calibration.nccl_protocols.empty()) {
    json protocols = json::object();
    for (const auto& [protocol, p] : calibration.nccl_protocols) {
      json e{{"latency_factor", write_number(p.tuning.latency_factor)},
             {"bandwidth_efficiency", write_number(p.tuning.bandwidth_efficiency)},
             {"source", p.source}};
      if (p.fit) e["fit"] = write_fit(*p.fit);
      protocols[std::string(to_string(protocol))] = std::move(e);
    }
    j["nccl_protocols"] = std::move(protocols);
  }
  if (!calibration.parameters.values.empty()) {
    json params = json::object();
    for (const auto& [name, value] : calibration.parameters.values) {
      const topology::ParameterSpec* spec = topology::find_parameter(name);
      STEPCAST_ASSERT(spec != nullptr, "a calibration holds only parameters of this build");
      params[name] =
          json{{"value", spec->unit == topology::ParameterUnit::kSeconds ? json(fmt::format("{:.9g} s", value))
                                                                         : json(write_number(value))},
               {"source", calibration.parameters.sources.at(name)}};
    }
    j["parameters"] = std::move(params);
  }
  if (calibration.range) {
    const FittedRange& r = *calibration.range;
    j["fitted_range"] = json{{"min_size", fmt::format("{:.9g} B", r.min_size.value())},
                             {"max_size", fmt::format("{:.9g} B", r.max_size.value())},
                             {"min_ranks", r.min_ranks},
                             {"max_ranks", r.max_ranks},
                             {"min_nodes", r.min_nodes},
                             {"max_nodes", r.max_nodes}};
  }
  return j.dump(2) + "\n";
}

}  // namespace stepcast::cost
