// The report writers: each format parses back with an independent reader, and numbers follow
// the fixed printing rules.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/writers.hpp"
#include "support/markup_check.hpp"

namespace writers_test {

using namespace stepcast;
using namespace stepcast::report;

namespace {

// A report with every cell kind and the characters each format must escape.
Report sample() {
  Report r;
  r.title = "Sample <report> & more";
  r.notes = {"command: stepcast table --gpus 8,16", "a note with | pipe"};
  Table t("cells", "Cells of every kind",
          {{"name", "name", "", -1},
           {"gpus", "GPUs", "", -1},
           {"step_time_s", "step time", "s", 3},
           {"fits", "fits", "", -1}});
  t.add_row({Cell::of_text("plain"), Cell::of_integer(8), Cell::of_number(1.23456), Cell::of_flag(true)});
  t.add_row({Cell::of_text("comma, \"quoted\" | pipe"), Cell::of_integer(1024), Cell::of_number(0.1 + 0.2),
             Cell::of_flag(false)});
  t.add_row({Cell::of_text("line\nbreak"), Cell::empty(), Cell::of_number(12345.678), Cell::of_flag(true)});
  r.tables.push_back(t);
  LineChart line{
      "tokens/s", "GPUs", "tokens/s", true, {{"p4d", {{8, 100}, {16, 190}, {32, 350}}}, {"p5", {{8, 300}, {16, 580}}}}};
  r.line_charts.push_back(line);
  BarChart bars{"memory", "GiB", {"parameters", "activations"}, {{"a <b>", {10, 20}}, {"c", {5, 1}}}, 40, "GPU memory"};
  r.bar_charts.push_back(bars);
  r.bar_charts.push_back(BarChart{"time", "s", {"compute"}, {{"x", {1}}}, 0, ""});
  return r;
}

}  // namespace

TEST_SUITE("report.writers") {
  TEST_CASE("numbers print as %.9g: 0.1+0.2 is 0.3, zero has no sign") {
    // printf("%.9g", 0.30000000000000004) == "0.3"; %.9g keeps 9 significant digits.
    CHECK(format_number(0.1 + 0.2) == "0.3");
    CHECK(format_number(-0.0) == "0");
    CHECK(format_number(123456789012.0) == "1.23456789e+11");
    CHECK(format_number(1.0 / 3.0) == "0.333333333");
  }

  TEST_CASE("CSV: header of keys, one RFC 4180 record per row, quotes doubled, CRLF") {
    bool ok = false;
    const auto records = test::parse_csv(render_csv(sample()), ok);
    REQUIRE(ok);
    REQUIRE(records.size() == 4);
    for (const auto& rec : records) CHECK(rec.size() == 4);
    CHECK(records[0] == std::vector<std::string>{"name", "gpus", "step_time_s", "fits"});
    CHECK(records[1] == std::vector<std::string>{"plain", "8", "1.23456", "true"});
    CHECK(records[2][0] == "comma, \"quoted\" | pipe");
    CHECK(records[2][2] == "0.3");
    CHECK(records[3][0] == "line\nbreak");
    CHECK(records[3][1].empty());
  }

  TEST_CASE("JSON: parses, rows keyed by column key, numbers and flags typed, empty is null") {
    const auto doc = nlohmann::json::parse(render_json(sample()));
    CHECK(doc["title"] == "Sample <report> & more");
    CHECK(doc["notes"].size() == 2);
    const auto& t = doc["tables"][0];
    CHECK(t["name"] == "cells");
    CHECK(t["columns"][2]["unit"] == "s");
    REQUIRE(t["rows"].size() == 3);
    CHECK(t["rows"][0]["gpus"] == 8);
    CHECK(t["rows"][0]["step_time_s"].get<double>() == doctest::Approx(1.23456));
    CHECK(t["rows"][0]["fits"] == true);
    CHECK(t["rows"][2]["gpus"].is_null());
  }

  TEST_CASE("Markdown: every table line has one more pipe than columns, numeric columns right-aligned") {
    const std::string md = render_markdown(sample());
    CHECK(md.rfind("# Sample <report> & more\n", 0) == 0);
    std::size_t table_lines = 0;
    std::size_t start = 0;
    while (start < md.size()) {
      const std::size_t end = md.find('\n', start);
      const std::string line = md.substr(start, end - start);
      start = end + 1;
      if (line.empty() || line[0] != '|') continue;
      ++table_lines;
      std::size_t pipes = 0;
      for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++pipes;
      }
      CHECK_MESSAGE(pipes == 5, line);
    }
    CHECK(table_lines == 2 + 3);  // header, rule, three rows
    // gpus holds integers and one empty cell, step time numbers: both right-aligned.
    CHECK(md.find("| --- | ---: | ---: | --- |") != std::string::npos);
  }

  TEST_CASE("text: columns aligned, numbers right-aligned with the column's decimals") {
    const std::string text = render_text(sample());
    // "step time [s]" is 13 wide; 12345.678 with 3 decimals is "12345.678" (9), right-aligned.
    CHECK(text.find("    1.235") != std::string::npos);
    CHECK(text.find("12345.678") != std::string::npos);
    CHECK(text.find("name") != std::string::npos);
  }

