// The columns of an nccl-tests result table as its header line names them, and a result row read
// against them. nccl-tests' column set changed across versions; the .cpp lists the sets it reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/measurement.hpp"

namespace stepcast::calibrate::detail {

/// Where the values of one timing group (out-of-place or in-place) sit among a row's words.
struct TimingColumns {
  std::size_t time = 0;
  std::size_t algbw = 0;
  std::size_t busbw = 0;
  std::optional<std::size_t> check;  ///< "#wrong", "error" or "res"
};

/// What each word of a whole row of one table holds.
struct TableColumns {
  std::vector<std::string> names;  ///< one per word of a whole row (a timestamp takes two)
  std::size_t size = 0;
  std::size_t count = 0;
  std::optional<std::size_t> type;
  TimingColumns out_of_place;
  std::optional<TimingColumns> in_place;
  bool time_in_ms = false;  ///< the 2016-2017 column set printed milliseconds, later ones microseconds
};

/// The columns a result-table header names (its words after the "#": "size count type redop root
/// time algbw busbw #wrong time ..."); none when the words are not such a header.
std::optional<TableColumns> columns_of_header(const std::vector<std::string>& names);

/// A row read against its table: the point (line not set), or why the words are not one and
/// whether they look like a row cut off mid-line.
struct RowReading {
  std::optional<MeasuredPoint> point;
  bool cut_off = false;
  std::string why;
};

RowReading read_row(const std::vector<std::string>& words, const TableColumns& columns);

}  // namespace stepcast::calibrate::detail
