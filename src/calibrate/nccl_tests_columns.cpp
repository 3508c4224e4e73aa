// Result-table columns of NVIDIA/nccl-tests across its versions, as each prints its header:
// - 2016-2017 (a print_header per test): "bytes N type op [root] time algbw busbw res", twice
//   (out-of-place, in-place); time in milliseconds ("%7.3f" of deltaSec * 1.0E3), res the largest
//   error ("%7.0le", -1 when unchecked).
// - 2018-2021 (a print_header per test: all_reduce.cu "size count type redop", all_gather.cu
//   "size count type", broadcast.cu "size count type root", reduce.cu "size count type redop
//   root", then "time algbw busbw error" twice); time in microseconds, error the largest error
//   ("%5.0le", so validation reads 1e-07).
// - 2022 on (one header in src/common.cu): "size count type redop root time algbw busbw #wrong"
//   twice; #wrong counts wrong elements ("%5g", or N/A with -c 0); "cputime" for time with -C 1.
// - 2025 (src/util.cu writeResultHeader): "#bitdiff" after each #wrong (bitwise repeatability
//   check), "i_min i_max i_p99 i_cv%" (per-iteration timing), and a last "timestamp" whose value
//   is a date and a time, two words.
#include "nccl_tests_columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "nccl_tests_text.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::calibrate::detail {
namespace {

constexpr std::array<std::string_view, 2> kSizeNames{"size", "bytes"};
constexpr std::array<std::string_view, 2> kCountNames{"count", "N"};
constexpr std::array<std::string_view, 2> kTimeNames{"time", "cputime"};
constexpr std::array<std::string_view, 3> kCheckNames{"#wrong", "error", "res"};
constexpr std::string_view kNotAvailable = "N/A";

template <std::size_t N>
bool is_one_of(std::string_view word, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), word) != names.end();
}

// What a column holds, by its header name; columns stepcast does not read take any word.
enum class Kind { kCount, kInteger, kText, kTime, kBandwidth, kCheck, kAny };

Kind kind_of(std::string_view name) {
  if (is_one_of(name, kSizeNames) || is_one_of(name, kCountNames)) return Kind::kCount;
  if (name == "root") return Kind::kInteger;
  if (name == "type" || name == "redop" || name == "op") return Kind::kText;
  if (is_one_of(name, kTimeNames)) return Kind::kTime;
  if (name == "algbw" || name == "busbw") return Kind::kBandwidth;
  if (is_one_of(name, kCheckNames)) return Kind::kCheck;
  return Kind::kAny;
}

// Whether `word` can stand in a column of `kind`; `in_place` columns may read N/A (no in-place
// timing), as may every check column (validation off).
bool fits(Kind kind, const std::string& word, bool in_place) {
  const bool not_available = word == kNotAvailable;
  switch (kind) {
    case Kind::kCount:
      return to_integer(word).value_or(-1) >= 0;
    case Kind::kInteger:
      return to_integer(word).has_value();
    case Kind::kText:
      return !to_number(word).has_value();
    case Kind::kTime:
    case Kind::kBandwidth:
      return to_number(word).value_or(-1.0) >= 0.0 || (in_place && not_available);
    case Kind::kCheck:
      return to_number(word).has_value() || not_available;
    case Kind::kAny:
      return true;
  }
  return false;
}

std::string_view expected_of(Kind kind) {
  switch (kind) {
    case Kind::kCount:
      return "a whole number of bytes or elements";
    case Kind::kInteger:
      return "a whole number";
    case Kind::kText:
      return "a name such as float or sum";
    case Kind::kTime:
      return "a time as a non-negative number";
    case Kind::kBandwidth:
      return "a bandwidth in GB/s as a non-negative number";
    case Kind::kCheck:
      return "a number or N/A";
    case Kind::kAny:
      break;
  }
  return "anything";
}

// A timing group being read off the header: set fields are word positions.
struct OpenGroup {
  std::size_t time = 0;
  std::optional<std::size_t> algbw;
  std::optional<std::size_t> busbw;
  std::optional<std::size_t> check;
};

std::optional<TimingColumns> complete(const OpenGroup& g) {
  if (!g.algbw || !g.busbw) return std::nullopt;
  return TimingColumns{g.time, *g.algbw, *g.busbw, g.check};
}

