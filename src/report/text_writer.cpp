// Terminal text: aligned columns, numbers to the right, so a table reads down its digits.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

bool is_numeric(Cell::Kind kind) { return kind == Cell::Kind::kInteger || kind == Cell::Kind::kNumber; }

/// `text` broken after commas into lines of at most `width` columns (a part longer stays whole):
/// a plan's keys stay whole and the first line still reads as the plan's start.
std::vector<std::string> broken_at_commas(const std::string& text, std::size_t width) {
  std::vector<std::string> lines(1);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::size_t end = comma == std::string::npos ? text.size() : comma + 1;
    const std::string part = text.substr(at, end - at);
    if (!lines.back().empty() && lines.back().size() + part.size() > width) lines.emplace_back();
    lines.back() += part;
    at = end;
  }
  return lines;
}

/// The table's columns aligned; with `max_width` > 0 and a wider table, the widest text column's
/// cells are broken after commas onto continuation lines so the table fits.
void append_table(std::string& out, const Table& table, std::size_t max_width) {
  const auto& columns = table.columns();
  const std::size_t rows = table.rows().size();
  std::vector<std::vector<std::string>> text(rows, std::vector<std::string>(columns.size()));
  std::vector<std::size_t> width(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) width[c] = heading(columns[c]).size();
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      text[r][c] = display_text(table.rows()[r][c], columns[c]);
      width[c] = std::max(width[c], text[r][c].size());
    }
  }
  // Each cell as lines: one, unless the table is too wide for max_width.
  std::vector<std::vector<std::vector<std::string>>> lines(rows, std::vector<std::vector<std::string>>(columns.size()));
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) lines[r][c] = {text[r][c]};
  }
  std::size_t total = 2 * (columns.empty() ? 0 : columns.size() - 1);
  for (const std::size_t w : width) total += w;
  std::size_t widest = columns.size();
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const bool texts = std::all_of(table.rows().begin(), table.rows().end(),
                                   [c](const auto& row) { return !is_numeric(row[c].kind); });
    if (texts && (widest == columns.size() || width[c] > width[widest])) widest = c;
  }
  if (max_width > 0 && total > max_width && widest < columns.size() && total - width[widest] < max_width) {
    const std::size_t room = std::max(heading(columns[widest]).size(), max_width - (total - width[widest]));
    width[widest] = heading(columns[widest]).size();
    for (std::size_t r = 0; r < rows; ++r) {
      lines[r][widest] = broken_at_commas(text[r][widest], room);
      for (const std::string& l : lines[r][widest]) width[widest] = std::max(width[widest], l.size());
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
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t height = 1;
    for (const auto& cell : lines[r]) height = std::max(height, cell.size());
    for (std::size_t i = 0; i < height; ++i) {
      line([&](std::size_t c) {
        const auto& cell = lines[r][c];
        return std::pair<std::string, bool>(i < cell.size() ? cell[i] : std::string(),
                                            is_numeric(table.rows()[r][c].kind));
      });
    }
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
    append_table(out, table, report.text_width);
  }
  return out;
}

}  // namespace stepcast::report
