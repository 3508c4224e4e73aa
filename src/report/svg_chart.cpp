// Inline SVG charts written by hand: a line chart with a log2 or linear x axis, stacked bars
// with an optional reference line, and a predicted-against-measured scatter on log-log axes. Coordinates are printed
// with two decimals so output is stable.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/chart.hpp"

namespace stepcast::report {
namespace {

// Tableau 10, a palette chosen to stay distinguishable for common colour-vision deficiencies.
constexpr std::array<const char*, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// Plot geometry in SVG user units (pixels at 100% zoom).
constexpr double kPlotHeight = 280.0;
constexpr double kMarginLeft = 90.0;
constexpr double kMarginTop = 50.0;
constexpr double kLegendWidth = 260.0;
constexpr double kLegendRow = 18.0;
constexpr int kYTicks = 5;

const char* colour(std::size_t i) { return kPalette[i % kPalette.size()]; }

std::string num(double v) { return fmt::format("{:.2f}", v); }

/// The width a label takes at `font_size` in a sans-serif face: DejaVu Sans, Debian's default,
/// averages under 0.6 em per character of these labels; bold runs about 10% wider.
double text_width(std::string_view text, double font_size, bool bold = false) {
  return 0.6 * font_size * static_cast<double>(text.size()) * (bold ? 1.1 : 1.0);
}

/// The legend's width: kLegendWidth, or more when a name needs it (swatch, gap, name, margin).
double legend_width(const std::vector<std::string>& names) {
  double widest = 0.0;
  for (const std::string& n : names) widest = std::max(widest, text_width(n, 12.0));
  return std::max(kLegendWidth, 18.0 + widest + 8.0);
}

/// A chart's width, widened to hold its title (15 px bold, centred, 8 px from each edge).
double with_title_room(double width, const std::string& title) {
  return std::max(width, text_width(title, 15.0, true) + 16.0);
}

/// A round upper bound for an axis: the smallest of 1, 2, 2.5, 5, 10 x 10^k that is >= v.
double nice_max(double v) {
  if (!(v > 0.0) || !std::isfinite(v)) return 1.0;
  const double scale = std::pow(10.0, std::floor(std::log10(v)));
  for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (step * scale >= v * (1.0 - 1e-12)) return step * scale;
  }
  return 10.0 * scale;
}

/// Axis labels: four significant digits, with k, M, G, T from 10,000 on ("125k", "2M" rather
/// than "1.25e+05", "2e+06").
std::string tick_label(double v) {
  constexpr std::array<std::pair<double, const char*>, 4> kSuffixes = {
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  if (std::fabs(v) >= 1e4) {
    for (const auto& [scale, suffix] : kSuffixes) {
      if (std::fabs(v) >= scale) return fmt::format("{:.4g}{}", v / scale, suffix);
    }
  }
  return fmt::format("{:.4g}", v);
}

/// A decade-aligned log10 axis over [lo, hi] (both > 0): its ends and its ticks at each decade,
/// and at 2 and 5 times it when the range spans two decades or less.
struct LogAxis {
  double a = 0.0;  ///< log10 of the lower end
  double b = 1.0;  ///< log10 of the upper end
  std::vector<double> ticks;
};

LogAxis log_axis(double lo, double hi) {
  LogAxis axis;
  axis.a = std::floor(std::log10(lo));
  axis.b = std::ceil(std::log10(hi));
  if (!(axis.b > axis.a)) axis.b = axis.a + 1.0;
  for (double k = axis.a; k <= axis.b + 1e-9; k += 1.0) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m > 1.0 && axis.b - axis.a > 2.0) continue;
      const double v = m * std::pow(10.0, k);
      if (std::log10(v) <= axis.b + 1e-9) axis.ticks.push_back(v);
    }
  }
  return axis;
}

/// A size tick in binary units, "512 KiB", short enough for a crowded axis.
std::string byte_tick_label(double v) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (u + 1 < kUnits.size() && v >= 1024.0) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.4g} {}", v, kUnits[u]);
}

void y_tick(std::string& out, double width, double y, double value) {
  out += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#ddd"/>)", num(kMarginLeft),
                     num(kMarginLeft + width), num(y));
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-size="11">{}</text>)", num(kMarginLeft - 6),
                     num(y + 4), xml_escape(tick_label(value)));
}

