// Terminal text: aligned columns, numbers to the right, so a table reads down its digits.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

bool is_numeric(Cell::Kind kind) { return kind == Cell::Kind::kInteger || kind == Cell::Kind::kNumber; }

void append_table(std::string& out, const Table& table) {
  const auto& columns = table.columns();
  std::vector<std::vector<std::string>> text(table.rows().size(), std::vector<std::string>(columns.size()));
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = heading(columns[c]).size();
  for (std::size_t r = 0; r < table.rows().size(); ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      text[r][c] = display_text(table.rows()[r][c], columns[c]);
      width[c] = std::max(width[c], text[r][c].size());
    }
  }
  if (!table.caption().empty()) out += table.caption() + "\n";
  const auto line = [&](auto&& cell_of) {
    std::string row;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) row += "  ";
      const auto [s, right] = cell_of(c);
      row += right ? fmt::format("{:>{}}", s, width[c]) : fmt::format("{:<{}}", s, width[c]);
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  };
  line([&](std::size_t c) { return std::pair<std::string, bool>(heading(columns[c]), false); });
  line([&](std::size_t c) { return std::pair<std::string, bool>(std::string(width[c], '-'), false); });
  for (std::size_t r = 0; r < table.rows().size(); ++r) {
    line([&](std::size_t c) { return std::pair<std::string, bool>(text[r][c], is_numeric(table.rows()[r][c].kind)); });
  }
}

/// `note` broken at spaces into lines of at most `width` columns (a word longer than that stays
/// whole); continuation lines start with two spaces, and a command's broken lines end in " \".
std::string wrapped(const std::string& note, std::size_t width) {
  if (width == 0 || note.size() <= width) return note + "\n";
  const bool command = note.starts_with("command:");
  const std::string indent = "  ";
  const std::size_t room = command ? width - 2 : width;  // " \" at each broken line's end
  std::string out;
  std::string line;
  std::size_t at = 0;
  while (at < note.size()) {
    std::size_t end = note.find(' ', at + 1);
    if (end == std::string::npos) end = note.size();
    const std::string word = note.substr(at, end - at);  // with its leading space, but the first
    // Never inside a quoted value: the shell would keep the continuation's indent in it.
    const bool in_quotes = std::count(line.begin(), line.end(), '"') % 2 == 1;
    if (!line.empty() && line.size() + word.size() > room && !in_quotes) {
      out += line + (command ? " \\\n" : "\n");
      line = indent + word.substr(word.starts_with(' ') ? 1 : 0);
    } else {
      line += word;
    }
    at = end;
  }
  return out + line + "\n";
}

}  // namespace

std::string render_text(const Report& report) {
  std::string out;
  if (!report.title.empty()) out += report.title + "\n";
  for (const auto& note : report.notes) out += wrapped(note, report.text_width);
  for (const auto& table : report.tables) {
    if (!out.empty()) out += "\n";
    append_table(out, table);
  }
  return out;
}

}  // namespace stepcast::report
