// Markdown: GitHub-flavoured pipe tables, numeric columns right-aligned, pipes in cells escaped.
#include <fmt/format.h>

#include <cstddef>

#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

std::string escape_cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n' || ch == '\r')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

bool numeric_column(const Table& table, std::size_t c) {
  for (const auto& row : table.rows()) {
    const auto kind = row[c].kind;
    if (kind == Cell::Kind::kText || kind == Cell::Kind::kFlag) return false;
  }
  return !table.rows().empty();
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::string out;
  if (!report.title.empty()) out += "# " + report.title + "\n\n";
  for (const auto& note : report.notes) out += "- " + escape_cell(note) + "\n";
  if (!report.notes.empty()) out += "\n";
  for (const auto& table : report.tables) {
    if (!table.caption().empty()) out += "## " + table.caption() + "\n\n";
    const auto& columns = table.columns();
    std::string head = "|";
    std::string rule = "|";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      head += " " + escape_cell(heading(columns[c])) + " |";
      rule += numeric_column(table, c) ? " ---: |" : " --- |";
    }
    out.append(head).append("\n").append(rule).append("\n");
    for (const auto& row : table.rows()) {
      std::string line = "|";
      for (std::size_t c = 0; c < columns.size(); ++c)
        line += " " + escape_cell(display_text(row[c], columns[c])) + " |";
      out += line + "\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace stepcast::report
