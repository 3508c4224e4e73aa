// Test helpers that parse what the writers produce without trusting them: an RFC 4180 CSV reader
// and a tag-balance checker for HTML with inline SVG.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast::test {

/// Parses CSV as RFC 4180 section 2 defines it (quoted fields, doubled quotes, CRLF records).
/// Returns the records; `ok` is false on a stray quote or an unterminated quoted field.
inline std::vector<std::vector<std::string>> parse_csv(std::string_view text, bool& ok) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  ok = true;
  std::size_t i = 0;
  bool field_started = false;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '"' && !field_started) {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += text[i++];
      }
      if (!closed) ok = false;
      field_started = true;
      continue;
    }
    if (ch == ',') {
      record.push_back(field);
      field.clear();
      field_started = false;
      ++i;
    } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      record.push_back(field);
      records.push_back(record);
      record.clear();
      field.clear();
      field_started = false;
      i += 2;
    } else if (ch == '"' || ch == '\n' || ch == '\r') {
      ok = false;  // a quote inside an unquoted field, or a bare line end
      ++i;
    } else {
      field += ch;
      field_started = true;
      ++i;
    }
  }
  if (!field.empty() || !record.empty()) ok = false;  // the last record must end with CRLF
  return records;
}

/// True when every element opened is closed in order. Void HTML elements (meta, br, ...) and
/// self-closed ones ("<line .../>") need no closing tag; "<!DOCTYPE" is skipped. Attribute
/// values may not contain '>' (our writers escape it).
inline bool tags_balanced(std::string_view html, std::string& why) {
  const std::vector<std::string> void_elements = {"meta", "br", "hr", "img", "link", "input"};
  std::vector<std::string> open;
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string_view::npos) {
    const std::size_t end = html.find('>', i);
    if (end == std::string_view::npos) {
      why = "unterminated tag";
      return false;
    }
    std::string_view tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.starts_with("!")) continue;
    const bool closing = tag.starts_with("/");
    const bool self_closed = tag.ends_with("/");
    if (closing) tag.remove_prefix(1);
    const std::size_t name_end = tag.find_first_of(" /\t\n");
    const std::string name(tag.substr(0, name_end));
    if (closing) {
      if (open.empty() || open.back() != name) {
        why = "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">");
        return false;
      }
      open.pop_back();
    } else if (!self_closed) {
      bool is_void = false;
      for (const auto& v : void_elements) is_void = is_void || v == name;
      if (!is_void) open.push_back(name);
    }
  }
  if (!open.empty()) {
    why = "<" + open.back() + "> is never closed";
    return false;
  }
  return true;
}

/// Occurrences of `needle` in `text`.
inline std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t i = text.find(needle); i != std::string_view::npos; i = text.find(needle, i + 1)) ++n;
  return n;
}

}  // namespace stepcast::test
