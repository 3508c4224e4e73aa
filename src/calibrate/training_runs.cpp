// Interpreting the rows of a runs file: every cell checked for its unit and range, the workload,
// topology and plan loaded and resolved as `stepcast predict` would, and each row either ready to
// predict or marked with the reason the model cannot express it. A row that breaks the format or
// contradicts itself stops the read with file:line and the rule.
#include "stepcast/calibrate/training_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <variant>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/input_file.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/flash_default.hpp"
#include "training_run_rows.hpp"

namespace stepcast::calibrate {

namespace {

using detail::RawRow;
using detail::RawTable;

/// Two figures of one row that state the same throughput (tokens/s and step time, or tokens/s in
/// total and per GPU) must agree this closely: logs round and average over different windows,
/// while a slipped unit (ms for s, per GPU for total, GiB for GB) is off by 7% or far more.
constexpr double kThroughputAgreement = 0.05;

/// The longest step a measured run may report: a week. Real steps take milliseconds to minutes.
constexpr Seconds kLongestStep = Seconds(7.0 * 24 * 3600);

/// Composer's FSDP mixed_precision modes (composer/distributed/mosaic_fsdp.py names them).
constexpr std::string_view kMixedPrecisionModes[] = {"DEFAULT", "PURE", "FULL"};

/// The columns of a shape given in place of a workload file, the first four required.
constexpr std::string_view kShapeColumns[] = {"layers",    "hidden",
                                              "heads",     "vocab",
                                              "kv_heads",  "ffn",
                                              "gated_mlp", "tied_embeddings",
                                              "biases",    "learned_positions",
                                              "rotary",    "dropout",
                                              "norm"};

constexpr std::string_view kMeasuredColumns[] = {
    "step_time", "tokens_per_s", "tokens_per_s_per_gpu", "model_flops_per_gpu", "hardware_flops_per_gpu",
    "mfu",       "hfu",          "peak_memory_per_gpu"};

bool has_column(const RawTable& t, std::string_view c) {
  return std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end();
}

/// The header must name what every row needs; a row may still leave a cell empty (then it is
/// counted as inexpressible), but a file without the column cannot be meant as a runs file.
void check_columns(const RawTable& t, const std::string& file) {
  const auto fail = [&](const std::string& message) {
    throw InputError(file, t.header_line > 0 ? std::to_string(t.header_line) : std::string(), message);
  };
  const bool shape =
      has_column(t, "layers") || has_column(t, "hidden") || has_column(t, "heads") || has_column(t, "vocab");
  if (!has_column(t, "workload") && !shape) {
    fail(
        "no workload column: give workload (a shipped name, a workload JSON or a Hugging Face config.json) or the "
        "shape "
        "columns layers, hidden, heads and vocab");
  }
  if (shape) {
    for (const std::string_view c : {"layers", "hidden", "heads", "vocab"}) {
      if (!has_column(t, c))
        fail(fmt::format("shape columns without \"{}\": a shape needs layers, hidden, heads and vocab", c));
    }
  }
  for (const std::string_view c : {"topology", "plan"}) {
    if (!has_column(t, c)) fail(fmt::format("no \"{}\" column: every run needs a topology and a plan", c));
  }
  bool measured = false;
  for (const std::string_view c : kMeasuredColumns) measured = measured || has_column(t, c);
  if (!measured) {
    fail(
        "no measured column: give at least one of step_time, tokens_per_s, tokens_per_s_per_gpu, model_flops_per_gpu, "
        "hardware_flops_per_gpu, mfu, hfu, peak_memory_per_gpu");
  }
}

int whole_number(const RawRow& row, std::string_view column, std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    row.fail(column, fmt::format("expected a whole number >= 1, got \"{}\"", text));
  }
  return v;
}

/// A count per second whose unit the column name carries (tokens_per_s): a bare positive number.
double rate_number(const RawRow& row, std::string_view column, std::string_view text) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    row.fail(column,
             fmt::format("expected a number of tokens per second (the column name gives the unit), got \"{}\"", text));
  }
  if (!(v > 0.0)) row.fail(column, fmt::format("must be positive, got {}", text));
  return v;
}

