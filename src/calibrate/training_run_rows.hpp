// Private: the cells of a runs file before they are interpreted, the same for CSV and JSON, so
// that one set of rules reads both. Each row knows how to name its own location in errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepcast::calibrate::detail {

/// One run as written: the non-empty cells by column name, and where the row is.
struct RawRow {
  std::string file;
  int line = 0;         ///< CSV: the line number; 0 for JSON
  std::string pointer;  ///< JSON: "/runs/N"; empty for CSV
  std::vector<std::pair<std::string, std::string>> cells;

  /// The cell of `column`, or nothing when it is missing or empty.
  [[nodiscard]] std::optional<std::string_view> find(std::string_view column) const;
  /// "file:line" or "file:/runs/N".
  [[nodiscard]] std::string where() const;
  /// Throws InputError at this row (CSV: file:line; JSON: file:/runs/N/column) for `column`.
  [[noreturn]] void fail(std::string_view column, const std::string& message) const;
};

/// A whole file: its columns (CSV: the header; JSON: every key any run uses) and its rows.
struct RawTable {
  std::vector<std::string> columns;
  std::vector<RawRow> rows;
  int header_line = 0;  ///< CSV: the header's line, for errors about a column; 0 for JSON
};

/// Every column a runs file may have, in the order the README lists them.
const std::vector<std::string_view>& known_columns();

/// Reads CSV text (RFC 4180 quoting, '#' comment lines, blank lines skipped): the first other
/// line is the header. Unknown, empty or repeated column names and rows with the wrong number of
/// fields throw InputError at file:line.
RawTable read_runs_csv(std::string_view text, const std::string& file);

/// Reads JSON text {"source": "...", "runs": [{column: value, ...}, ...]}: strings, numbers and
/// booleans become the cell text, null an empty cell. Unknown keys throw InputError with the
/// JSON pointer.
RawTable read_runs_json(std::string_view text, const std::string& file);

}  // namespace stepcast::calibrate::detail