// The timing of a group whose words fit their columns; none where the group reads N/A.
std::optional<MeasuredTiming> read_timing(const std::vector<std::string>& words, const TimingColumns& at,
                                          double seconds_per_unit) {
  for (std::size_t i : {at.time, at.algbw, at.busbw}) {
    if (words[i] == kNotAvailable) return std::nullopt;
  }
  MeasuredTiming t;
  t.time = Seconds(*to_number(words[at.time]) * seconds_per_unit);
  // nccl-tests prints bandwidths in GB/s (1e9 B/s) in every version.
  t.algbw = gbyte_per_s(*to_number(words[at.algbw]));
  t.busbw = gbyte_per_s(*to_number(words[at.busbw]));
  if (at.check && words[*at.check] != kNotAvailable) {
    const double check = *to_number(words[*at.check]);
    if (check >= 0.0) t.wrong = check;
  }
  return t;
}

}  // namespace

std::optional<TableColumns> columns_of_header(const std::vector<std::string>& names) {
  if (names.empty() || !is_one_of(names.front(), kSizeNames)) return std::nullopt;
  TableColumns c;
  std::optional<std::size_t> count;
  std::vector<OpenGroup> groups;
  for (const std::string& name : names) {
    const std::size_t at = c.names.size();
    c.names.push_back(name);
    if (name == "timestamp") c.names.push_back(name);  // "2025-10-14 12:00:00"
    if (is_one_of(name, kTimeNames)) {
      groups.push_back({at, {}, {}, {}});
    } else if (!groups.empty()) {
      OpenGroup& g = groups.back();
      if (name == "algbw" && !g.algbw) g.algbw = at;
      if (name == "busbw" && !g.busbw) g.busbw = at;
      if (kind_of(name) == Kind::kCheck && !g.check) g.check = at;
    } else if (is_one_of(name, kCountNames) && !count) {
      count = at;
    } else if (name == "type" && !c.type) {
      c.type = at;
    }
  }
  if (!count || groups.empty() || !complete(groups.front())) return std::nullopt;
  c.count = *count;
  c.out_of_place = *complete(groups.front());
  if (groups.size() > 1) c.in_place = complete(groups[1]);
  c.time_in_ms = names.front() == "bytes";
  return c;
}

RowReading read_row(const std::vector<std::string>& words, const TableColumns& c) {
  const std::size_t want = c.names.size();
  const std::size_t have = words.size();
  if (have == 0) return {std::nullopt, false, "an empty line"};
  const std::string columns = fmt::format("{}", fmt::join(c.names, " "));
  const std::size_t in_place_from = c.in_place ? c.in_place->time : want;
  const auto fits_at = [&](std::size_t i) { return fits(kind_of(c.names[i]), words[i], i >= in_place_from); };
  for (std::size_t i = 0; i < std::min(have, want); ++i) {
    if (fits_at(i)) continue;
    if (i + 1 == have) {  // the line ends inside this value
      return {std::nullopt, true,
              fmt::format("a result row cut off in its column {} of {} ({})", i + 1, want, columns)};
    }
    return {std::nullopt, false,
            fmt::format("not a whole result row: column {} ({}) reads \"{}\" where {} is expected", i + 1, c.names[i],
                        words[i], expected_of(kind_of(c.names[i])))};
  }
  if (have > want) {
    return {std::nullopt, false,
            fmt::format("not a result row: {} words where the table has {} columns ({})", have, want, columns)};
  }
  if (have < want) {
    return {std::nullopt, true,
            fmt::format("a result row cut off after {} of its {} columns ({})", have, want, columns)};
  }
  const double seconds_per_unit = c.time_in_ms ? 1.0 / unit::kKilo : 1.0 / unit::kMega;
  MeasuredPoint p;
  p.size = Bytes(static_cast<double>(*to_integer(words[0])));
  p.count = *to_integer(words[c.count]);
  if (c.type) p.type = words[*c.type];
  // Out-of-place columns never fit N/A, so the group reads.
  p.out_of_place = *read_timing(words, c.out_of_place, seconds_per_unit);
  if (c.in_place) p.in_place = read_timing(words, *c.in_place, seconds_per_unit);
  return {std::move(p), false, {}};
}

}  // namespace stepcast::calibrate::detail