template <class Q>
Q positive_quantity(const RawRow& row, std::string_view column, std::string_view text) {
  Q q;
  try {
    q = parse_quantity<Q>(text);
  } catch (const UnitError& e) {
    row.fail(column, e.what());
  }
  if (!(q.value() > 0.0)) row.fail(column, fmt::format("\"{}\" must be positive", text));
  return q;
}

/// "41.25%" -> 0.4125; a bare number is refused, since 41.25 and 0.4125 are both common.
double percentage(const RawRow& row, std::string_view column, std::string_view text) {
  std::string_view body = text;
  if (body.empty() || body.back() != '%') {
    row.fail(column, fmt::format("expected a percentage such as \"41.25%\", got \"{}\"", text));
  }
  body.remove_suffix(1);
  while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc() || end != body.data() + body.size() || !(v > 0.0 && v <= 100.0)) {
    row.fail(column, fmt::format("expected a percentage in (0%, 100%], got \"{}\"", text));
  }
  return v / 100.0;
}

bool boolean(const RawRow& row, std::string_view column, std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  row.fail(column, fmt::format("expected true or false, got \"{}\"", text));
}

RunMeasurement read_measurement(const RawRow& row) {
  RunMeasurement m;
  if (const auto v = row.find("step_time")) {
    m.step_time = positive_quantity<Seconds>(row, "step_time", *v);
    if (m.step_time->value() > kLongestStep.value()) {
      row.fail("step_time", fmt::format("a step of {} is impossible: no training step takes more than a week (a unit "
                                        "slip, or a total time for the whole run?)",
                                        *v));
    }
  }
  if (const auto v = row.find("tokens_per_s")) m.tokens_per_s = rate_number(row, "tokens_per_s", *v);
  if (const auto v = row.find("tokens_per_s_per_gpu"))
    m.tokens_per_s_per_gpu = rate_number(row, "tokens_per_s_per_gpu", *v);
  if (const auto v = row.find("model_flops_per_gpu")) {
    m.model_flops_per_gpu = positive_quantity<FlopsPerSecond>(row, "model_flops_per_gpu", *v);
  }
  if (const auto v = row.find("hardware_flops_per_gpu")) {
    m.hardware_flops_per_gpu = positive_quantity<FlopsPerSecond>(row, "hardware_flops_per_gpu", *v);
  }
  if (const auto v = row.find("mfu")) m.mfu = percentage(row, "mfu", *v);
  if (const auto v = row.find("hfu")) m.hfu = percentage(row, "hfu", *v);
  if (const auto v = row.find("peak_memory_per_gpu"))
    m.peak_memory_per_gpu = positive_quantity<Bytes>(row, "peak_memory_per_gpu", *v);
  const bool any = m.has_throughput() || m.model_flops_per_gpu || m.hardware_flops_per_gpu || m.mfu || m.hfu ||
                   m.peak_memory_per_gpu;
  if (!any) {
    row.fail({},
             "nothing measured: a run needs at least one of step_time, tokens_per_s, tokens_per_s_per_gpu, "
             "model_flops_per_gpu, hardware_flops_per_gpu, mfu, hfu, peak_memory_per_gpu");
  }
  // Utilisation is compared in the run's own FLOP convention, scaled by predicted over measured
  // throughput, so it needs the throughput it was computed from.
  for (const auto& [given, column] : {std::pair{m.model_flops_per_gpu.has_value(), "model_flops_per_gpu"},
                                      std::pair{m.hardware_flops_per_gpu.has_value(), "hardware_flops_per_gpu"},
                                      std::pair{m.mfu.has_value(), "mfu"}, std::pair{m.hfu.has_value(), "hfu"}}) {
    if (given && !m.has_throughput()) {
      row.fail(column,
               "needs the run's throughput in the same row (step_time, tokens_per_s or tokens_per_s_per_gpu): "
               "it is compared in the run's own FLOP convention, scaled by predicted over measured throughput");
    }
  }
  return m;
}

