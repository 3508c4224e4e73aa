// The CSV form of a runs file: a header of known column names, then one run per line, fields
// quoted as RFC 4180 does (a plan such as "tp=2,pp=2" holds commas); '#' starts a comment line.
#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/text.hpp"
#include "training_run_rows.hpp"

namespace stepcast::calibrate::detail {

namespace {

std::string column_list() {
  std::string out;
  for (const std::string_view c : known_columns()) out += fmt::format("{}{}", out.empty() ? "" : ", ", c);
  return out;
}

/// The fields of one line; quoted fields keep their commas and turn "" into ".
std::vector<std::string> split_fields(std::string_view line, const std::string& file, int line_no) {
  const auto fail = [&](const std::string& message) { throw InputError(file, std::to_string(line_no), message); };
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      const std::size_t opened = i + 1;
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += line[i++];
      }
      if (!closed)
        fail(fmt::format("field {} opens a quote at column {} that the line never closes", fields.size() + 1, opened));
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',') {
        fail(fmt::format("field {} has text after its closing quote (quote the whole field, as \"tp=2,pp=2\")",
                         fields.size() + 1));
      }
    } else {
      const std::size_t end = std::min(line.find(',', i), line.size());
      const std::string_view raw = trim(line.substr(i, end - i));
      if (raw.find('"') != std::string_view::npos) {
        fail(fmt::format("field {} has a quote inside an unquoted value (quote the whole field and double the quote)",
                         fields.size() + 1));
      }
      field = std::string(raw);
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

}  // namespace

const std::vector<std::string_view>& known_columns() {
  static const std::vector<std::string_view> all = {
      "run", "group", "source", "note",
      // the model: a shipped name or a path, or its shape
      "workload", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "gated_mlp", "tied_embeddings", "biases",
      "learned_positions", "rotary", "dropout", "norm",
      // the cluster and the plan
      "topology", "nodes", "gpus", "gpus_per_domain", "plan", "global_batch", "seq_len", "precision",
      "fsdp_mixed_precision",
      // what was measured
      "step_time", "tokens_per_s", "tokens_per_s_per_gpu", "model_flops_per_gpu", "hardware_flops_per_gpu", "mfu",
      "hfu", "peak_memory_per_gpu"};
  return all;
}

std::optional<std::string_view> RawRow::find(std::string_view column) const {
  for (const auto& [name, text] : cells) {
    if (name == column) return std::string_view(text);
  }
  return std::nullopt;
}

std::string RawRow::where() const {
  return pointer.empty() ? fmt::format("{}:{}", file, line) : fmt::format("{}:{}", file, pointer);
}

void RawRow::fail(std::string_view column, const std::string& message) const {
  if (!pointer.empty())
    throw InputError(file, column.empty() ? pointer : fmt::format("{}/{}", pointer, column), message);
  throw InputError(file, std::to_string(line), column.empty() ? message : fmt::format("{}: {}", column, message));
}

RawTable read_runs_csv(std::string_view text, const std::string& file) {
  RawTable table;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    std::vector<std::string> fields = split_fields(line, file, line_no);
    if (table.header_line == 0) {
      table.header_line = line_no;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string& name = fields[i];
        const auto fail = [&](const std::string& message) { throw InputError(file, std::to_string(line_no), message); };
        if (name.empty()) fail(fmt::format("header field {} is empty (every column needs a name)", i + 1));
        if (std::find(known_columns().begin(), known_columns().end(), name) == known_columns().end()) {
          fail(fmt::format("unknown column \"{}\" (known columns: {})", name, column_list()));
        }
        if (std::find(table.columns.begin(), table.columns.end(), name) != table.columns.end()) {
          fail(fmt::format("column \"{}\" appears twice in the header", name));
        }
        table.columns.push_back(name);
      }
      continue;
    }
    if (fields.size() != table.columns.size()) {
      throw InputError(file, std::to_string(line_no),
                       fmt::format("{} fields, but the header (line {}) names {} columns", fields.size(),
                                   table.header_line, table.columns.size()));
    }
    RawRow row;
    row.file = file;
    row.line = line_no;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i].empty()) row.cells.emplace_back(table.columns[i], std::move(fields[i]));
    }
    table.rows.push_back(std::move(row));
  }
  if (table.header_line == 0) {
    // An empty file has no line to point at: line 1 is where its header belongs.
    const bool blank = text.find_first_not_of(" \t\r\n") == std::string_view::npos;
    throw InputError(
        file, blank ? "1" : std::to_string(line_no),
        fmt::format("{}: expected a header of column names (workload, topology, plan, ...) and one run per line",
                    blank ? "the file is empty" : "only comments"));
  }
  if (table.rows.empty()) {
    throw InputError(file, std::to_string(table.header_line),
                     "a header but no runs: expected one run per line after it");
  }
  return table;
}

}  // namespace stepcast::calibrate::detail
