// Reading scripts/measure-eager-host's JSON (validate/README.md lists its fields).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/core/json_reader.hpp"

namespace stepcast::calibrate {
namespace {

constexpr std::string_view kTool = "scripts/measure-eager-host";

int positive_int(const JsonReader& r) {
  const std::int64_t v = r.count();
  if (v > 1'000'000'000) r.fail(fmt::format("{} is not a plausible size", v));
  return static_cast<int>(v);
}

EagerHostLayer read_shape(const JsonReader& r) {
  r.check_keys({"hidden", "heads", "sequence", "micro_batch", "layers", "recompute", "issue_s", "wall_s",
                "gpu_kernel_s", "kernels", "launch_calls", "issue_per_kernel_s", "host_bound"});
  EagerHostLayer l;
  l.hidden = positive_int(r.at("hidden"));
  l.heads = positive_int(r.at("heads"));
  if (l.hidden % l.heads != 0) r.at("heads").fail(fmt::format("{} heads do not divide hidden {}", l.heads, l.hidden));
  l.sequence = positive_int(r.at("sequence"));
  l.micro_batch = positive_int(r.at("micro_batch"));
  l.layers = positive_int(r.at("layers"));
  const std::string recompute = r.at("recompute").string();
  if (recompute != "none" && recompute != "full")
    r.at("recompute").fail(fmt::format("unknown value \"{}\"; accepted: \"none\", \"full\"", recompute));
  l.full_recompute = recompute == "full";
  l.issue = Seconds(r.at("issue_s").positive_number());
  (void)r.at("wall_s").positive_number();
  l.host_bound = r.at("host_bound").boolean();
  return l;
}

}  // namespace

bool is_eager_host_json(const std::string& text) { return is_json_from_tool(text, kTool); }

EagerHostFile parse_eager_host_json(const std::string& text, const std::string& origin) {
  const nlohmann::json j = parse_json_text(text, origin);
  const JsonReader root(j, origin);
  root.check_keys({"tool", "method", "machine", "dtype", "dropout", "attention", "dispatch_s", "shapes"});
  if (root.at("tool").string() != kTool) {
    root.at("tool").fail(fmt::format("expected \"{}\", got \"{}\"", kTool, root.at("tool").string()));
  }
  const JsonReader machine = root.at("machine");
  machine.check_keys({"cpu", "python", "torch", "cuda", "gpu"});
  EagerHostFile out;
  out.file = origin;
  out.machine = fmt::format("{}, {}, PyTorch {}", machine.at("gpu").string(), machine.at("cpu").string(),
                            machine.at("torch").string());
  for (const JsonReader& s : root.at("shapes").elements()) out.shapes.push_back(read_shape(s));
  if (out.shapes.empty()) root.at("shapes").fail("no timed shapes");
  return out;
}

}  // namespace stepcast::calibrate