/// The plan's keys as written, to tell a setting stepcast does not model (inexpressible) from a
/// malformed one (parse_plan's error). Items without '=' are left to parse_plan to refuse.
std::vector<std::string> plan_keys_of(std::string_view text) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos) {
      std::string_view key = item.substr(0, eq);
      while (!key.empty() && (key.front() == ' ' || key.front() == '\t')) key.remove_prefix(1);
      while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
      keys.emplace_back(key);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return keys;
}

/// Loads a file a row names; its error is reported at the row, with the file's own location.
template <class Load>
auto load(const RawRow& row, std::string_view column, Load&& load_file) -> decltype(load_file()) {
  try {
    return load_file();
  } catch (const InputError& e) {
    row.fail(
        column,
        fmt::format("{} (a name is looked up among the shipped files; a path is relative to the runs file)", e.what()));
  }
}

/// NVIDIA's recommended Slurm segment for jobs of 128 GPUs and more on GB200 NVL72: 16 of a rack's 18
/// trays, the other two left for jobs and spares (NVIDIA Technical Blog, "Unlock Exascale Performance
/// on NVIDIA GB200 NVL72 with Slurm Topology-Aware Job Scheduling", segment sizing). Megatron-Bridge's
/// NVL72 runs of 128 and 256 GPUs are whole numbers of such segments and no whole number of racks.
constexpr int kSegmentTrays = 16;

/// The GPUs a row without a gpus_per_domain column uses of each scale-up domain: a count above one
/// domain that whole domains do not hold but whole 16-tray segments do (256 on NVL72: 4 x 64) runs
/// on one segment of each domain; none otherwise (whole domains, or part of one).
std::optional<int> segment_gpus_per_domain(int gpus, const topology::Topology& t) {
  if (t.trays_per_node() <= kSegmentTrays) return std::nullopt;
  const int segment = kSegmentTrays * t.gpus_per_tray();
  if (gpus <= t.domain_gpus() || gpus % t.domain_gpus() == 0 || gpus % segment != 0) return std::nullopt;
  return segment;
}

/// Loads and keeps the workloads and topologies the rows name, so that 10,000 rows over a few
/// models read each file once.
class Loader {
 public:
  Loader(std::filesystem::path data_root) : data_root_(std::move(data_root)) {}

  void set_file(const std::filesystem::path& runs_file) { folder_ = runs_file.parent_path(); }

  std::shared_ptr<const workload::Workload> workload(const RawRow& row, const std::string& value) {
    const std::filesystem::path path = resolve(value, "workloads");
    auto& slot = workloads_[path.string()];
    if (!slot)
      slot = std::make_shared<const workload::Workload>(
          load(row, "workload", [&] { return workload::load_workload(path); }));
    return slot;
  }

  std::shared_ptr<const workload::Workload> shape_workload(const workload::TransformerShape& s) {
    const auto key = std::make_tuple(s.layers, s.hidden, s.heads, s.kv_heads, s.ffn_hidden, s.gated_mlp, s.vocab,
                                     s.seq_len, s.tied_embeddings, s.biases, s.learned_positions, s.rotary, s.dropout,
                                     s.norm == workload::Norm::kLayerNorm);
    auto& slot = shapes_[key];
    if (!slot) {
      workload::Workload w;
      w.name = fmt::format("l={} h={} a={}{}", s.layers, s.hidden, s.heads,
                           s.kv_heads != s.heads ? fmt::format(" kv={}", s.kv_heads) : "");
      w.source = "shape columns of a runs file";
      w.shape = s;
      w.parameters = workload::parameter_count(s);
      slot = std::make_shared<const workload::Workload>(std::move(w));
    }
    return slot;
  }