void y_axis_lines(std::string& out, double width, const std::string& label) {
  const double bottom = kMarginTop + kPlotHeight;
  out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#333"/>)", num(kMarginLeft), num(kMarginTop),
                     num(bottom));
  out += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#333"/>)", num(kMarginLeft),
                     num(kMarginLeft + width), num(bottom));
  out += fmt::format(
      R"~(<text x="16" y="{0}" transform="rotate(-90 16 {0})" text-anchor="middle" font-size="12">{1}</text>)~",
      num(kMarginTop + kPlotHeight / 2), xml_escape(label));
}

/// A linear y axis from 0 to y_top.
void y_axis(std::string& out, double width, double y_top, const std::string& label) {
  y_axis_lines(out, width, label);
  for (int i = 0; i <= kYTicks; ++i)
    y_tick(out, width, kMarginTop + kPlotHeight * (1.0 - static_cast<double>(i) / kYTicks), y_top * i / kYTicks);
}

void title(std::string& out, double total_width, const std::string& text) {
  out += fmt::format(R"(<text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>)",
                     num(total_width / 2), xml_escape(text));
}

void legend_entry(std::string& out, double x, std::size_t row, const char* fill, const std::string& name,
                  bool dashed = false) {
  const double y = kMarginTop + kLegendRow * static_cast<double>(row);
  if (dashed) {
    // A dashed line's swatch is a short dashed stroke, so it reads apart from the solid one.
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2" stroke-dasharray="4 2"/>)",
                       num(x), num(y + 6), num(x + 12), num(y + 6), fill);
  } else {
    out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", num(x), num(y), fill);
  }
  out += fmt::format(R"(<text x="{}" y="{}" font-size="12">{}</text>)", num(x + 18), num(y + 10), xml_escape(name));
}

std::string open_svg(double width, double height, const std::string& label) {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}" font-family="sans-serif">)",
      num(width), num(height), xml_escape(label));
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string render_svg(const LineChart& chart) {
  const double plot_width = 520.0;
  const double legend_rows = static_cast<double>(chart.series.size());
  const double height = std::max(kMarginTop + kPlotHeight + 60.0, kMarginTop + legend_rows * kLegendRow + 20.0);
  std::vector<std::string> names;
  for (const auto& s : chart.series) names.push_back(s.name);
  const double width = with_title_room(kMarginLeft + plot_width + 30.0 + legend_width(names), chart.title);
  const auto x_of = [&](double x) { return chart.log2_x ? std::log2(x) : x; };

  double x_lo = 0.0;
  double x_hi = 0.0;
  double y_lo = 0.0;
  double y_hi = 0.0;
  bool any = false;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) {
      STEPCAST_ASSERT(!chart.log2_x || p.x > 0.0, "a log2 axis needs positive x");
      const double x = x_of(p.x);
      x_lo = any ? std::min(x_lo, x) : x;
      x_hi = any ? std::max(x_hi, x) : x;
      y_lo = any ? std::min(y_lo, p.y) : p.y;
      y_hi = std::max(y_hi, p.y);
      any = true;
    }
  }
  if (!(x_hi > x_lo)) {
    x_lo -= 1.0;
    x_hi += 1.0;
  }
  constexpr double kSpanForLog = 10.0;  // a decade or more: linear would flatten the small values
  const bool log_y = any && y_lo > 0.0 && y_hi / y_lo >= kSpanForLog;
  const LogAxis y_log = log_y ? log_axis(y_lo, y_hi) : LogAxis{};
  const double y_top = nice_max(y_hi);
  const double bottom = kMarginTop + kPlotHeight;
  const auto px = [&](double x) { return kMarginLeft + 10.0 + (plot_width - 20.0) * (x_of(x) - x_lo) / (x_hi - x_lo); };
  const auto py = [&](double y) {
    return log_y ? bottom - kPlotHeight * (std::log10(y) - y_log.a) / (y_log.b - y_log.a)
                 : bottom - kPlotHeight * y / y_top;
  };

  std::string out = open_svg(width, height, chart.title);
  title(out, width, chart.title);
  if (log_y) {
    y_axis_lines(out, plot_width, chart.y_label + " (log scale)");
    for (const double t : y_log.ticks) y_tick(out, plot_width, py(t), t);
  } else {
    y_axis(out, plot_width, y_top, chart.y_label);
  }
  // x ticks: at the points themselves when they share a few x values (GPU counts such as 144, 288,
  // 576), else every power of two on a log2 axis and five even steps on a linear one.
  constexpr std::size_t kMaxDataTicks = 12;
  std::vector<double> ticks;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) ticks.push_back(p.x);
  }
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  if (ticks.empty() || ticks.size() > kMaxDataTicks) {
    ticks.clear();
    if (chart.log2_x) {
      constexpr double kMaxSizeTicks = 12.0;
      const double step = chart.x_bytes ? std::max(1.0, std::ceil((x_hi - x_lo + 1.0) / kMaxSizeTicks)) : 1.0;
      for (double k = std::ceil(x_lo); k <= x_hi + 1e-9; k += step) ticks.push_back(std::exp2(k));
    } else {
      for (int i = 0; i <= kYTicks; ++i) ticks.push_back(x_lo + (x_hi - x_lo) * i / kYTicks);
    }
  }
  for (const double t : ticks) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text>)", num(px(t)),
                       num(bottom + 16), xml_escape(chart.x_bytes ? byte_tick_label(t) : tick_label(t)));
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>)",
                     num(kMarginLeft + plot_width / 2), num(bottom + 40), xml_escape(chart.x_label));
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const char* fill = colour(s.colour >= 0 ? static_cast<std::size_t>(s.colour) : i);
    std::string points;
    for (const auto& p : s.points)
      points += fmt::format("{}{},{}", points.empty() ? "" : " ", num(px(p.x)), num(py(p.y)));
    out += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2"{} points="{}"/>)", fill,
                       s.dashed ? R"( stroke-dasharray="6 4")" : "", points);
    for (const auto& p : s.points) {
      out += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{}: {} at {}</title></circle>)",
                         num(px(p.x)), num(py(p.y)), fill, xml_escape(s.name), xml_escape(tick_label(p.y)),
                         xml_escape(chart.x_bytes ? byte_tick_label(p.x) : tick_label(p.x)));
    }
    legend_entry(out, kMarginLeft + plot_width + 30.0, i, fill, s.name, s.dashed);
  }
  out += "</svg>";
  return out;
}

