// Reading `stepcast operators --format json` output: the report's "operators" table.
#include "kernel_bench_list.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace stepcast::validate {
namespace {

constexpr int kBadInput = 2;

[[noreturn]] void refuse(const std::string& where, const std::string& why) {
  std::fprintf(stderr, "stepcast-kernel-bench: %s: %s\n", where.c_str(), why.c_str());
  std::exit(kBadInput);
}

std::int64_t integer_or_zero(const nlohmann::json& row, const char* key, const std::string& where) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return 0;
  if (!it->is_number_integer())
    refuse(where, fmt::format("\"{}\" must be an integer or null, got {}", key, it->dump()));
  return it->get<std::int64_t>();
}

std::string text_or_empty(const nlohmann::json& row, const char* key, const std::string& where) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return {};
  if (!it->is_string()) refuse(where, fmt::format("\"{}\" must be text, got {}", key, it->dump()));
  return it->get<std::string>();
}

double number(const nlohmann::json& row, const char* key, const std::string& where) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number() || it->get<double>() < 0.0)
    refuse(where, fmt::format("\"{}\" must be a number >= 0", key));
  return it->get<double>();
}

}  // namespace

OperatorList read_operator_list(const std::string& file) {
  std::ifstream in(file);
  if (!in) refuse(file, "cannot read the operator list");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    refuse(file, "not JSON: give the output of `stepcast operators ... --format json`");
  OperatorList list;
  list.file = file;
  list.title = j.value("title", std::string());
  if (const auto notes = j.find("notes"); notes != j.end() && notes->is_array()) {
    for (const auto& n : *notes) {
      if (n.is_string()) list.notes.push_back(n.get<std::string>());
    }
  }
  const auto tables = j.find("tables");
  const nlohmann::json* table = nullptr;
  if (tables != j.end() && tables->is_array()) {
    for (const auto& t : *tables) {
      if (t.is_object() && t.value("name", std::string()) == "operators") table = &t;
    }
  }
  if (table == nullptr || !table->contains("rows") || !table->at("rows").is_array()) {
    refuse(file, "no \"operators\" table: give the output of `stepcast operators ... --format json`");
  }
  int index = 0;
  for (const auto& row : table->at("rows")) {
    const std::string where = fmt::format("{}: row {}", file, index++);
    if (!row.is_object()) refuse(where, "expected an object");
    ListOperator op;
    op.name = text_or_empty(row, "operator", where);
    op.part = text_or_empty(row, "part", where);
    op.pass = text_or_empty(row, "pass", where);
    op.kind = text_or_empty(row, "kind", where);
    op.precision = text_or_empty(row, "precision", where);
    if (op.name.empty() || op.part.empty() || op.pass.empty() || op.precision.empty()) {
      refuse(where, "needs \"operator\", \"part\", \"pass\" and \"precision\"");
    }
    if (!op.is_gemm() && !op.is_memory() && !op.is_attention()) {
      refuse(where, fmt::format("unknown kind \"{}\" (gemm, fused attention, memory-bound)", op.kind));
    }
    op.batch = integer_or_zero(row, "batch", where);
    op.m = integer_or_zero(row, "m", where);
    op.n = integer_or_zero(row, "n", where);
    op.k = integer_or_zero(row, "k", where);
    op.elements = integer_or_zero(row, "elements", where);
    op.flops = number(row, "flops", where);
    op.bytes = number(row, "bytes", where);
    op.kernels = integer_or_zero(row, "kernels", where);
    op.pattern = text_or_empty(row, "pattern", where);
    op.row_length = integer_or_zero(row, "row_length", where);
    op.reads = static_cast<int>(integer_or_zero(row, "reads", where));
    op.writes = static_cast<int>(integer_or_zero(row, "writes", where));
    op.element_bytes = static_cast<int>(integer_or_zero(row, "element_bytes", where));
    op.mask = text_or_empty(row, "mask", where);
    if (op.kernels < 1) refuse(where, "\"kernels\" must be at least 1");
    if (!op.is_memory() && (op.batch < 1 || op.m < 1 || op.n < 1 || op.k < 1))
      refuse(where, "a GEMM or attention row needs batch, m, n, k >= 1");
    if (op.is_attention() && op.elements < 1)
      refuse(where, "a fused-attention row needs its thread blocks in \"elements\"");
    if (op.is_memory()) {
      if (op.elements < 1) refuse(where, "a memory-bound row needs \"elements\" >= 1");
      if (op.pattern.empty()) refuse(where, "a memory-bound row needs \"pattern\"");
      if (op.pattern != "none" && (op.element_bytes != 2 && op.element_bytes != 4))
        refuse(where, "\"element_bytes\" must be 2 or 4");
      if (op.reads < 0 || op.writes < 0) refuse(where, "\"reads\" and \"writes\" must not be negative");
    }
    list.operators.push_back(op);
  }
  if (list.operators.empty()) refuse(file, "the operator list is empty");
  return list;
}

}  // namespace stepcast::validate
