// A small table model shared by every report format: named columns with units, rows of typed
// cells, grouped into a Report with a title, notes (such as the command line) and charts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/report/chart.hpp"

namespace stepcast::report {

/// One column. `key` names it in CSV and JSON and carries the SI unit as a suffix
/// (`step_time_s`, `memory_bytes`; STYLE.md B3, B5); cells hold SI values. `title` and `unit`
/// are what people read in text, Markdown and HTML, where numbers are shown divided by `scale`.
struct Column {
  std::string key;    ///< machine name, snake_case with a unit suffix
  std::string title;  ///< human name, e.g. "step time"
  std::string unit;   ///< unit people read, e.g. "s", "GiB", "%"; empty for counts and text
  /// Digits after the point in text, Markdown and HTML; -1 prints "%.9g". CSV and JSON always
  /// print "%.9g" so machines get every significant digit that the model has.
  int decimals = -1;
  /// People read value / scale in `unit`: unit::kGibi for bytes shown in GiB, 0.01 for a ratio
  /// shown in %. Machines read the SI value.
  double scale = 1.0;
};

/// One cell of a row: nothing, text, an integer, a number or a yes/no flag.
struct Cell {
  enum class Kind { kEmpty, kText, kInteger, kNumber, kFlag };
  Kind kind = Kind::kEmpty;
  std::string text;
  std::int64_t integer = 0;
  double number = 0.0;
  bool flag = false;

  static Cell empty() { return {}; }
  static Cell of_text(std::string value);
  static Cell of_integer(std::int64_t value);
  static Cell of_number(double value);
  static Cell of_flag(bool value);
};

/// A table: columns and rows with one cell per column.
class Table {
 public:
  Table(std::string name, std::string caption, std::vector<Column> columns);

  /// Appends a row; it must hold exactly one cell per column.
  void add_row(std::vector<Cell> cells);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& caption() const { return caption_; }
  [[nodiscard]] const std::vector<Column>& columns() const { return columns_; }
  [[nodiscard]] const std::vector<std::vector<Cell>>& rows() const { return rows_; }

 private:
  std::string name_;     ///< machine name (JSON key)
  std::string caption_;  ///< human heading
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

/// A whole report: what every writer renders.
struct Report {
  std::string title;
  /// Lines printed above the tables, e.g. "command: stepcast table ..." and the inputs.
  std::vector<std::string> notes;
  std::vector<Table> tables;
  std::vector<LineChart> line_charts;  ///< drawn only by the HTML writer
  std::vector<BarChart> bar_charts;    ///< drawn only by the HTML writer
  /// Terminal text wraps its notes at this many columns (0: never); a "command:" note wraps as a
  /// shell command, with " \" at the end of each broken line.
  std::size_t text_width = 0;
};

/// "%.9g": the one rule for printing a double where machines read it (STYLE.md B6).
std::string format_number(double value);
/// A cell as people read it: numbers with the column's decimals, flags as yes/no.
std::string display_text(const Cell& cell, const Column& column);
/// A cell as machines read it: numbers as "%.9g", flags as true/false, empty as "".
std::string machine_text(const Cell& cell);
/// "title [unit]", or the title alone when there is no unit.
std::string heading(const Column& column);

}  // namespace stepcast::report
