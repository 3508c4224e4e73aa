// JsonReader: typed access to JSON values with file and JSON-pointer locations in every error.
#include "stepcast/core/json_reader.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "json_duplicates.hpp"
#include "stepcast/core/input_file.hpp"

namespace stepcast {

bool is_json_from_tool(std::string_view text, std::string_view tool) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto it = j.find("tool");
  return it != j.end() && it->is_string() && it->get<std::string>() == tool;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  if (text.size() > kMaxJsonInputBytes) {
    throw InputError(origin, {},
                     fmt::format("the JSON is {}, larger than any JSON input stepcast reads (at most {}): is it the "
                                 "right file?",
                                 describe_size(text.size()), describe_size(kMaxJsonInputBytes)));
  }
  detail::refuse_deep_nesting(text, origin);
  try {
    nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end());
    detail::refuse_duplicate_keys(text, origin);
    return parsed;
  } catch (const nlohmann::json::parse_error& e) {
    // Turn nlohmann's byte offset into line and column, which editors understand.
    const std::size_t offset = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const std::string_view before = text.substr(0, offset);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto last_newline = before.rfind('\n');
    const auto column = last_newline == std::string_view::npos ? offset + 1 : offset - last_newline;
    const std::string what = e.what();
    const auto detail = what.find("syntax error");
    throw InputError(origin, {},
                     fmt::format("malformed JSON at line {}, column {}: {}", line, column,
                                 detail == std::string::npos ? what : what.substr(detail)));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number literal too large for a double (nlohmann error 406) is bad input, not a crash.
    const std::string what = e.what();
    const auto detail = what.find("number overflow");
    throw InputError(origin, {},
                     fmt::format("malformed JSON: {}", detail == std::string::npos ? what : what.substr(detail)));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, kMaxJsonInputBytes);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(path.string(), {}, "the file is empty, expected a JSON object");
  }
  return parse_json_text(text, path.string());
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, nlohmann::json::json_pointer pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonReader::fail(const std::string& message) const { throw InputError(file_, pointer_.to_string(), message); }

std::string_view JsonReader::type_name() const { return value_->type_name(); }

bool JsonReader::has(std::string_view key) const { return value_->is_object() && value_->contains(key); }

std::optional<JsonReader> JsonReader::find(std::string_view key) const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name()));
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonReader(*it, file_, pointer_ / std::string(key));
}

JsonReader JsonReader::at(std::string_view key) const {
  auto found = find(key);
  if (!found) fail(fmt::format("missing required field \"{}\"", key));
  return *found;
}

std::vector<JsonReader> JsonReader::elements() const {
  if (!value_->is_array()) fail(fmt::format("expected an array, got {}", type_name()));
  std::vector<JsonReader> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) out.emplace_back((*value_)[i], file_, pointer_ / i);
  return out;
}

std::vector<std::pair<std::string, JsonReader>> JsonReader::members() const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name()));
  std::vector<std::pair<std::string, JsonReader>> out;
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    out.emplace_back(it.key(), JsonReader(it.value(), file_, pointer_ / it.key()));
  }
  return out;
}

std::string JsonReader::string() const {
  if (!value_->is_string()) fail(fmt::format("expected a string, got {}", type_name()));
  return value_->get<std::string>();
}

double JsonReader::number() const {
  if (!value_->is_number()) fail(fmt::format("expected a number, got {}", type_name()));
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

double JsonReader::positive_number() const {
  const double v = number();
  if (!(v > 0.0)) fail(fmt::format("must be greater than zero, got {}", v));
  return v;
}

std::int64_t JsonReader::integer() const {
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  }
  fail(fmt::format("expected an integer, got {}", value_->dump()));
}

std::int64_t JsonReader::count() const {
  const std::int64_t v = integer();
  if (v < 1) fail(fmt::format("must be at least 1, got {}", v));
  return v;
}

bool JsonReader::boolean() const {
  if (!value_->is_boolean()) fail(fmt::format("expected true or false, got {}", type_name()));
  return value_->get<bool>();
}

std::string JsonReader::quantity_text_for(std::string_view example) const {
  if (value_->is_number()) {
    fail(fmt::format("expected a quantity with a unit like {}, got the bare number {}", example, value_->dump()));
  }
  if (!value_->is_string()) fail(fmt::format("expected a quantity with a unit like {}, got {}", example, type_name()));
  return value_->get<std::string>();
}

std::string JsonReader::fmt_must_be_positive(const std::string& text) {
  return fmt::format("must be greater than zero, got \"{}\"", text);
}

std::string JsonReader::fmt_implausible(const std::string& text, std::string_view range) {
  return fmt::format("\"{}\" is outside the range of real hardware ({}): a typo or a unit slip?", text, range);
}

void JsonReader::check_keys(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name()));
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    std::string list;
    for (std::string_view k : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    throw InputError(file_, (pointer_ / it.key()).to_string(),
                     fmt::format("unknown key \"{}\" (allowed here: {})", it.key(), list));
  }
}

}  // namespace stepcast