  TEST_CASE("text: a table wider than the report's width breaks its widest text column after commas") {
    Report r;
    r.text_width = 30;
    Table t("plans", "", {{"rank", "#", "", -1}, {"plan", "plan", "", -1}, {"step_time_s", "step", "s", 1}});
    t.add_row({Cell::of_integer(1), Cell::of_text("dp=2,tp=4,pp=64,zero=1,sp=on,cp=2"), Cell::of_number(12.3)});
    t.add_row({Cell::of_integer(2), Cell::of_text("dp=8"), Cell::of_number(9.0)});
    r.tables.push_back(t);
    // Room for the plan: 30 - ("#" 1 + "step [s]" 8 + two gaps of 2) = 17 columns: "dp=2,tp=4,pp=64,"
    // (16) and "zero=1,sp=on,cp=2" (17); the figures stay on the row's first line.
    CHECK(render_text(r) ==
          "#  plan               step [s]\n"
          "-  -----------------  --------\n"
          "1  dp=2,tp=4,pp=64,       12.3\n"
          "   zero=1,sp=on,cp=2\n"
          "2  dp=8                    9.0\n");
  }

  TEST_CASE("HTML: well-formed, one <svg> per chart, no scripts or external URLs") {
    const Report r = sample();
    const std::string html = render_html(r);
    std::string why;
    CHECK_MESSAGE(test::tags_balanced(html, why), why);
    CHECK(test::count_of(html, "<svg ") == r.line_charts.size() + r.bar_charts.size());
    CHECK(test::count_of(html, "<script") == 0);
    CHECK(test::count_of(html, "href=") == 0);
    CHECK(test::count_of(html, "src=") == 0);
    // Only the SVG namespace may look like a URL.
    CHECK(test::count_of(html, "http") == test::count_of(html, "http://www.w3.org/2000/svg"));
    CHECK(html.find("Sample &lt;report&gt; &amp; more") != std::string::npos);
    CHECK(html.find("a &lt;b&gt;") != std::string::npos);
  }

  TEST_CASE("bar chart: the axis tops at the next round number above the tallest stack") {
    // Stacks are 30 and 6 with a 40 reference line, so the axis must reach 40. Round tops are
    // {1, 2, 2.5, 5, 10} x 10^k; the smallest >= 40 is 5 x 10 = 50 (ticks 0, 10, ..., 50).
    const std::string svg = render_svg(sample().bar_charts[0]);
    CHECK(svg.find(">50</text>") != std::string::npos);
    CHECK(svg.find(">60</text>") == std::string::npos);
  }

  TEST_CASE("line chart: the y axis turns to decades when the values span ten times or more") {
    // 8 to 512 GPUs at 20k tokens/s each: 160k to 10.24M, a 64x span. Decade ticks from 10^5 to
    // 10^8 read 100k, 1M, 10M, 100M (k and M for thousands and millions, not "1e+06").
    LineChart wide{"tokens/s", "GPUs", "tokens/s", true, {{"a", {{8, 160e3}, {64, 1.28e6}, {512, 10.24e6}}}}};
    const std::string svg = render_svg(wide);
    CHECK(svg.find("tokens/s (log scale)") != std::string::npos);
    for (const char* tick : {">100k</text>", ">1M</text>", ">10M</text>", ">100M</text>"})
      CHECK(svg.find(tick) != std::string::npos);
    CHECK(svg.find("e+0") == std::string::npos);
    // The sample's 100 to 580 spans less than ten times: linear, from 0.
    const std::string narrow = render_svg(sample().line_charts[0]);
    CHECK(narrow.find("(log scale)") == std::string::npos);
    CHECK(narrow.find(">0</text>") != std::string::npos);
  }

  TEST_CASE("bar chart: a bar's own reference is a mark across it, named in the legend") {
    BarChart bars{"memory", "GiB", {"state"}, {{"A100 40GB", {30}, 40}, {"H100 80GB", {50}, 80}}, 0, "GPU memory"};
    const std::string svg = render_svg(bars);
    CHECK(svg.find("<title>A100 40GB: GPU memory 40</title>") != std::string::npos);
    CHECK(svg.find("<title>H100 80GB: GPU memory 80</title>") != std::string::npos);
    CHECK(svg.find(">GPU memory</text>") != std::string::npos);
    // The axis reaches the larger reference (80), whose round top is 100.
    CHECK(svg.find(">100</text>") != std::string::npos);
  }

  TEST_CASE("format names: accepted spellings, and a clear error for others") {
    CHECK(parse_format("md", "--format") == Format::kMarkdown);
    CHECK(parse_format("html", "--format") == Format::kHtml);
    try {
      (void)parse_format("xlsx", "--format");
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == "--format: unknown format \"xlsx\" (accepted: text, markdown, csv, json, html)");
    }
  }
}

}  // namespace writers_test
