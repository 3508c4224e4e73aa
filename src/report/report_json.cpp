// JSON: the report's tables as records keyed by column key, numbers rounded to "%.9g" first so
// the text does not depend on how a double's last bits came out.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/writers.hpp"

namespace stepcast::report {
namespace {

// nlohmann::ordered_json keeps keys in insertion order: rows read in column order.
using Json = nlohmann::ordered_json;

Json cell_json(const Cell& cell) {
  switch (cell.kind) {
    case Cell::Kind::kEmpty:
      return nullptr;
    case Cell::Kind::kText:
      return cell.text;
    case Cell::Kind::kInteger:
      return cell.integer;
    case Cell::Kind::kNumber:
      return std::stod(format_number(cell.number));
    case Cell::Kind::kFlag:
      return cell.flag;
  }
  STEPCAST_UNREACHABLE("every cell kind is handled");
}

}  // namespace

std::string render_json(const Report& report) {
  Json doc;
  doc["title"] = report.title;
  doc["notes"] = report.notes;
  doc["tables"] = Json::array();
  for (const auto& table : report.tables) {
    Json t;
    t["name"] = table.name();
    t["caption"] = table.caption();
    t["columns"] = Json::array();
    for (const auto& c : table.columns())
      t["columns"].push_back({{"key", c.key}, {"title", c.title}, {"unit", c.unit}});
    t["rows"] = Json::array();
    for (const auto& row : table.rows()) {
      Json r = Json::object();
      for (std::size_t c = 0; c < row.size(); ++c) r[table.columns()[c].key] = cell_json(row[c]);
      t["rows"].push_back(std::move(r));
    }
    doc["tables"].push_back(std::move(t));
  }
  return doc.dump(2) + "\n";
}

}  // namespace stepcast::report
