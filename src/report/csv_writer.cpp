// CSV as RFC 4180 defines it: CRLF record ends, fields with comma, quote, CR or LF quoted and
// their quotes doubled (section 2, rules 6 and 7).
#include <cstddef>

#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

std::string field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string render_csv(const Report& report) {
  if (report.tables.empty()) return "";
  const Table& table = report.tables.front();
  std::string out;
  for (std::size_t c = 0; c < table.columns().size(); ++c) {
    if (c > 0) out += ',';
    out += field(table.columns()[c].key);
  }
  out += "\r\n";
  for (const auto& row : table.rows()) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += ',';
      out += field(machine_text(row[c]));
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace stepcast::report