  /// The topology with `nodes` (or the file's count, grown to hold `gpus` as `validate
  /// --measured` grows it for a log's ranks), keeping `per_domain` GPUs of each scale-up domain
  /// (the gpus_per_domain column, else segment_gpus_per_domain).
  std::shared_ptr<const topology::Topology> topology(const RawRow& row, const std::string& value,
                                                     std::optional<int> nodes, std::optional<int> gpus,
                                                     std::optional<int> per_domain) {
    const std::filesystem::path path = resolve(value, "topologies");
    auto topo = topology_at(row, path, nodes, std::nullopt);
    if (!per_domain && gpus) per_domain = segment_gpus_per_domain(*gpus, *topo);
    if (per_domain) topo = topology_at(row, path, nodes, per_domain);
    if (!nodes && gpus && *gpus > topo->gpu_count()) {
      // Whole nodes of the graph; in an NVL72 file --nodes counts trays, a rack's worth each.
      const int per_node = std::max(1, topo->gpus_per_node());
      topo = topology_at(row, path, (*gpus + per_node - 1) / per_node * topo->trays_per_node(), per_domain);
    }
    return topo;
  }

 private:
  /// A shipped name ("dgx-a100") is looked up in data_root/<folder>/; anything with a '/' or a
  /// .json suffix is a path, relative to the runs file's folder.
  std::filesystem::path resolve(const std::string& value, std::string_view folder) const {
    const bool is_name = value.find('/') == std::string::npos && !value.ends_with(".json");
    if (is_name) return data_root_ / folder / (value + ".json");
    const std::filesystem::path given(value);
    return given.is_absolute() ? given : folder_ / given;
  }

  std::shared_ptr<const topology::Topology> topology_at(const RawRow& row, const std::filesystem::path& path,
                                                        std::optional<int> nodes, std::optional<int> per_domain) {
    auto& slot = topologies_[{path.string(), nodes.value_or(0), per_domain.value_or(0)}];
    if (slot) return slot;
    if (!per_domain) {
      slot = std::make_shared<const topology::Topology>(
          load(row, "topology", [&] { return topology::load_topology(path, nodes); }));
    } else {
      // The file loaded whole first, so what fails here is the part of each domain.
      try {
        slot = std::make_shared<const topology::Topology>(topology::load_topology(path, nodes, per_domain));
      } catch (const InputError& e) {
        row.fail("gpus_per_domain", e.message());
      }
    }
    return slot;
  }

  std::filesystem::path data_root_;
  std::filesystem::path folder_;
  std::map<std::string, std::shared_ptr<const workload::Workload>> workloads_;
  std::map<std::tuple<int, int, int, int, int, bool, int, int, bool, bool, bool, bool, bool, bool>,
           std::shared_ptr<const workload::Workload>>
      shapes_;
  std::map<std::tuple<std::string, int, int>, std::shared_ptr<const topology::Topology>> topologies_;
};

