// Duplicate keys in JSON text: RFC 8259 leaves their meaning to the parser (nlohmann keeps the
// last, others the first), so stepcast refuses them instead of guessing which one was meant.
#pragma once

#include <string>
#include <string_view>

namespace stepcast::detail {

/// Throws InputError(origin, pointer of the key) naming the lines of both occurrences when an
/// object of `text` holds a key twice. Precondition: `text` is valid JSON.
void refuse_duplicate_keys(std::string_view text, const std::string& origin);

}  // namespace stepcast::detail
