// The predicted-against-measured scatter chart: positions on log axes derived by hand from the
// chart's geometry (a 400-unit square plot 90 units from the left and 50 from the top).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/report/chart.hpp"
#include "support/markup_check.hpp"

namespace scatter_chart_test {

using namespace stepcast::report;

TEST_SUITE("report.scatter_chart") {
  TEST_CASE("points sit on log axes spanning whole decades, y = x runs corner to corner") {
    ScatterChart chart;
    chart.title = "t";
    chart.groups = {{"a", {{0.5, 0.6}}}, {"b", {{20.0, 10.0}}}};
    const std::string svg = render_svg(chart);
    std::string why;
    CHECK_MESSAGE(stepcast::test::tags_balanced(svg, why), why);
    // Range: 0.5 and 20 lie in [10^-1, 10^2], three decades, so ticks only at decades.
    for (const char* tick : {">0.1<", ">1<", ">10<", ">100<"}) CHECK(stepcast::test::count_of(svg, tick) == 2);
    CHECK(svg.find(">0.2<") == std::string::npos);
    // (0.5, 0.6): x = 90 + 400 x (log10 0.5 + 1) / 3 = 183.20; y = 450 - 400 x (log10 0.6 + 1) / 3 = 346.25.
    CHECK(svg.find(R"(cx="183.20" cy="346.25")") != std::string::npos);
    // y = x from (0.1, 0.1) at the bottom left corner (90, 450) to (100, 100) at the top right (490, 50).
    CHECK(svg.find(R"(x1="90.00" y1="450.00" x2="490.00" y2="50.00")") != std::string::npos);
    // y = 1.1 x enters at x = 0.1 and leaves at x = 100 / 1.1: y1 = 450 - 400 x log10(1.1) / 3 = 444.48.
    CHECK(svg.find(R"(x1="90.00" y1="444.48")") != std::string::npos);
    // Group b is the second colour of the palette, in the plot and the legend.
    CHECK(stepcast::test::count_of(svg, R"(fill="#f28e2b")") == 2);
  }
}

}  // namespace scatter_chart_test
