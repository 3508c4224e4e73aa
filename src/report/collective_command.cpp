// `stepcast collective`: the predicted cost of one collective, or of a sweep of sizes, on a
// topology, reported in nccl-tests' terms (time, algbw, busbw) with the formula terms on request.
#include "stepcast/report/collective_command.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/report/calibration_warning.hpp"
#include "stepcast/report/collective_format.hpp"
#include "stepcast/report/collective_nccl.hpp"
#include "stepcast/report/data_path.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/set_echo.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

namespace {

using cost::Algorithm;
using cost::CollectiveCost;
using cost::CollectiveOp;

// The engines that can price a collective; each is one branch of price() below.
enum class Engine { kAnalytical, kDes };
constexpr std::string_view kAcceptedEngines = "analytical, des";

std::string_view to_string(Engine e) { return e == Engine::kDes ? "des" : "analytical"; }

// A sweep longer than this is almost surely a typo in --sizes (1 B to 1 PiB by 2 is 51 rows).
constexpr int kMaxSweepRows = 128;

// Sizes above this are a typo or a unit slip (1e30 B): no cluster holds a petabyte message.
const Bytes kLargestSize = Bytes(1125899906842624.0);  // 1 PiB

struct Request {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  Engine engine = Engine::kAnalytical;
  std::vector<Bytes> sizes;
  bool sweep = false;
  /// Set when NCCL's tuning model prices the collective (--algorithm auto or nvls, or --protocol).
  std::optional<cost::NcclFilter> nccl;
  /// All-to-all and send/recv without --algorithm: NCCL's point-to-point channels (the collective model).
  bool p2p = false;
};

// What priced the collective, for the output.
std::string algorithm_label(const Request& r) {
  return r.p2p ? "p2p (NCCL's point-to-point channels)" : std::string(cost::to_string(r.algorithm));
}

CollectiveOp parse_op(const std::string& text) {
  const std::optional<CollectiveOp> op = cost::parse_collective_op(text);
  if (!op)
    throw InputError(
        fmt::format("--op: unknown collective \"{}\"; accepted: {}", text, cost::accepted_collective_ops()));
  return *op;
}

Algorithm parse_algorithm_for(CollectiveOp op, const std::string& text) {
  if (text.empty()) return cost::algorithms_for(op).front();
  const std::optional<Algorithm> algorithm = cost::parse_algorithm(text);
  if (!algorithm) {
    throw InputError(
        fmt::format("--algorithm: unknown algorithm \"{}\"; accepted: {}", text, cost::accepted_algorithms()));
  }
  if (!cost::is_supported(op, *algorithm)) {
    throw InputError(fmt::format("--algorithm: \"{}\" is not modelled for {}; {} accepts: {}", text,
                                 cost::to_string(op), cost::to_string(op), cost::accepted_algorithms(op)));
  }
  return *algorithm;
}

constexpr std::string_view kAuto = "auto";

// NCCL's tuning model prices every collective it tunes unless --algorithm names one of stepcast's
// closed forms (ring, tree, hierarchical) without a --protocol; "auto" (the default) leaves the
// choice to the model, as NCCL's tuner does.
std::optional<cost::NcclFilter> parse_nccl_request(CollectiveOp op, const std::string& algorithm,
                                                   const std::string& protocol) {
  const std::optional<cost::NcclAlgorithm> nccl_algorithm = cost::parse_nccl_algorithm(algorithm);
  const bool by_default = algorithm.empty() && protocol.empty() && cost::has_nccl_tuning(op);
  // ring and tree are also stepcast's closed forms; NCCL's other algorithms exist only in its model.
  const bool nccl_only =
      nccl_algorithm && *nccl_algorithm != cost::NcclAlgorithm::kRing && *nccl_algorithm != cost::NcclAlgorithm::kTree;
  const bool wanted = by_default || algorithm == kAuto || nccl_only || !protocol.empty();
  if (!wanted) return std::nullopt;
  if (!cost::has_nccl_tuning(op)) {
    throw InputError(
        fmt::format("--algorithm auto and --protocol price NCCL's collective algorithms, and NCCL runs {} as "
                    "point-to-point transfers with no such choice; {} accepts: {}",
                    cost::to_string(op), cost::to_string(op), cost::accepted_algorithms(op)));
  }
  cost::NcclFilter f;
  // A protocol alone leaves the algorithm to the model, as NCCL_PROTO without NCCL_ALGO does.
  if (!algorithm.empty() && algorithm != kAuto) {
    if (!nccl_algorithm) {
      throw InputError(
          fmt::format("--protocol applies to NCCL's algorithms and auto; \"{}\" has no protocol; with "
                      "--protocol, {} accepts: {}, auto",
                      algorithm, cost::to_string(op), cost::accepted_nccl_algorithms(op)));
    }
    if (!cost::nccl_runs(op, *nccl_algorithm)) {
      throw InputError(fmt::format("--algorithm: NCCL has no {} {}; with NCCL's model, {} accepts: {}, auto", algorithm,
                                   cost::to_string(op), cost::to_string(op), cost::accepted_nccl_algorithms(op)));
    }
    f.algorithm = nccl_algorithm;
  }
  if (!protocol.empty() && protocol != kAuto) {
    f.protocol = cost::parse_nccl_protocol(protocol);
    if (!f.protocol) {
      throw InputError(fmt::format("--protocol: unknown protocol \"{}\"; accepted: {}, auto", protocol,
                                   cost::accepted_nccl_protocols()));
    }
    if (f.algorithm && *f.algorithm != cost::NcclAlgorithm::kRing && *f.algorithm != cost::NcclAlgorithm::kTree &&
        f.protocol != cost::NcclProtocol::kSimple) {
      const std::string_view name = cost::to_string(*f.algorithm);
      throw InputError(
          fmt::format("--protocol: NCCL runs {} in Simple only, not {}; with {}, --protocol accepts: "
                      "Simple, auto",
                      name, cost::to_string(*f.protocol), name));
    }
  }
  return f;
}

Engine parse_engine(const std::string& text) {
  if (text == "analytical") return Engine::kAnalytical;
  if (text == "des") return Engine::kDes;
  throw InputError(fmt::format("--engine: unknown engine \"{}\"; accepted: {}", text, kAcceptedEngines));
}

Bytes parse_size(const std::string& option, std::string_view text) {
  Bytes size;
  try {
    size = parse_bytes(text);
  } catch (const UnitError& e) {
    throw InputError(fmt::format("{}: {}", option, e.what()));
  }
  if (!(size.value() >= 0.0) || size > kLargestSize) {
    throw InputError(fmt::format(
        "{}: the size must be between 0 B and 1 PiB (more than the memory of the largest GPU clusters), got \"{}\"",
        option, text));
  }
  // nccl-tests' S counts whole bytes: "0.5 B" or "1.3 KB" names no buffer a collective can move.
  if (size.value() != std::floor(size.value())) {
    throw InputError(
        fmt::format("{}: a size is a whole number of bytes, got \"{}\" = {} B", option, text, size.value()));
  }
  return size;
}

// "MIN:MAX" or "MIN:MAX:FACTOR": MIN, MIN x FACTOR, ... as nccl-tests' -b -e -f, and MAX itself
// last when the factor steps over it (8B:1GiB:4 ends 512 MiB, 1 GiB), so the sweep is inclusive.
std::vector<Bytes> parse_sweep(const std::string& text) {
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (std::size_t colon = rest.find(':'); colon != std::string_view::npos; colon = rest.find(':')) {
    parts.push_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  parts.push_back(rest);
  if (parts.size() != 2 && parts.size() != 3) {
    throw InputError(fmt::format("--sizes: expected MIN:MAX or MIN:MAX:FACTOR like \"1MiB:16GiB\", got \"{}\"", text));
  }
  const Bytes min = parse_size("--sizes", parts[0]);
  const Bytes max = parse_size("--sizes", parts[1]);
  double factor = 2.0;
  if (parts.size() == 3) {
    const std::string factor_text(parts[2]);
    char* end = nullptr;
    factor = std::strtod(factor_text.c_str(), &end);
    if (factor_text.empty() || *end != '\0' || !(factor > 1.0) || !std::isfinite(factor)) {
      throw InputError(fmt::format("--sizes: the factor must be a number > 1, got \"{}\"", factor_text));
    }
  }
  if (!(min.value() > 0.0))
    throw InputError(fmt::format("--sizes: the smallest size must be > 0 B, got \"{}\"", parts[0]));
  if (max < min)
    throw InputError(fmt::format("--sizes: the largest size {} is below the smallest {}", parts[1], parts[0]));
  std::vector<Bytes> sizes;
  // Compare with a relative margin so that 1MiB:16GiB ends exactly on 16 GiB despite rounding.
  for (Bytes s = min; s.value() <= max.value() * (1.0 + 1e-12); s *= factor) {
    if (static_cast<int>(sizes.size()) == kMaxSweepRows) {
      throw InputError(fmt::format("--sizes: \"{}\" gives more than {} sizes; raise the factor or narrow the range",
                                   text, kMaxSweepRows));
    }
    sizes.push_back(s);
  }
  if (sizes.back().value() < max.value() * (1.0 - 1e-12)) sizes.push_back(max);
  return sizes;
}

Request parse_request(const CollectiveRequest& o) {
  Request r;
  r.op = parse_op(o.op);
  r.nccl = parse_nccl_request(r.op, o.algorithm, o.protocol);
  if (!r.nccl) r.algorithm = parse_algorithm_for(r.op, o.algorithm);
  r.p2p = !r.nccl && o.algorithm.empty() && !cost::has_nccl_tuning(r.op);
  r.engine = parse_engine(o.engine);
  if (o.size.empty() == o.sizes.empty()) {
    throw InputError(
        "give exactly one of --size (one size, like \"14e9 B\") or --sizes (a sweep, like \"1MiB:16GiB\")");
  }
  if (!o.size.empty()) {
    r.sizes.push_back(parse_size("--size", o.size));
  } else {
    r.sizes = parse_sweep(o.sizes);
    r.sweep = true;
  }
  return r;
}

std::vector<int> first_ranks(int n) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  return ranks;
}

int resolve_ranks(const topology::Topology& topo, std::optional<int> ranks) {
  if (!ranks) return topo.gpu_count();
  if (*ranks < 1) throw InputError(fmt::format("--ranks must be at least 1, got {}", *ranks));
  if (*ranks > topo.gpu_count()) {
    throw InputError(
        fmt::format("--ranks {} exceeds the {} GPUs of {} ({} nodes x {} GPUs per node); pass --nodes to add nodes",
                    *ranks, topo.gpu_count(), topo.name(), topo.node_count(), topo.gpus_per_node()));
  }
  return *ranks;
}

// The discrete-event engine runs the collective as the model priced it (calibration applied) as
// flows on the topology's links; bytes and steps stay the model's, time comes from the
// simulation, algbw and busbw follow from it.
CollectiveCost simulate(const Request& r, Bytes size, const topology::Topology& topo, const topology::CommTiers& tiers,
                        const cost::Calibration* calibration, bool explain) {
  const topology::CommTiers priced = calibration ? cost::apply(*calibration, tiers, r.op, size) : tiers;
  CollectiveCost c = explain ? cost::explain_collective(r.op, r.algorithm, size, priced)
                             : cost::estimate_collective(r.op, r.algorithm, size, priced);
  cost::CollectiveModel model;
  model.closed_form = r.algorithm;
  model.calibration = calibration;
  const cost::CollectivePrice price = cost::price_collective(cost::collective_group(topo, tiers), r.op, size, model);
  const Seconds analytical = c.time;
  c.time = sim::simulate_collective(topo, r.op, size, price, first_ranks(tiers.ranks));
  c.algbw = c.time.value() > 0.0 ? size / c.time : BytesPerSecond(0.0);
  c.busbw = c.algbw * cost::busbw_factor(r.op, tiers.ranks);
  if (explain) {
    c.explanation.push_back({"discrete-event time", "flows on every link of the route, max-min shared",
                             fmt::format("{} (analytical {})", format_seconds(c.time), format_seconds(analytical))});
  }
  return c;
}

// Send/recv and all-to-all on NCCL's point-to-point channels, in the closed forms' terms.
CollectiveCost point_to_point(const Request& r, Bytes size, const topology::Topology& topo,
                              const topology::CommTiers& tiers, const cost::Calibration* calibration, bool explain) {
  cost::CollectiveModel model;
  model.calibration = calibration;
  const cost::CollectivePrice p = cost::price_collective(cost::collective_group(topo, tiers), r.op, size, model);
  CollectiveCost c;
  c.size = size;
  c.ranks = tiers.ranks;
  c.nodes = tiers.nodes;
  c.bytes_sent_per_rank = p.flows.bytes_per_rank;
  c.steps = 1;
  c.latency_time = p.latency;
  c.bandwidth_time = p.bandwidth_time;
  c.time = p.time;
  c.bottleneck = p.bottleneck;
  if (r.engine == Engine::kDes) c.time = sim::simulate_collective(topo, r.op, size, p, first_ranks(tiers.ranks));
  if (c.time.value() > 0.0) {
    c.algbw = size / c.time;
    c.busbw = c.algbw * cost::busbw_factor(r.op, tiers.ranks);
  }
  if (explain && p.p2p) {
    c.explanation.push_back(
        {"channels per peer", "NCCL's p2p channels (src/graph/paths.cc)", fmt::format("{}", p.p2p->channels_per_peer)});
    c.explanation.push_back({"latency", p.p2p->latency_formula, format_seconds(p.latency)});
    c.explanation.push_back({"bandwidth part", p.p2p->bandwidth_formula, format_seconds(p.bandwidth_time)});
    if (r.engine == Engine::kDes) {
      c.explanation.push_back({"discrete-event time",
                               "the same transfers as flows on every link of the route, max-min shared",
                               fmt::format("{} (analytical {})", format_seconds(c.time), format_seconds(p.time))});
    }
  }
  return c;
}

CollectiveCost price(const Request& r, Bytes size, const topology::Topology& topo, const topology::CommTiers& tiers,
                     const cost::Calibration* calibration, bool explain) {
  if (r.p2p && tiers.ranks > 1 && cost::nccl_compute_capability(topo.gpu())) {
    return point_to_point(r, size, topo, tiers, calibration, explain);
  }
  switch (r.engine) {
    case Engine::kAnalytical: {
      // A calibration replaces the tier figures per collective and size regime (stepcast calibrate).
      const topology::CommTiers priced = calibration ? cost::apply(*calibration, tiers, r.op, size) : tiers;
      return explain ? cost::explain_collective(r.op, r.algorithm, size, priced)
                     : cost::estimate_collective(r.op, r.algorithm, size, priced);
    }
    case Engine::kDes:
      return simulate(r, size, topo, tiers, calibration, explain);
  }
  STEPCAST_UNREACHABLE("every engine is listed above");
}

nlohmann::json result_json(const CollectiveCost& c, bool explain) {
  nlohmann::json j = {
      {"size_bytes", bytes_json(c.size)},
      {"bytes_sent_per_rank", bytes_json(c.bytes_sent_per_rank)},
      {"steps", c.steps},
      {"latency_time_s", sig9(c.latency_time.value())},
      {"bandwidth_time_s", sig9(c.bandwidth_time.value())},
      {"time_s", sig9(c.time.value())},
      {"algbw_GBps", gbps(c.algbw)},
      {"busbw_GBps", gbps(c.busbw)},
      {"bottleneck", std::string(cost::to_string(c.bottleneck))},
  };
  if (explain) j["explanation"] = explanation_json(c.explanation);
  return j;
}

struct Context {
  const Request& request;
  const topology::Topology& topo;
  const topology::CommTiers& tiers;
  const std::string& topology_path;
};

nlohmann::json header_json(const Context& x) {
  return {
      {"op", std::string(cost::to_string(x.request.op))},
      {"algorithm", algorithm_label(x.request)},
      {"engine", std::string(to_string(x.request.engine))},
      {"topology", x.topo.name()},
      {"ranks", x.tiers.ranks},
      {"nodes", x.tiers.nodes},
      {"ranks_per_node", x.tiers.ranks_per_node},
  };
}

std::string single_text(const Context& x, const CollectiveCost& c, bool explain) {
  std::string out;
  out += fmt::format("collective   {}, {} ({} engine)\n", cost::to_string(x.request.op), algorithm_label(x.request),
                     to_string(x.request.engine));
  out += fmt::format("topology     {} ({})\n", x.topo.name(), x.topology_path);
  out += fmt::format("ranks        {}\n", placement_text(x.tiers));
  out += fmt::format("size         {}\n", bytes_text(c.size));
  out += fmt::format("sent/rank    {}\n", bytes_text(c.bytes_sent_per_rank));
  out += fmt::format("steps        {}\n", c.steps);
  if (x.request.engine == Engine::kDes) {
    out += fmt::format("time         {} (simulated; the analytical model's latency {} + bandwidth {})\n",
                       format_seconds(c.time), format_seconds(c.latency_time), format_seconds(c.bandwidth_time));
  } else {
    out += fmt::format("time         {} (latency {} + bandwidth {})\n", format_seconds(c.time),
                       format_seconds(c.latency_time), format_seconds(c.bandwidth_time));
  }
  out += fmt::format("algbw        {}\n", format_bandwidth(c.algbw));
  out += fmt::format("busbw        {}\n", format_bandwidth(c.busbw));
  out += fmt::format("bottleneck   {}\n", cost::to_string(c.bottleneck));
  if (explain) out += "\nhow:\n" + render_explanation(c.explanation);
  return out;
}

// The table nccl-tests users read: size, time in us, algbw and busbw in GB/s.
std::string sweep_text(const Context& x, const std::vector<CollectiveCost>& rows, bool explain) {
  std::string out = fmt::format("# {}, {} on {}: {}\n", cost::to_string(x.request.op), algorithm_label(x.request),
                                x.topo.name(), placement_text(x.tiers));
  out += fmt::format("# {:>15}  {:>10}  {:>14}  {:>12}  {:>12}  {}\n", "size (B)", "size", "time (us)", "algbw (GB/s)",
                     "busbw (GB/s)", "bottleneck");
  for (const CollectiveCost& c : rows) {
    out += fmt::format("  {:>15}  {:>10}  {:>14.2f}  {:>12.2f}  {:>12.2f}  {}\n", bytes_json(c.size).dump(),
                       format_bytes(c.size), c.time.value() * unit::kMega, c.algbw.value() / unit::kGiga,
                       c.busbw.value() / unit::kGiga, cost::to_string(c.bottleneck));
  }
  if (explain) {
    for (const CollectiveCost& c : rows)
      out += fmt::format("\nhow, at {}:\n{}", format_bytes(c.size), render_explanation(c.explanation));
  }
  return out;
}

// The sizes a calibration is applied to beyond what it was fitted on.
void warn_sizes_outside(const cost::Calibration& calibration, const std::string& file, const Request& request,
                        const topology::CommTiers& tiers) {
  std::vector<std::string> outside;
  for (const Bytes size : request.sizes) {
    if (!cost::within_fitted_range(calibration, size, tiers.ranks, tiers.nodes)) {
      outside.push_back(fmt::format("{} {} over {} ranks on {} node(s)", format_bytes(size),
                                    cost::to_string(request.op), tiers.ranks, tiers.nodes));
    }
  }
  warn_outside_calibration(&calibration, file, outside);
}

// NCCL's tuning model at every size: the machine as NCCL sees it, then each size's choice.
std::string run_nccl(const CollectiveRequest& o, const Request& request, const topology::Topology& topo,
                     const topology::CommTiers& tiers) {
  if (tiers.ranks < 2) {
    throw InputError(
        fmt::format("NCCL's tuning model needs at least 2 ranks (NCCL tunes nothing for one), got {}", tiers.ranks));
  }
  NcclRun run;
  run.op = request.op;
  run.topo = &topo;
  run.tiers = tiers;
  run.topology_path = o.topology;
  run.system = cost::nccl_system(topo, tiers);
  run.filter = *request.nccl;
  run.sweep = request.sweep;
  run.sizes = request.sizes;
  // A calibration corrects NCCL's model per protocol (its alpha-beta tiers do not apply here).
  cost::NcclTuning tuning;
  std::optional<cost::Calibration> calibration;
  if (!o.calibration.empty()) {
    calibration = cost::load_calibration(o.calibration);
    tuning = cost::nccl_tuning(*calibration);
    run.calibrated = !calibration->nccl_protocols.empty();
  }
  for (Bytes size : request.sizes)
    run.choices.push_back(cost::nccl_choose(request.op, size, run.system, run.filter, tuning));
  if (run.calibrated) warn_sizes_outside(*calibration, o.calibration, request, tiers);
  cost::CollectiveModel model;
  model.nccl = run.filter;
  model.calibration = run.calibrated ? &*calibration : nullptr;
  const cost::CollectiveGroup group = cost::collective_group(topo, tiers);
  std::vector<cost::CollectivePrice> prices;
  for (Bytes size : request.sizes) prices.push_back(cost::price_collective(group, request.op, size, model));
  if (prices.front().network) run.network = topo.network();
  if (request.engine == Engine::kDes) {
    // NCCL's pick as flows on the topology's links: the same model, contention from the links.
    for (std::size_t i = 0; i < request.sizes.size(); ++i) {
      run.simulated.push_back(
          sim::simulate_collective(topo, request.op, request.sizes[i], prices[i], first_ranks(tiers.ranks)));
    }
  }
  run.achieved = std::move(prices);
  return o.json ? nccl_json(run, o.explain).dump(2) + "\n" : nccl_text(run, o.explain);
}

}  // namespace