std::string render_svg(const BarChart& chart) {
  const double slot = 34.0;
  const double bar_width = 22.0;
  const double plot_width = std::max(300.0, slot * static_cast<double>(chart.bars.size()) + 20.0);
  const double label_room = 150.0;  // rotated bar labels below the axis
  const bool any_reference = chart.reference > 0.0 || std::any_of(chart.bars.begin(), chart.bars.end(),
                                                                  [](const Bar& b) { return b.reference > 0.0; });
  const double legend_rows = static_cast<double>(chart.segments.size()) + (any_reference ? 1.0 : 0.0);
  // A bar's label runs down-left from under its bar at 45 degrees: room below the axis for the
  // longest, and the whole chart shifted right by what the first bars' labels reach past x = 0.
  constexpr double kCos45 = 0.7071;
  double below = label_room;
  double shift = 0.0;
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const double reach = kCos45 * text_width(chart.bars[b].label, 10.0);
    below = std::max(below, 12.0 + reach + 12.0);
    const double cx = kMarginLeft + 10.0 + slot * static_cast<double>(b) + slot / 2;
    shift = std::max(shift, reach - cx + 4.0);
  }
  const double height = std::max(kMarginTop + kPlotHeight + below, kMarginTop + legend_rows * kLegendRow + 20.0);
  std::vector<std::string> names = chart.segments;
  if (any_reference) names.push_back(chart.reference_label);
  const double width = with_title_room(shift + kMarginLeft + plot_width + 30.0 + legend_width(names), chart.title);

  double y_hi = chart.reference;
  for (const auto& bar : chart.bars) {
    y_hi = std::max(y_hi, bar.reference);
    STEPCAST_ASSERT(bar.values.size() == chart.segments.size(), "a bar holds one value per segment");
    double sum = 0.0;
    for (const double v : bar.values) {
      STEPCAST_ASSERT(v >= 0.0, "stacked bars hold non-negative values");
      sum += v;
    }
    y_hi = std::max(y_hi, sum);
  }
  const double y_top = nice_max(y_hi);
  const double bottom = kMarginTop + kPlotHeight;
  const auto height_of = [&](double v) { return kPlotHeight * v / y_top; };

  std::string out = open_svg(width, height, chart.title);
  title(out, width, chart.title);
  if (shift > 0.0) out += fmt::format(R"~(<g transform="translate({} 0)">)~", num(shift));
  y_axis(out, plot_width, y_top, chart.y_label);
  for (std::size_t b = 0; b < chart.bars.size(); ++b) {
    const auto& bar = chart.bars[b];
    const double x = kMarginLeft + 10.0 + slot * static_cast<double>(b) + (slot - bar_width) / 2;
    double y = bottom;
    for (std::size_t s = 0; s < bar.values.size(); ++s) {
      const double h = height_of(bar.values[s]);
      y -= h;
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {} = {}</title></rect>)",
                         num(x), num(y), num(bar_width), num(h), colour(s), xml_escape(bar.label),
                         xml_escape(chart.segments[s]), xml_escape(tick_label(bar.values[s])));
    }
    if (bar.reference > 0.0) {
      const double ry = bottom - height_of(bar.reference);
      out += fmt::format(
          R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#c00" stroke-width="2"><title>{}: {} {}</title></line>)",
          num(x - 4), num(ry), num(x + bar_width + 4), num(ry), xml_escape(bar.label),
          xml_escape(chart.reference_label), xml_escape(tick_label(bar.reference)));
    }
    const double cx = x + bar_width / 2;
    out += fmt::format(
        R"~(<text x="{0}" y="{1}" transform="rotate(-45 {0} {1})" text-anchor="end" font-size="10">{2}</text>)~",
        num(cx), num(bottom + 12), xml_escape(bar.label));
  }
  const double legend_x = kMarginLeft + plot_width + 30.0;
  for (std::size_t s = 0; s < chart.segments.size(); ++s) legend_entry(out, legend_x, s, colour(s), chart.segments[s]);
  if (chart.reference > 0.0) {
    const double y = bottom - height_of(chart.reference);
    out += fmt::format(
        R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#c00" stroke-width="1.5" stroke-dasharray="6 4"/>)",
        num(kMarginLeft), num(kMarginLeft + plot_width), num(y));
  }
  if (any_reference) {
    const double ly = kMarginTop + kLegendRow * static_cast<double>(chart.segments.size());
    out += fmt::format(
        R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#c00" stroke-width="1.5" stroke-dasharray="6 4"/>)",
        num(legend_x), num(legend_x + 12), num(ly + 6));
    out += fmt::format(R"(<text x="{}" y="{}" font-size="12">{}</text>)", num(legend_x + 18), num(ly + 10),
                       xml_escape(chart.reference_label));
  }
  if (shift > 0.0) out += "</g>";
  out += "</svg>";
  return out;
}

