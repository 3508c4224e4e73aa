// Scans of JSON text: nesting depth before parsing, and keys given twice in one object (with the
// line of each) after.
#include "json_duplicates.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast::detail {
namespace {

/// One open object or array: the keys seen so far (object) or the element reached (array).
struct Level {
  bool object = false;
  bool expect_key = false;
  std::map<std::string, int> key_lines;
  std::string key;  ///< the member being read
  std::size_t index = 0;
};

/// A key's text between its quotes, with its escapes resolved ("\u0074p" is "tp").
std::string decode(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  return nlohmann::json::parse("\"" + std::string(raw) + "\"").get<std::string>();
}

std::string pointer_to(const std::vector<Level>& levels, const std::string& key) {
  nlohmann::json::json_pointer pointer;
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
    pointer = levels[i].object ? pointer / levels[i].key : pointer / levels[i].index;
  }
  return (pointer / key).to_string();
}

}  // namespace

void refuse_deep_nesting(std::string_view text, const std::string& origin) {
  int depth = 0;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i < text.size() && text[i] == '\n') ++line;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) {
        throw InputError(origin, {},
                         fmt::format("objects and arrays nested more than {} deep at line {}: no stepcast input "
                                     "nests so deep",
                                     kMaxJsonDepth, line));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

void refuse_duplicate_keys(std::string_view text, const std::string& origin) {
  std::vector<Level> levels;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{' || c == '[') {
      levels.push_back({c == '{', c == '{', {}, {}, 0});
    } else if (c == '}' || c == ']') {
      if (!levels.empty()) levels.pop_back();
    } else if (c == ',' && !levels.empty()) {
      Level& top = levels.back();
      if (top.object) {
        top.expect_key = true;
      } else {
        ++top.index;
      }
    } else if (c == ':' && !levels.empty()) {
      levels.back().expect_key = false;
    } else if (c == '"') {
      const std::size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;  // an escaped character, possibly a quote
      }
      if (levels.empty() || !levels.back().expect_key) continue;
      Level& top = levels.back();
      top.key = decode(text.substr(start, i - start));
      const auto [at, added] = top.key_lines.emplace(top.key, line);
      if (!added) {
        throw InputError(origin, pointer_to(levels, top.key),
                         fmt::format("the key \"{}\" appears twice in one object, at lines {} and {}: give it once "
                                     "(JSON readers differ on which one counts)",
                                     top.key, at->second, line));
      }
    }
  }
}

}  // namespace stepcast::detail
