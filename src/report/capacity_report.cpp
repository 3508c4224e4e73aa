// The report of `stepcast table`: one row per workload, cluster and GPU count, and the charts of
// the HTML page (throughput and MFU against GPU count, memory and step time by term).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "stepcast/core/units.hpp"
#include "stepcast/report/plan_reports.hpp"

namespace stepcast::report {
namespace {

constexpr double kPercentPerUnit = 100.0;  // MFU is a ratio; the chart reads it in %

std::string bar_label(const planner::CapacityCell& c) {
  return fmt::format("{} {} {}", c.workload, c.topology, c.gpus);
}

// More lines than this in one chart cannot be told apart (the palette has 10 colours, and the
// legend outgrows the plot): past it, one small chart per cluster (and per 8 workloads).
constexpr std::size_t kMaxSeriesPerChart = 8;

// Throughput or MFU against GPU count, one line per workload on one cluster.
struct ScalingLines {
  std::string workload;
  std::string cluster;
  Series series;
};

std::vector<LineChart> scaling_charts(const std::string& title, const std::string& y_label,
                                      const std::vector<ScalingLines>& lines) {
  if (lines.size() <= kMaxSeriesPerChart) {
    LineChart chart{title, "GPUs", y_label, true, {}};
    for (const auto& l : lines) chart.series.push_back(l.series);
    return {chart};
  }
  std::vector<std::string> clusters;  // first-seen order
  for (const auto& l : lines) {
    if (std::find(clusters.begin(), clusters.end(), l.cluster) == clusters.end()) clusters.push_back(l.cluster);
  }
  std::vector<LineChart> charts;
  for (const auto& cluster : clusters) {
    std::vector<Series> own;
    for (const auto& l : lines) {
      if (l.cluster != cluster) continue;
      own.push_back(l.series);
      own.back().name = l.workload;
    }
    const std::size_t parts = (own.size() + kMaxSeriesPerChart - 1) / kMaxSeriesPerChart;
    for (std::size_t part = 0; part < parts; ++part) {
      LineChart chart{parts == 1 ? fmt::format("{} on {}", title, cluster)
                                 : fmt::format("{} on {} ({} of {})", title, cluster, part + 1, parts),
                      "GPUs",
                      y_label,
                      true,
                      {}};
      const std::size_t end = std::min(own.size(), (part + 1) * kMaxSeriesPerChart);
      chart.series.assign(own.begin() + static_cast<std::ptrdiff_t>(part * kMaxSeriesPerChart),
                          own.begin() + static_cast<std::ptrdiff_t>(end));
      charts.push_back(std::move(chart));
    }
  }
  return charts;
}

std::vector<Column> capacity_columns(const CostSettings& cost, bool simulated, bool priced) {
  std::vector<Column> cols = {{"workload", "workload", "", -1},
                              {"cluster", "cluster", "", -1},
                              {"gpu", "GPU", "", -1},
                              {"gpus", "GPUs", "", -1},
                              {"nodes", "nodes", "", -1},
                              {"plan", "plan", "", -1},
                              {"fits", "fits", "", -1},
                              {"step_time_s", "step time", "s", 3},
                              {"tokens_per_s", "tokens/s", "", 0},
                              {"mfu", "MFU", "%", 1, 0.01},
                              {"memory_bytes", "memory/GPU", "GiB", 2, unit::kGibi}};
  // table --refine: the event engine's step time of the plan it picked, beside the analytical one.
  if (simulated) cols.insert(cols.begin() + 8, Column{"simulated_step_time_s", "simulated step", "s", 3});
  // Where the shown step lands by the model's errors on measured runs like the plan.
  const Column low{"interval_low_s", "90% low", "s", 3};
  const Column high{"interval_high_s", "90% high", "s", 3};
  cols.insert(cols.begin() + (simulated ? 9 : 8), {low, high});
  if (cost.tokens > 0.0) {
    cols.push_back({"train_days", "days", "", 1});
    cols.push_back({"gpu_hours", "GPU-hours", "", 0});
    if (priced) cols.push_back({"cost_usd", "cost", "USD", 0});
  }
  cols.push_back({"note", "note", "", -1});
  return cols;
}

/// Each cluster's price once, with its source, so every cost figure can be traced.
void add_price_notes(Report& r, const std::vector<planner::CapacityCell>& cells) {
  std::vector<std::string> seen;
  for (const auto& c : cells) {
    if (std::find(seen.begin(), seen.end(), c.topology) != seen.end()) continue;
    seen.push_back(c.topology);
    r.notes.push_back(
        c.price ? fmt::format("{}: {} USD per GPU-hour ({})", c.topology, format_number(c.price->usd), c.price->source)
                : fmt::format("{}: no price (the file states none; give --price)", c.topology));
  }
}

/// What every row of one table shares: its optional columns and the training-cost settings.
struct RowSettings {
  bool simulated = false;
  bool priced = false;
  int global_batch = 0;
  int seq_len = 0;
  const CostSettings& cost;
};

/// One cell's row, in capacity_columns' order.
std::vector<Cell> capacity_row(const planner::CapacityCell& c, const std::optional<calibrate::StepInterval>& interval,
                               const RowSettings& s) {
  const auto& m = c.metrics;
  std::vector<Cell> row = {Cell::of_text(c.workload), Cell::of_text(c.topology),
                           Cell::of_text(c.gpu),      Cell::of_integer(c.gpus),
                           Cell::of_integer(c.nodes), c.plan ? Cell::of_text(plan_summary(*c.plan)) : Cell::empty(),
                           Cell::of_flag(c.fits)};
  if (c.fits) {
    row.push_back(Cell::of_number(m.step_time.value()));
    if (s.simulated)
      row.push_back(c.simulated_step_time ? Cell::of_number(c.simulated_step_time->value()) : Cell::empty());
    row.push_back(interval ? Cell::of_number(interval->low.value()) : Cell::empty());
    row.push_back(interval ? Cell::of_number(interval->high.value()) : Cell::empty());
    row.push_back(Cell::of_number(m.tokens_per_s));
    row.push_back(Cell::of_number(m.mfu));
  } else {
    row.insert(row.end(), s.simulated ? 6 : 5, Cell::empty());
  }
  row.push_back(c.plan ? Cell::of_number(m.memory.total.value()) : Cell::empty());
  if (s.cost.tokens > 0.0) {
    if (c.fits) {
      const int seq = c.plan ? c.plan->seq_len : s.seq_len;
      const auto t =
          planner::training_cost(s.cost.tokens, s.global_batch, seq, m.step_time, c.gpus, c.price ? c.price->usd : 0.0);
      row.push_back(Cell::of_number(t.days));
      row.push_back(Cell::of_number(t.gpu_hours));
      if (s.priced) row.push_back(c.price ? Cell::of_number(t.cost) : Cell::empty());
    } else {
      row.insert(row.end(), s.priced ? 3 : 2, Cell::empty());
    }
  }
  row.push_back(Cell::of_text(c.note));
  return row;
}

}  // namespace

Report capacity_report(const std::vector<planner::CapacityCell>& cells,
                       const std::vector<std::optional<calibrate::StepInterval>>& intervals, const std::string& command,
                       int global_batch, int seq_len, const CostSettings& cost) {
  Report r;
  r.title = "Capacity table";
  r.notes.push_back("command: " + command);
  r.notes.push_back(fmt::format("global batch {} sequences of {} tokens; each cell shows the fastest plan that fits",
                                global_batch,
                                seq_len > 0 ? fmt::format("{}", seq_len) : std::string("the workload's")));
  const bool priced = cost.tokens > 0.0 && std::any_of(cells.begin(), cells.end(), [](const planner::CapacityCell& c) {
                        return c.price.has_value();
                      });
  if (cost.tokens > 0.0) r.notes.push_back(fmt::format("training {} tokens", format_number(cost.tokens)));
  if (priced) add_price_notes(r, cells);

  const bool simulated = std::any_of(cells.begin(), cells.end(),
                                     [](const planner::CapacityCell& c) { return c.simulated_step_time.has_value(); });
  if (simulated)
    r.notes.push_back(
        "simulated step: the event engine's step time; the plan shown is the fastest there of the refined ones");
  Table table("capacity", "Best plan per workload, cluster and GPU count", capacity_columns(cost, simulated, priced));
  std::vector<ScalingLines> tokens;
  std::vector<ScalingLines> mfu;
  BarChart memory{"Memory per GPU by term",
                  "GiB",
                  {"parameters", "gradients", "optimizer state", "activations (with working set)", "temporary buffers",
                   "framework overhead"},
                  {},
                  0.0,
                  ""};
  BarChart time{
      "Step time by part", "s", {"compute", "pipeline bubble", "exposed communication", "optimizer"}, {}, 0.0, ""};
  std::map<std::string, std::size_t> series_of;  // "workload on cluster" -> index, in first-seen order
  bool one_capacity = true;
  double capacity = 0.0;

  if (std::any_of(intervals.begin(), intervals.end(), [](const auto& i) { return i.has_value(); })) {
    r.notes.push_back(
        "90% low / high: where each cell's step lands by the model's errors on measured runs of its plan's class "
        "(each source's runs predicted by the defaults fitted without it, or by --calibration's), widened by how far "
        "the sources' median errors lie apart; blank where too few runs are like it");
  }
  const RowSettings settings{simulated, priced, global_batch, seq_len, cost};
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const planner::CapacityCell& c = cells[i];
    const auto& m = c.metrics;
    table.add_row(capacity_row(c, i < intervals.size() ? intervals[i] : std::nullopt, settings));

    if (!c.plan) continue;
    const double gib = unit::kGibi;
    memory.bars.push_back(
        {bar_label(c),
         {m.memory.parameters.value() / gib, m.memory.gradients.value() / gib, m.memory.optimizer_state.value() / gib,
          (m.memory.activations + m.memory.working_set).value() / gib, m.memory.temporary_buffers.value() / gib,
          m.memory.framework_overhead.value() / gib}});
    memory.bars.back().reference = m.gpu_memory.value() / gib;
    if (capacity == 0.0) capacity = m.gpu_memory.value();
    one_capacity = one_capacity && capacity == m.gpu_memory.value();
    if (!c.fits) continue;
    time.bars.push_back(
        {bar_label(c), {m.compute.value(), m.bubble.value(), m.exposed_communication.value(), m.optimizer.value()}});
    const std::string name = fmt::format("{} on {}", c.workload, c.topology);
    const auto [it, inserted] = series_of.try_emplace(name, tokens.size());
    if (inserted) {
      tokens.push_back({c.workload, c.topology, {name, {}, false, -1}});
      mfu.push_back({c.workload, c.topology, {name, {}, false, -1}});
    }
    tokens[it->second].series.points.push_back({static_cast<double>(c.gpus), m.tokens_per_s});
    mfu[it->second].series.points.push_back({static_cast<double>(c.gpus), m.mfu * kPercentPerUnit});
  }
  memory.reference_label = "GPU memory";
  if (one_capacity && capacity > 0.0) {
    // One line across the chart says it once; marks on each bar are for GPUs of several sizes.
    memory.reference = capacity / unit::kGibi;
    for (auto& bar : memory.bars) bar.reference = 0.0;
  }
  r.tables.push_back(std::move(table));
  for (auto& chart : scaling_charts("Throughput against GPU count", "tokens/s", tokens))
    r.line_charts.push_back(std::move(chart));
  for (auto& chart : scaling_charts("MFU against GPU count", "MFU [%]", mfu)) r.line_charts.push_back(std::move(chart));
  r.bar_charts.push_back(std::move(memory));
  r.bar_charts.push_back(std::move(time));
  return r;
}

}  // namespace stepcast::report
