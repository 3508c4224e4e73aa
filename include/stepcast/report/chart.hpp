// Chart data for the HTML report: line charts (series of points), stacked bar charts and
// predicted-against-measured scatter charts, drawn as inline SVG by svg_chart.cpp so that the
// page needs no script, font or URL.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stepcast::report {

struct Point {
  double x = 0.0;
  double y = 0.0;
};

/// One named line; points are drawn in the order given.
struct Series {
  std::string name;
  std::vector<Point> points;
  bool dashed = false;  ///< e.g. a prediction drawn over the measurement it predicts
  int colour = -1;      ///< palette index; -1: the series' own position (so a pair can share one)
};

/// A line chart; `log2_x` spaces the x axis by powers of two (GPU counts 8, 16, ..., 1024). The y
/// axis turns logarithmic (decades) by itself when the values span a decade or more, so that
/// 8 and 1024 GPUs' throughput both read.
struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;
  std::vector<Series> series;
  /// x is a message size: ticks read "1 MiB", and a log2 axis keeps at most 12 of them.
  bool x_bytes = false;
};

/// One stacked bar: a label and one value per segment of the chart (same order as `segments`).
struct Bar {
  std::string label;
  std::vector<double> values;
  /// This bar's own reference (e.g. its GPU's memory when bars are of several GPUs), drawn as a
  /// mark across the bar when > 0.
  double reference = 0.0;
};

/// A stacked bar chart, e.g. memory per GPU by term, or step time by part.
struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> segments;
  std::vector<Bar> bars;
  /// A horizontal reference line (e.g. the GPU's memory); drawn when > 0.
  double reference = 0.0;
  std::string reference_label;
};

/// Points of one colour in a scatter chart, named in its legend.
struct ScatterGroup {
  std::string name;
  std::vector<Point> points;
};

/// Predicted (y) against measured (x) on log-log axes with one range for both, the y = x line
/// and lines at (1 +- band) x, so a point's distance from the diagonal reads as its error.
struct ScatterChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ScatterGroup> groups;  ///< one colour each, in legend order
  double band = 0.10;                ///< relative error of the two lines around y = x
};

/// The chart as an <svg> element with inline styles; text is XML-escaped.
std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);
/// Precondition: every coordinate is > 0 (log axes).
std::string render_svg(const ScatterChart& chart);

/// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace stepcast::report
