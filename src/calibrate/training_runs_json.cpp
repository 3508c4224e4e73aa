// The JSON form of a runs file: {"source": "...", "runs": [{...}, ...]}, each run an object with
// the CSV's column names as keys, so both forms share one set of rules.
#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/json_reader.hpp"
#include "training_run_rows.hpp"

namespace stepcast::calibrate::detail {

namespace {

std::string cell_text(const JsonReader& value) {
  const nlohmann::json& j = value.json();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_integer()) return fmt::format("{}", j.get<std::int64_t>());
  if (j.is_number()) return fmt::format("{}", j.get<double>());
  value.fail(fmt::format("expected a string, number or boolean, got {}", j.type_name()));
}

}  // namespace

RawTable read_runs_json(std::string_view text, const std::string& file) {
  const nlohmann::json json = parse_json_text(text, file);
  const JsonReader root(json, file);
  root.check_keys({"source", "runs"});
  if (const auto source = root.find("source")) (void)source->string();
  RawTable table;
  const auto runs = root.at("runs").elements();
  if (runs.empty()) root.at("runs").fail("no runs: expected an array of run objects");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const JsonReader& run = runs[i];
    if (!run.json().is_object()) run.fail(fmt::format("expected a run object, got {}", run.json().type_name()));
    RawRow row;
    row.file = file;
    row.pointer = run.pointer();
    for (const auto& [key, value] : run.members()) {
      if (std::find(known_columns().begin(), known_columns().end(), key) == known_columns().end()) {
        std::string list;
        for (const std::string_view c : known_columns()) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
        value.fail(fmt::format("unknown key \"{}\" (known keys: {})", key, list));
      }
      if (std::find(table.columns.begin(), table.columns.end(), key) == table.columns.end())
        table.columns.push_back(key);
      if (value.json().is_null()) continue;
      std::string cell = cell_text(value);
      if (!cell.empty()) row.cells.emplace_back(key, std::move(cell));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace stepcast::calibrate::detail
