// Reading JSON input with a location: every value carries its file and JSON pointer, so every
// error names both (STYLE.md B4, B9.2). Unknown keys are errors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast {

/// Parses a JSON file; a file read_text_file refuses (missing, a folder, a device, over
/// kMaxJsonInputBytes), malformed JSON or a key given twice in one object throws InputError naming
/// the file and, for syntax errors, the line and column, for a repeated key its pointer and the
/// lines of both.
nlohmann::json read_json_file(const std::filesystem::path& path);

/// Parses JSON text that came from `origin` (a file name or "--plan"), same errors as above.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

/// Whether `text` is a JSON object whose "tool" member is `tool`: how a measurement file says which
/// program wrote it (stepcast-kernel-bench, scripts/measure-eager-host). Anything else, malformed
/// JSON included, is not.
bool is_json_from_tool(std::string_view text, std::string_view tool);

/// A read-only view of one JSON value with its file and JSON pointer.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string file,
             nlohmann::json::json_pointer pointer = nlohmann::json::json_pointer());

  /// The member `key`; missing is an error.
  [[nodiscard]] JsonReader at(std::string_view key) const;
  /// The member `key`, or nothing.
  [[nodiscard]] std::optional<JsonReader> find(std::string_view key) const;
  [[nodiscard]] bool has(std::string_view key) const;
  /// The elements of an array (an error if this is not an array).
  [[nodiscard]] std::vector<JsonReader> elements() const;
  /// The members of an object in file order is not kept by nlohmann; this returns them sorted by key.
  [[nodiscard]] std::vector<std::pair<std::string, JsonReader>> members() const;

  [[nodiscard]] std::string string() const;
  [[nodiscard]] double number() const;
  [[nodiscard]] double positive_number() const;
  [[nodiscard]] std::int64_t integer() const;
  /// An integer >= 1.
  [[nodiscard]] std::int64_t count() const;
  [[nodiscard]] bool boolean() const;

  /// A string with a unit, such as "400 Gbps"; a bare number is refused.
  template <class Q>
  [[nodiscard]] Q quantity() const {
    const std::string text = quantity_text(Q{});
    try {
      return parse_quantity<Q>(text);
    } catch (const UnitError& e) {
      fail(e.what());
    }
  }
  /// As quantity(), and the value must be > 0.
  template <class Q>
  [[nodiscard]] Q positive_quantity() const {
    const Q q = quantity<Q>();
    if (!(q.value() > 0.0)) fail(fmt_must_be_positive(quantity_text(Q{})));
    return q;
  }
  /// As positive_quantity(), and within [lo, hi]: a hardware figure outside it is a typo or a
  /// unit slip ("1e30 B" of GPU memory), refused with the range (`range`, e.g. "1 GiB to 16 TiB").
  template <class Q>
  [[nodiscard]] Q plausible_quantity(Q lo, Q hi, std::string_view range) const {
    const Q q = positive_quantity<Q>();
    if (q.value() < lo.value() || q.value() > hi.value()) fail(fmt_implausible(quantity_text(Q{}), range));
    return q;
  }

  /// Every key of this object must be in `allowed`; the first other key is an error that lists them.
  void check_keys(std::initializer_list<std::string_view> allowed) const;

  [[noreturn]] void fail(const std::string& message) const;

  [[nodiscard]] const nlohmann::json& json() const { return *value_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::string pointer() const { return pointer_.to_string(); }

 private:
  template <class Q>
  [[nodiscard]] std::string quantity_text(Q) const {
    return quantity_text_for(example_for(Q{}));
  }
  static std::string_view example_for(Bytes) { return "\"14e9 B\""; }
  static std::string_view example_for(BytesPerSecond) { return "\"400 Gbps\""; }
  static std::string_view example_for(Seconds) { return "\"2 us\""; }
  static std::string_view example_for(Flops) { return "\"1e18 FLOP\""; }
  static std::string_view example_for(FlopsPerSecond) { return "\"312 TFLOP/s\""; }
  [[nodiscard]] std::string quantity_text_for(std::string_view example) const;
  [[nodiscard]] static std::string fmt_must_be_positive(const std::string& text);
  [[nodiscard]] static std::string fmt_implausible(const std::string& text, std::string_view range);
  [[nodiscard]] std::string_view type_name() const;

  const nlohmann::json* value_;
  std::string file_;
  nlohmann::json::json_pointer pointer_;
};

}  // namespace stepcast
