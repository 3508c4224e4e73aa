// The table model: typed cells, and the fixed rules by which numbers become text.
#include "stepcast/report/table.hpp"

#include <fmt/format.h>

#include <utility>

#include "stepcast/core/errors.hpp"

namespace stepcast::report {

Cell Cell::of_text(std::string value) {
  Cell c;
  c.kind = Kind::kText;
  c.text = std::move(value);
  return c;
}

Cell Cell::of_integer(std::int64_t value) {
  Cell c;
  c.kind = Kind::kInteger;
  c.integer = value;
  return c;
}

Cell Cell::of_number(double value) {
  Cell c;
  c.kind = Kind::kNumber;
  c.number = value;
  return c;
}

Cell Cell::of_flag(bool value) {
  Cell c;
  c.kind = Kind::kFlag;
  c.flag = value;
  return c;
}

Table::Table(std::string name, std::string caption, std::vector<Column> columns)
    : name_(std::move(name)), caption_(std::move(caption)), columns_(std::move(columns)) {}

void Table::add_row(std::vector<Cell> cells) {
  STEPCAST_ASSERT(cells.size() == columns_.size(), "a row holds one cell per column");
  rows_.push_back(std::move(cells));
}

std::string format_number(double value) {
  // fmt's 'g' with precision 9 is printf's %.9g; "-0" would differ from "0" only by sign.
  if (value == 0.0) return "0";
  return fmt::format("{:.9g}", value);
}

std::string display_text(const Cell& cell, const Column& column) {
  switch (cell.kind) {
    case Cell::Kind::kEmpty:
      return "";
    case Cell::Kind::kText:
      return cell.text;
    case Cell::Kind::kInteger:
      return fmt::format("{}", cell.integer);
    case Cell::Kind::kNumber:
      if (column.decimals < 0) return format_number(cell.number / column.scale);
      return fmt::format("{:.{}f}", cell.number / column.scale, column.decimals);
    case Cell::Kind::kFlag:
      return cell.flag ? "yes" : "no";
  }
  STEPCAST_UNREACHABLE("every cell kind is handled");
}

std::string machine_text(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::kEmpty:
      return "";
    case Cell::Kind::kText:
      return cell.text;
    case Cell::Kind::kInteger:
      return fmt::format("{}", cell.integer);
    case Cell::Kind::kNumber:
      return format_number(cell.number);
    case Cell::Kind::kFlag:
      return cell.flag ? "true" : "false";
  }
  STEPCAST_UNREACHABLE("every cell kind is handled");
}

std::string heading(const Column& column) {
  if (column.unit.empty()) return column.title;
  return fmt::format("{} [{}]", column.title, column.unit);
}

}  // namespace stepcast::report