std::string collective_command(const CollectiveRequest& o) {
  const Request request = parse_request(o);
  const std::optional<int> ranks = o.ranks_given ? std::optional<int>(o.ranks) : std::nullopt;
  const std::optional<int> nodes = o.nodes_given ? std::optional<int>(o.nodes) : std::nullopt;
  if (nodes && *nodes < 1) throw InputError(fmt::format("--nodes must be at least 1, got {}", *nodes));
  const topology::SelectedTopology selected = topology::load_selected_topology(
      topology_path(o.topology), topology_request(nodes.value_or(0), o.gpus, o.sets, o.gpus_per_domain));
  const topology::Topology& topo = selected.topology;
  const std::string echo = o.json ? std::string() : set_echo_text(topology_path(o.topology), o.sets);
  // Without --ranks, the GPUs --gpus chose (every GPU without it).
  const topology::CommTiers tiers = topo.tiers(ranks ? resolve_ranks(topo, ranks) : selected.gpus);
  if (request.engine == Engine::kDes && o.approve_work) {
    o.approve_work(planner::collective_simulation_work(tiers.ranks, request.sizes.size()));
  }
  // One rank moves nothing: NCCL's model has nothing to tune, unless asked for by name.
  const bool nccl_by_default = o.algorithm.empty() && o.protocol.empty();
  if (request.nccl && !(tiers.ranks < 2 && nccl_by_default)) return echo + run_nccl(o, request, topo, tiers);
  std::vector<CollectiveCost> rows;
  rows.reserve(request.sizes.size());
  std::optional<cost::Calibration> calibration;
  if (!o.calibration.empty()) calibration = cost::load_calibration(o.calibration);
  for (Bytes size : request.sizes)
    rows.push_back(price(request, size, topo, tiers, calibration ? &*calibration : nullptr, o.explain));
  if (calibration) warn_sizes_outside(*calibration, o.calibration, request, tiers);

  const Context x{request, topo, tiers, o.topology};
  std::string text;
  if (o.json) {
    nlohmann::json j = header_json(x);
    if (request.sweep) {
      j["results"] = nlohmann::json::array();
      for (const CollectiveCost& c : rows) j["results"].push_back(result_json(c, o.explain));
    } else {
      j.update(result_json(rows.front(), o.explain));
    }
    text = j.dump(2) + "\n";
  } else {
    text = request.sweep ? sweep_text(x, rows, o.explain) : single_text(x, rows.front(), o.explain);
  }
  return echo + text;
}

}  // namespace stepcast::report
