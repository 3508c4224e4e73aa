// Text helpers of the nccl-tests reader.
#include "nccl_tests_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace stepcast::calibrate::detail {
namespace {

constexpr std::string_view kBlanks = " \t";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "[1,0]<stdout>:" (OpenMPI --tag-output; its streams are stdout, stderr and stddiag), "[rank0]:",
// "[default0]:" (torchrun): a bracketed word without blanks, then a colon. Returns the length
// of the tag, or 0. "[host:123] 8 more processes have sent help message" is no tag: a blank follows.
std::size_t bracket_tag_length(std::string_view s) {
  // Launcher tags are short ("[12,1023]<stdout>:"); a longer bracket is the line's own text.
  constexpr std::size_t kLongestTag = 64;
  if (s.empty() || s.front() != '[') return 0;
  const auto close = s.find(']');
  if (close == std::string_view::npos || close == 1 || close > kLongestTag) return 0;
  if (s.substr(1, close - 1).find_first_of(kBlanks) != std::string_view::npos) return 0;
  std::size_t at = close + 1;
  for (std::string_view stream : {"<stdout>", "<stderr>", "<stddiag>"}) {
    if (s.substr(at, stream.size()) == stream) {
      at += stream.size();
      break;
    }
  }
  return at < s.size() && s[at] == ':' ? at + 1 : 0;
}

// "0: " or "12: " (srun --label, after its padding blanks are trimmed): digits, a colon, then a blank or the end of the
// line. No result row starts so: its first word is a whole number followed by blanks.
std::size_t task_label_length(std::string_view s) {
  std::size_t digits = 0;
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  if (digits == 0 || digits >= s.size() || s[digits] != ':') return 0;
  const std::size_t after = digits + 1;
  return after == s.size() || s[after] == ' ' || s[after] == '\t' ? after : 0;
}

// "[1,0]<stdout>:" exactly: a bracketed pair of whole numbers, a stream name, a colon. Returns its
// length at the start of `s`, or 0.
std::size_t mpi_tag_length(std::string_view s) {
  if (s.empty() || s.front() != '[') return 0;
  std::size_t at = 1;
  for (int number = 0; number < 2; ++number) {
    const std::size_t start = at;
    while (at < s.size() && is_digit(s[at])) ++at;
    if (at == start || at >= s.size() || s[at] != (number == 0 ? ',' : ']')) return 0;
    ++at;
  }
  for (std::string_view stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (s.substr(at, stream.size()) == stream) return at + stream.size();
  }
  return 0;
}

}  // namespace

std::optional<std::string> without_inner_mpi_tags(std::string_view line) {
  std::optional<std::string> out;
  std::size_t copied = 0;
  for (std::size_t at = line.find('['); at != std::string_view::npos; at = line.find('[', at + 1)) {
    const std::size_t tag = mpi_tag_length(line.substr(at));
    if (tag == 0) continue;
    if (!out) out.emplace();
    out->append(line.substr(copied, at - copied));
    copied = at + tag;
    at = copied - 1;
  }
  if (out) out->append(line.substr(copied));
  return out;
}

std::string_view strip_launcher_tags(std::string_view line) {
  line = trim(line);
  // A launcher may wrap another ("srun --label" around "mpirun --tag-output"): strip both.
  for (int layer = 0; layer < 2; ++layer) {
    std::size_t tag = bracket_tag_length(line);
    if (tag == 0) tag = task_label_length(line);
    if (tag == 0) break;
    line = trim(line.substr(tag));
  }
  return line;
}

bool is_nccl_debug_line(std::string_view line) {
  for (std::string_view level : {"NCCL INFO", "NCCL WARN", "NCCL TRACE"}) {
    if (line.find(level) != std::string_view::npos) return true;
  }
  return false;
}

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at])) != 0) ++at;
    const std::size_t start = at;
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at])) == 0) ++at;
    if (at > start) out.emplace_back(line.substr(start, at - start));
  }
  return out;
}

std::optional<std::int64_t> to_integer(std::string_view word) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return v;
}

std::optional<double> to_number(std::string_view word) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc{} || end != word.data() + word.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace stepcast::calibrate::detail
