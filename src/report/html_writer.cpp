// A self-contained HTML5 page: inline CSS, tables, and inline SVG charts. No scripts, fonts or
// URLs, so the page opens offline and shows the same thing in every browser.
#include <cstddef>

#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222}"
    // A table wider than the window scrolls inside its box instead of widening the page.
    ".scroll{max-width:100%;overflow-x:auto;margin:8px 0 24px 0}"
    "table{border-collapse:collapse;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 8px}"
    "th{background:#f0f0f0}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "figure{margin:16px 0;max-width:100%;overflow-x:auto}"
    ".notes{font-family:monospace;font-size:12px;white-space:pre-wrap;background:#f7f7f7;padding:8px}";

void append_table(std::string& out, const Table& table) {
  if (!table.caption().empty()) out += "<h2>" + xml_escape(table.caption()) + "</h2>\n";
  out += "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const auto& c : table.columns()) out += "<th>" + xml_escape(heading(c)) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows()) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool numeric = row[c].kind == Cell::Kind::kInteger || row[c].kind == Cell::Kind::kNumber;
      out += numeric ? "<td class=\"n\">" : "<td>";
      out += xml_escape(display_text(row[c], table.columns()[c])) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table></div>\n";
}

}  // namespace

std::string render_html(const Report& report) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                    xml_escape(report.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>" + xml_escape(report.title) + "</h1>\n";
  if (!report.notes.empty()) {
    out += "<div class=\"notes\">";
    for (std::size_t i = 0; i < report.notes.size(); ++i) out += (i > 0 ? "\n" : "") + xml_escape(report.notes[i]);
    out += "</div>\n";
  }
  // The answer first: the tables, then the charts that picture them.
  for (const auto& table : report.tables) append_table(out, table);
  for (const auto& chart : report.line_charts) out += "<figure>" + render_svg(chart) + "</figure>\n";
  for (const auto& chart : report.bar_charts) out += "<figure>" + render_svg(chart) + "</figure>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace stepcast::report
