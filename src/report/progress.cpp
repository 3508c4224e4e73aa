// Progress on a terminal: silent for the first second (short sweeps never flicker), then a line
// redrawn in place with a carriage return at most four times a second.
#include "stepcast/report/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace stepcast::report {
namespace {

constexpr std::chrono::milliseconds kQuietPeriod{1000};
constexpr std::chrono::milliseconds kRedrawInterval{250};

/// 12345 -> "12,345": long counts are easier to read grouped.
std::string grouped(std::size_t n) {
  std::string digits = fmt::format("{}", n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string progress_line(const std::string& label, std::size_t done, std::size_t total, double elapsed_s) {
  std::string line = fmt::format("{} / {} {}", grouped(done), grouped(total), label);
  if (elapsed_s > 0.0 && done > 0) {
    const double rate = static_cast<double>(done) / elapsed_s;
    line += fmt::format("  {}/s", grouped(static_cast<std::size_t>(std::llround(rate))));
    const double left_s = static_cast<double>(total - std::min(done, total)) / rate;
    line += fmt::format("  {:.0f} s left", std::ceil(left_s));
  }
  return line;
}

Progress::Progress(std::string label, std::size_t total, std::FILE* stream)
    : Progress(std::move(label), total, stream, ::isatty(::fileno(stream)) != 0) {}

Progress::Progress(std::string label, std::size_t total, std::FILE* stream, bool enabled)
    : label_(std::move(label)),
      total_(total),
      stream_(stream),
      enabled_(enabled),
      start_(Clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::size_t count) {
  const std::size_t now_done = done_.fetch_add(count, std::memory_order_relaxed) + count;
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - start_ < kQuietPeriod) return;
  std::unique_lock lock(draw_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const double elapsed_s = std::chrono::duration<double>(now - start_).count();
  // \r returns to the line start and \033[K (ANSI "erase in line") clears what a longer line left.
  fmt::print(stream_, "\r{}\033[K", progress_line(label_, now_done, total_, elapsed_s));
  std::fflush(stream_);
  drawn_ = true;
}

void Progress::finish() {
  std::lock_guard lock(draw_);
  if (!drawn_) return;
  fmt::print(stream_, "\r\033[K");
  std::fflush(stream_);
  drawn_ = false;
}

}  // namespace stepcast::report
