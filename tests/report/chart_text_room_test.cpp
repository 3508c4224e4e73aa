// Charts a reader sees whole: x ticks on the points a capacity table plots (GPU counts that are no
// powers of two), titles and legends that widen the chart instead of running past its edge, and
// rotated bar labels shifted in from the left edge. (rendered_reports.py checks the committed
// reports in a browser; these check the rules on small charts.)
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <string>

#include "stepcast/report/chart.hpp"

namespace chart_text_room_test {

using namespace stepcast::report;

namespace {

/// The numbers of attribute `name` in the elements of `svg` that start with `tag`.
std::set<std::string> attributes(const std::string& svg, const std::string& tag, const std::string& name) {
  std::set<std::string> out;
  const std::regex re("<" + tag + R"([^>]* )" + name + R"re(="([-0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

double svg_width(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*width="([0-9.]+)")re")));
  return std::stod(m[1]);
}

}  // namespace

TEST_SUITE("report.chart_text_room") {
  TEST_CASE("a log2 axis of 144, 288, 576 and 1152 GPUs ticks at the points, not at 128, 256, 512, 1024") {
    LineChart chart{"tokens/s", "GPUs", "tokens/s", true, {{"a", {{144, 1e5}, {288, 2e5}, {576, 4e5}, {1152, 8e5}}}}};
    const std::string svg = render_svg(chart);
    for (const char* tick : {">144</text>", ">288</text>", ">576</text>", ">1152</text>"})
      CHECK(svg.find(tick) != std::string::npos);
    CHECK(svg.find(">128</text>") == std::string::npos);
    // Each point's x is a tick label's x.
    const std::set<std::string> ticks = attributes(svg, "text", "x");
    for (const std::string& cx : attributes(svg, "circle", "cx")) {
      CAPTURE(cx);
      CHECK(ticks.count(cx) == 1);
    }
  }

  TEST_CASE("a title longer than the plot widens the chart: 0.6 em a character, 10% more in bold, 8 px a side") {
    const std::string title(150, 'x');
    LineChart chart{title, "GPUs", "tokens/s", true, {{"a", {{8, 1.0}, {16, 2.0}}}}};
    // 150 characters x 0.6 x 15 px x 1.1 = 1485 px, plus 16: wider than the 900 px plot and legend.
    CHECK(svg_width(render_svg(chart)) >= 1501.0);
    // A legend name of 60 characters at 12 px (432 px) widens the legend past its 260 px.
    LineChart named{"t", "x", "y", false, {{std::string(60, 'n'), {{1, 1.0}, {2, 2.0}}}}};
    CHECK(svg_width(render_svg(named)) >= 90.0 + 520.0 + 30.0 + 18.0 + 432.0 + 8.0);
  }

  TEST_CASE("a long label of the first bar shifts the chart right instead of running past x = 0") {
    // 40 characters at 10 px: 240 px wide, 0.7071 x 240 = 169.70 px left of its anchor at 45
    // degrees; the first bar's anchor is at 90 + 10 + 17 = 117 px: the chart moves 169.70 - 117 + 4.
    BarChart bars{"memory", "GiB", {"state"}, {{std::string(40, 'b'), {30}, 0}}, 0, ""};
    const std::string svg = render_svg(bars);
    CHECK(svg.find(R"~(<g transform="translate(56.70 0)">)~") != std::string::npos);
  }
}

}  // namespace chart_text_room_test