namespace {

/// A scatter marker: colour i % 10 and, so that groups past the palette stay apart, a circle,
/// square or diamond for each further round of the palette.
std::string marker(std::size_t i, double x, double y, const std::string& tooltip) {
  const char* fill = colour(i);
  const std::string title = tooltip.empty() ? std::string() : fmt::format("<title>{}</title>", xml_escape(tooltip));
  switch ((i / kPalette.size()) % 3) {
    case 0:
      return fmt::format(R"(<circle cx="{}" cy="{}" r="3.2" fill="{}" fill-opacity="0.85">{}</circle>)", num(x), num(y),
                         fill, title);
    case 1:
      return fmt::format(R"(<rect x="{}" y="{}" width="5.6" height="5.6" fill="{}" fill-opacity="0.85">{}</rect>)",
                         num(x - 2.8), num(y - 2.8), fill, title);
    default:
      return fmt::format(R"(<polygon points="{},{} {},{} {},{} {},{}" fill="{}" fill-opacity="0.85">{}</polygon>)",
                         num(x), num(y - 4), num(x + 4), num(y), num(x), num(y + 4), num(x - 4), num(y), fill, title);
  }
}

}  // namespace

std::string render_svg(const ScatterChart& chart) {
  constexpr double kSide = 400.0;  // a square plot, so y = x runs corner to corner
  // Past this many groups the legend names the first ones and the rest are named by hovering.
  constexpr std::size_t kLegendGroups = 24;
  const std::size_t named = std::min(chart.groups.size(), kLegendGroups);
  const bool more = chart.groups.size() > named;
  const std::size_t legend_rows = named + 2 + (more ? 1 : 0);  // + the y = x line and the band
  const double bottom = kMarginTop + kSide;
  const double height = std::max(bottom + 60.0, kMarginTop + static_cast<double>(legend_rows) * kLegendRow + 20.0);
  std::vector<std::string> names = {"y = x (no error)", "and 999 more groups (hover a point)"};
  for (std::size_t i = 0; i < named; ++i) names.push_back(chart.groups[i].name);
  const double width = with_title_room(kMarginLeft + kSide + 30.0 + legend_width(names), chart.title);

  // One decade-aligned range for both axes.
  double lo = 0.0;
  double hi = 0.0;
  bool any = false;
  for (const auto& g : chart.groups) {
    for (const auto& p : g.points) {
      STEPCAST_ASSERT(p.x > 0.0 && p.y > 0.0, "log axes need positive coordinates");
      lo = any ? std::min({lo, p.x, p.y}) : std::min(p.x, p.y);
      hi = any ? std::max({hi, p.x, p.y}) : std::max(p.x, p.y);
      any = true;
    }
  }
  const LogAxis axis = any ? log_axis(lo, hi) : log_axis(1.0, 10.0);
  const double a = axis.a;
  const double b = axis.b;
  const auto pos = [&](double v) { return kSide * (std::log10(v) - a) / (b - a); };
  const auto px = [&](double x) { return kMarginLeft + pos(x); };
  const auto py = [&](double y) { return bottom - pos(y); };

  std::string out = open_svg(width, height, chart.title);
  title(out, width, chart.title);
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>)", num(kMarginLeft),
                     num(kMarginTop), num(kSide), num(kSide));
  for (const double v : axis.ticks) {
    const std::string label = xml_escape(tick_label(v));
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/>)", num(px(v)), num(kMarginTop),
                       num(bottom));
    out += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#ddd"/>)", num(kMarginLeft),
                       num(kMarginLeft + kSide), num(py(v)));
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text>)", num(px(v)),
                       num(bottom + 16), label);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-size="11">{}</text>)", num(kMarginLeft - 6),
                       num(py(v) + 4), label);
  }

  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>)",
                     num(kMarginLeft + kSide / 2), num(bottom + 40), xml_escape(chart.x_label));
  out += fmt::format(
      R"~(<text x="16" y="{0}" transform="rotate(-90 16 {0})" text-anchor="middle" font-size="12">{1}</text>)~",
      num(kMarginTop + kSide / 2), xml_escape(chart.y_label));
  // y = x corner to corner; y = c x for c = 1 +- band, each from where it enters the square to where it leaves.
  const double x_lo = std::pow(10.0, a);
  const double x_hi = std::pow(10.0, b);
  const auto line = [&](double x1, double y1, double x2, double y2, bool dashed) {
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#555" stroke-width="1.2"{}/>)", num(px(x1)),
                       num(py(y1)), num(px(x2)), num(py(y2)), dashed ? R"( stroke-dasharray="6 4")" : "");
  };
  line(x_lo, x_lo, x_hi, x_hi, false);
  const double up = 1.0 + chart.band;
  const double down = 1.0 - chart.band;
  line(x_lo, x_lo * up, x_hi / up, x_hi, true);
  line(x_lo / down, x_lo, x_hi, x_hi * down, true);
  const double legend_x = kMarginLeft + kSide + 30.0;
  const auto legend_text = [&](std::size_t row, const std::string& text) {
    out += fmt::format(R"(<text x="{}" y="{}" font-size="12">{}</text>)", num(legend_x + 18),
                       num(kMarginTop + kLegendRow * static_cast<double>(row) + 10), xml_escape(text));
  };
  out += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#555" stroke-width="1.2"/>)", num(legend_x),
                     num(legend_x + 12), num(kMarginTop + 6));
  legend_text(0, "y = x (no error)");
  legend_entry(out, legend_x, 1, "#555", fmt::format("\xC2\xB1{:g}% error", 100.0 * chart.band), true);
  for (std::size_t i = 0; i < chart.groups.size(); ++i) {
    const auto& g = chart.groups[i];
    for (const auto& p : g.points) {
      out += marker(i, px(p.x), py(p.y),
                    fmt::format("{}: measured {}, predicted {}", g.name, tick_label(p.x), tick_label(p.y)));
    }
    if (i < named) {
      out += marker(i, legend_x + 6, kMarginTop + kLegendRow * static_cast<double>(i + 2) + 6, {});
      legend_text(i + 2, g.name);
    }
  }
  if (more) legend_text(named + 2, fmt::format("and {} more groups (hover a point)", chart.groups.size() - named));
  out += "</svg>";
  return out;
}

}  // namespace stepcast::report