/// The shape columns as a TransformerShape (defaults as in a workload JSON: kv_heads = heads,
/// ffn = 4h, no gated MLP, untied, no biases, no learned positions, no rotation, dropout,
/// RMSNorm), or the name of a required column left empty.
std::variant<workload::TransformerShape, std::string> read_shape(const RawRow& row, int seq_len) {
  for (const std::string_view c : {"layers", "hidden", "heads", "vocab"}) {
    if (!row.find(c)) return fmt::format("shape column {}", c);
  }
  workload::TransformerShape s;
  s.layers = whole_number(row, "layers", *row.find("layers"));
  s.hidden = whole_number(row, "hidden", *row.find("hidden"));
  s.heads = whole_number(row, "heads", *row.find("heads"));
  s.vocab = whole_number(row, "vocab", *row.find("vocab"));
  s.kv_heads = row.find("kv_heads") ? whole_number(row, "kv_heads", *row.find("kv_heads")) : s.heads;
  // GPT's MLP is 4h wide (Radford et al. 2019), as workload JSON assumes when ffn_hidden is left out.
  s.ffn_hidden = row.find("ffn") ? whole_number(row, "ffn", *row.find("ffn")) : 4 * s.hidden;
  s.gated_mlp = row.find("gated_mlp") && boolean(row, "gated_mlp", *row.find("gated_mlp"));
  s.tied_embeddings = row.find("tied_embeddings") && boolean(row, "tied_embeddings", *row.find("tied_embeddings"));
  s.biases = row.find("biases") && boolean(row, "biases", *row.find("biases"));
  s.learned_positions =
      row.find("learned_positions") && boolean(row, "learned_positions", *row.find("learned_positions"));
  s.rotary = row.find("rotary") && boolean(row, "rotary", *row.find("rotary"));
  s.dropout = !row.find("dropout") || boolean(row, "dropout", *row.find("dropout"));
  if (const auto norm = row.find("norm")) {
    if (*norm == "layernorm") {
      s.norm = workload::Norm::kLayerNorm;
    } else if (*norm != "rmsnorm") {
      row.fail("norm", fmt::format("expected layernorm or rmsnorm, got \"{}\"", *norm));
    }
  }
  s.seq_len = seq_len;
  if (s.hidden % s.heads != 0)
    row.fail("heads", fmt::format("hidden size {} is not divisible by the {} heads", s.hidden, s.heads));
  if (s.heads % s.kv_heads != 0) {
    row.fail("kv_heads", fmt::format("{} heads are not divisible by the {} key/value heads", s.heads, s.kv_heads));
  }
  return s;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

/// A setting given both as a column and in the plan must agree.
template <class T>
std::optional<T> agreed(const RawRow& row, std::string_view column, std::optional<T> from_column, bool in_plan,
                        T from_plan, std::string_view plan_key) {
  if (!in_plan) return from_column;
  if (from_column && *from_column != from_plan) {
    row.fail(column, fmt::format("the column says {} but the plan says {}={}", *from_column, plan_key, from_plan));
  }
  return from_plan;
}

void check_agreement(const RawRow& row, std::string_view a_column, double a, std::string_view b_column, double b,
                     const std::string& how) {
  if (std::fabs(a / b - 1.0) > kThroughputAgreement) {
    row.fail(b_column, fmt::format("disagrees with {} by {:+.1f}% ({}); a unit may have slipped", a_column,
                                   100.0 * (b / a - 1.0), how));
  }
}

/// The column a row's throughput is read from, for errors about it.
std::string_view throughput_column(const RunMeasurement& m) {
  if (m.tokens_per_s) return "tokens_per_s";
  if (m.tokens_per_s_per_gpu) return "tokens_per_s_per_gpu";
  return "step_time";
}

/// A measured throughput whose model FLOPs (step_flops: 3 passes of the layers and the output
/// layer, the convention MFU is reported in) exceed what the GPUs can compute at the run's
/// precision is impossible: a unit slip, a total taken for a per-GPU figure, or another model.
void refuse_beyond_peak(const RawRow& row, const TrainingRun& run) {
  const std::optional<double> tokens_per_s = run.measured_tokens_per_s();
  if (!tokens_per_s) return;
  const double step_s = run.tokens_per_step() / *tokens_per_s;
  const double flops_per_gpu = cost::step_flops(*run.workload->shape, run.plan).model.value() / step_s / run.gpus;
  const double peak = cost::peak_rate(run.topology->gpu(), run.plan.precision).value();
  if (flops_per_gpu <= peak) return;
  row.fail(
      throughput_column(run.measured),
      fmt::format("is impossible: a step of {} would compute {:.4g} TFLOP/s of model FLOPs on each GPU, {:.0f}% of "
                  "the {}'s {} peak ({:.4g} TFLOP/s); a unit may have slipped",
                  format_seconds(Seconds(step_s)), flops_per_gpu / 1e12, 100.0 * flops_per_gpu / peak,
                  run.topology->gpu().name, plan::to_string(run.plan.precision), peak / 1e12));
}

/// The run's names and what it measured, before its plan, workload and cluster are read.
TrainingRun labelled_run(const RawRow& row) {
  TrainingRun run;
  run.where = row.where();
  run.id = row.find("run")       ? std::string(*row.find("run"))
           : row.pointer.empty() ? fmt::format("line {}", row.line)
                                 : row.pointer.substr(1);
  if (const auto v = row.find("source")) run.source = *v;
  if (const auto v = row.find("note")) run.note = *v;
  if (const auto v = row.find("fsdp_mixed_precision")) {
    if (std::find(std::begin(kMixedPrecisionModes), std::end(kMixedPrecisionModes), *v) ==
        std::end(kMixedPrecisionModes)) {
      row.fail("fsdp_mixed_precision",
               fmt::format("expected DEFAULT, PURE or FULL (Composer's FSDP mixed_precision), got \"{}\"", *v));
    }
    run.fsdp_mixed_precision = *v;
  }
  run.measured = read_measurement(row);
  return run;
}

/// A plan runs on whole nodes of the graph (whole domains, or the part gpus_per_domain keeps of
/// each) or on part of one, as `predict --gpus` and --gpus-per-domain allow; empty when it does.
std::string gpu_layout_refusal(const TrainingRun& run) {
  const topology::Topology& t = *run.topology;
  if (run.gpus <= t.gpus_per_node() || run.gpus % t.gpus_per_node() == 0) return {};
  return fmt::format("{} GPUs are not whole nodes of {} GPUs on {}, nor part of one{}", run.gpus, t.gpus_per_node(),
                     run.topology_name,
                     t.trays_per_node() > 1
                         ? fmt::format(", nor {}-tray segments of each domain: gpus_per_domain says the part of each "
                                       "domain a run used (whole trays of {})",
                                       kSegmentTrays, t.gpus_per_tray())
                         : "");
}

/// Throughput given twice must agree.
void check_throughputs_agree(const RawRow& row, const TrainingRun& run) {
  const RunMeasurement& m = run.measured;
  const double tokens = run.tokens_per_step();
  if (m.tokens_per_s && m.step_time) {
    check_agreement(row, "tokens_per_s", *m.tokens_per_s, "step_time", tokens / m.step_time->value(),
                    fmt::format("{} tokens per step / {}", tokens, format_seconds(*m.step_time)));
  }
  if (m.tokens_per_s && m.tokens_per_s_per_gpu) {
    check_agreement(row, "tokens_per_s", *m.tokens_per_s, "tokens_per_s_per_gpu", *m.tokens_per_s_per_gpu * run.gpus,
                    fmt::format("x {} GPUs", run.gpus));
  }
  if (!m.tokens_per_s && m.step_time && m.tokens_per_s_per_gpu) {
    check_agreement(row, "step_time", tokens / m.step_time->value(), "tokens_per_s_per_gpu",
                    *m.tokens_per_s_per_gpu * run.gpus, fmt::format("x {} GPUs", run.gpus));
  }
}

/// What the model cannot express of a well-formed run: a bare parameter count, a rule of the
/// model the plan breaks, a precision without a peak rate on this GPU; empty when it can.
std::string model_refusal(const TrainingRun& run) {
  if (!run.workload->shape) return "the workload is a bare parameter count; step time needs its shape";
  const auto problems = plan::problems(run.plan, *run.workload, run.gpus);
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text += (text.empty() ? "" : "; ") + plan::describe(p);
    return "the model refuses the plan: " + text;
  }
  if (!(cost::peak_rate(run.topology->gpu(), run.plan.precision).value() > 0.0)) {
    return fmt::format("the {} has no {} peak rate", run.topology->gpu().name, plan::to_string(run.plan.precision));
  }
  return {};
}

