// Progress of a long sweep on stderr (count, rate, time left), only when stderr is a terminal
// and only once the sweep has run for a second: pipes, files and CI logs stay clean.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace stepcast::report {

/// Thread-safe progress line. Workers call advance(); at most one redraws at a time, a few
/// times a second. The line is erased when the sweep finishes or the object is destroyed.
class Progress {
 public:
  /// `label` names the sweep ("plans"); `total` is the number of items. Enabled only when
  /// `stream` is a terminal (isatty).
  Progress(std::string label, std::size_t total, std::FILE* stream = stderr);
  /// As above with the decision made by the caller (tests force it on or off).
  Progress(std::string label, std::size_t total, std::FILE* stream, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Records `count` more items done; may redraw the line.
  void advance(std::size_t count = 1);
  /// Erases the line (if one was drawn).
  void finish();

  [[nodiscard]] std::size_t done() const { return done_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  std::size_t total_;
  std::FILE* stream_;
  bool enabled_;
  Clock::time_point start_;
  std::atomic<std::size_t> done_{0};
  std::mutex draw_;
  Clock::time_point last_draw_;
  bool drawn_ = false;
};

/// "12,345 / 100,000 plans  8,210/s  11 s left": the text of one progress line.
std::string progress_line(const std::string& label, std::size_t done, std::size_t total, double elapsed_s);

}  // namespace stepcast::report
