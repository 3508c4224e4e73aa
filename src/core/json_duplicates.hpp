// Checks of JSON text beyond its syntax: duplicate keys (RFC 8259 leaves their meaning to the
// parser: nlohmann keeps the last, others the first), refused instead of guessed; and nesting deeper
// than any input has, refused before a parser builds it.
#pragma once

#include <string>
#include <string_view>

namespace stepcast::detail {

/// The deepest nesting of objects and arrays any stepcast input may have (real ones nest under 10).
inline constexpr int kMaxJsonDepth = 256;

/// Throws InputError(origin) naming the line where `text` nests objects and arrays more than
/// kMaxJsonDepth deep. Any text: brackets inside strings do not count.
void refuse_deep_nesting(std::string_view text, const std::string& origin);

/// Throws InputError(origin, pointer of the key) naming the lines of both occurrences when an
/// object of `text` holds a key twice. Precondition: `text` is valid JSON.
void refuse_duplicate_keys(std::string_view text, const std::string& origin);

}  // namespace stepcast::detail