/// The plan column: parsed, the keys it gives, and those stepcast does not model (which make the
/// run inexpressible; anything else wrong with the plan is bad input).
struct PlanColumn {
  plan::Plan parsed;
  std::set<std::string> keys;
  std::vector<std::string> unknown;
};

PlanColumn read_plan_column(const RawRow& row, TrainingRun& run) {
  PlanColumn out;
  const auto text = row.find("plan");
  if (!text) return out;
  run.plan_text = *text;
  const std::vector<std::string> keys = plan_keys_of(*text);
  for (const auto& key : keys) {
    if (!plan::is_plan_key(key)) out.unknown.push_back(fmt::format("\"{}\"", key));
  }
  if (!out.unknown.empty()) return out;
  try {
    out.parsed = plan::parse_plan(*text, run.where);
  } catch (const InputError& e) {
    row.fail("plan", e.message());
  }
  out.keys.insert(keys.begin(), keys.end());
  return out;
}

TrainingRun interpret(const RawRow& row, Loader& loader) {
  TrainingRun run = labelled_run(row);

  std::vector<std::string> missing;
  PlanColumn column = read_plan_column(row, run);
  if (!row.find("plan")) missing.emplace_back("plan");
  plan::Plan& parsed = column.parsed;
  const std::set<std::string>& plan_keys = column.keys;
  const std::vector<std::string>& unknown_keys = column.unknown;
  const auto count = [&](std::string_view c) {
    return row.find(c) ? std::optional<int>(whole_number(row, c, *row.find(c))) : std::nullopt;
  };
  const std::optional<int> global_batch =
      agreed(row, "global_batch", count("global_batch"), plan_keys.contains("gbs"), parsed.global_batch, "gbs");
  const std::optional<int> seq_len =
      agreed(row, "seq_len", count("seq_len"), plan_keys.contains("seq"), parsed.seq_len, "seq");
  std::optional<plan::Precision> precision;
  if (const auto v = row.find("precision")) {
    try {
      precision = plan::parse_precision(*v, run.where);
    } catch (const InputError& e) {
      row.fail("precision", e.message());
    }
  }
  if (plan_keys.contains("precision") && precision && *precision != parsed.precision) {
    row.fail("precision", fmt::format("the column says {} but the plan says precision={}", plan::to_string(*precision),
                                      plan::to_string(parsed.precision)));
  }
  if (plan_keys.contains("precision")) precision = parsed.precision;
  if (!global_batch) missing.emplace_back("global_batch");
  if (!seq_len) missing.emplace_back("seq_len");
  if (!precision) missing.emplace_back("precision");

  // The workload: a file, or the shape columns.
  bool shape_given = false;
  for (const std::string_view c : kShapeColumns) shape_given = shape_given || row.find(c).has_value();
  if (const auto name = row.find("workload")) {
    if (shape_given) row.fail("workload", "give the workload or the shape columns, not both");
    run.workload = loader.workload(row, std::string(*name));
  } else if (shape_given) {
    const auto shape = read_shape(row, seq_len.value_or(0));
    if (const auto* s = std::get_if<workload::TransformerShape>(&shape)) {
      run.workload = loader.shape_workload(*s);
    } else {
      missing.push_back(std::get<std::string>(shape));
    }
  } else {
    missing.emplace_back("workload (or its shape columns)");
  }
  if (run.workload) run.workload_name = run.workload->name;

  // The cluster: the topology, its nodes, and how many of its GPUs the plan uses.
  const std::optional<int> nodes = count("nodes");
  const std::optional<int> gpus = count("gpus");
  const std::optional<int> per_domain = count("gpus_per_domain");
  if (per_domain && gpus && *gpus % *per_domain != 0) {
    row.fail("gpus_per_domain",
             fmt::format("{} GPUs are not whole domains of {} (gpus must be a multiple of gpus_per_domain)", *gpus,
                         *per_domain));
  }
  if (const auto name = row.find("topology")) {
    run.topology = loader.topology(row, std::string(*name), nodes, gpus, per_domain);
    run.topology_name = run.topology->name();
    run.gpus = gpus.value_or(run.topology->gpu_count());
    if (run.gpus > run.topology->gpu_count()) {
      row.fail("gpus", fmt::format("{} GPUs, but {} node(s) of {} hold {}", run.gpus, run.topology->node_count(),
                                   run.topology_name, run.topology->gpu_count()));
    }
  } else {
    missing.emplace_back("topology");
  }
  run.group = row.find("group") ? std::string(*row.find("group"))
                                : fmt::format("{} on {}, {} GPUs", run.workload ? run.workload_name : "?",
                                              run.topology ? run.topology_name : "?", run.gpus);
  if (run.topology) {
    run.inexpressible = gpu_layout_refusal(run);
    if (!run.inexpressible.empty()) return run;
  }
  if (!unknown_keys.empty()) {
    run.inexpressible =
        fmt::format("plan key{} {} not modelled by stepcast", unknown_keys.size() > 1 ? "s" : "", join(unknown_keys));
    return run;
  }
  if (!missing.empty()) {
    run.inexpressible = fmt::format("no {}", join(missing));
    return run;
  }

  // The plan as `stepcast predict` resolves it, with the row's batch, sequence and precision.
  parsed.global_batch = *global_batch;
  parsed.seq_len = *seq_len;
  parsed.precision = *precision;
  // A plan without flash= gets the command line's default: fused attention where the GPU runs it.
  if (run.topology) parsed = cost::with_default_flash(parsed, run.topology->gpu());
  try {
    run.plan = plan::resolve(parsed, *run.workload, run.gpus);
  } catch (const InputError& e) {
    row.fail("plan", e.message());
  }
  if (run.plan.dp == 0) {
    row.fail("plan", fmt::format("tp x pp = {} x {} = {} does not divide the row's {} GPUs", run.plan.tp, run.plan.pp,
                                 run.plan.tp * run.plan.pp, run.gpus));
  }
  if (run.plan.gpus() != run.gpus) {
    row.fail("plan", fmt::format("dp x tp x pp = {} x {} x {} does not use the row's {} GPUs", run.plan.dp, run.plan.tp,
                                 run.plan.pp, run.gpus));
  }
  check_throughputs_agree(row, run);
  run.inexpressible = model_refusal(run);
  if (run.inexpressible.empty()) refuse_beyond_peak(row, run);
  return run;
}

}  // namespace

