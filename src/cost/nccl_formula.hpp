// A term of NCCL's tuning model (a latency in us or a bandwidth in GB/s) with, when explaining,
// the formula that gave it: shared by the model's files (nccl_tuning.cpp, nccl_collnet.cpp).
#pragma once

#include <fmt/format.h>
#include <string>
#include <utility>

namespace stepcast::cost::nccl_detail {

struct Term {
  double value = 0.0;   // us or GB/s
  std::string formula;  // empty unless explaining
};

// Formula text, built only when explaining: the planner prices millions of candidates, and
// formatting costs far more than the arithmetic.
class Formula {
 public:
  explicit Formula(bool on) : on_(on) {}
  template <typename... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    if (on_) text_ += fmt::format(format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void set(fmt::format_string<Args...> format, Args&&... args) {
    if (on_) text_ = fmt::format(format, std::forward<Args>(args)...);
  }
  [[nodiscard]] bool on() const { return on_; }
  std::string take() { return std::move(text_); }

 private:
  bool on_;
  std::string text_;
};

}  // namespace stepcast::cost::nccl_detail
