// Error classes and the assertion handler.
#include "stepcast/core/errors.hpp"

#include <fmt/format.h>

namespace stepcast {
namespace {

std::string locate(const std::string& file, const std::string& pointer, const std::string& message) {
  if (file.empty() && pointer.empty()) return message;
  if (pointer.empty()) return fmt::format("{}: {}", file, message);
  if (file.empty()) return fmt::format("{}: {}", pointer, message);
  return fmt::format("{}:{}: {}", file, pointer, message);
}

}  // namespace

InputError::InputError(std::string file, std::string pointer, std::string message)
    : std::runtime_error(locate(file, pointer, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

void assertion_failed(const char* condition, const std::string& why, const char* file, int line) {
  throw InternalError(fmt::format("internal error: {} ({}) at {}:{}", why, condition, file, line));
}

}  // namespace stepcast