double TrainingRun::tokens_per_step() const { return static_cast<double>(plan.global_batch) * plan.seq_len; }

std::optional<double> TrainingRun::measured_tokens_per_s() const {
  if (measured.tokens_per_s) return measured.tokens_per_s;
  if (measured.tokens_per_s_per_gpu) return *measured.tokens_per_s_per_gpu * gpus;
  if (measured.step_time) return tokens_per_step() / measured.step_time->value();
  return std::nullopt;
}

std::vector<TrainingRun> read_training_runs(const std::vector<std::filesystem::path>& files,
                                            const std::filesystem::path& data_root) {
  std::vector<TrainingRun> runs;
  std::map<std::string, std::string> ids;  ///< explicit run ids, with where each was first given
  Loader loader(data_root);
  for (const auto& file : files) {
    std::string text = read_text_file(file);
    // Spreadsheets save CSV with a UTF-8 byte order mark, which is no part of the first column's name.
    if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
    const auto first = text.find_first_not_of(" \t\r\n");
    const bool json = first != std::string::npos && text[first] == '{';
    const RawTable table =
        json ? detail::read_runs_json(text, file.string()) : detail::read_runs_csv(text, file.string());
    check_columns(table, file.string());
    loader.set_file(file);
    for (const RawRow& row : table.rows) {
      runs.push_back(interpret(row, loader));
      // A run id names one run: two rows under one id would be told apart by nothing but order.
      if (const auto id = row.find("run")) {
        const auto [earlier, added] = ids.emplace(std::string(*id), runs.back().where);
        if (!added) {
          row.fail("run", fmt::format("the run id \"{}\" is already the id of the run at {}: each run needs its own",
                                      *id, earlier->second));
        }
      }
      runs.back().file = file.string();
    }
  }
  return runs;
}

}  // namespace stepcast::calibrate
