// Collected input problems, thrown as one error.
#include "stepcast/core/problems.hpp"

#include <fmt/format.h>

namespace stepcast {
namespace {

std::string listing(const std::vector<InputError>& problems, int not_listed) {
  const int total = static_cast<int>(problems.size()) + not_listed;
  std::string text = fmt::format("{} problems:", total);
  for (const InputError& p : problems) text += fmt::format("\n  {}", p.what());
  if (not_listed > 0) text += fmt::format("\n  ... and {} more", not_listed);
  return text;
}

}  // namespace

InputProblems::InputProblems(std::vector<InputError> problems, int not_listed)
    : InputError({}, {}, listing(problems, not_listed)), problems_(std::move(problems)), not_listed_(not_listed) {}

void ProblemList::add(const InputError& problem) {
  if (const auto* several = dynamic_cast<const InputProblems*>(&problem)) {
    for (const InputError& p : several->problems()) add(p);
    not_listed_ += several->not_listed();
    return;
  }
  if (static_cast<int>(problems_.size()) < kMaxListed) {
    problems_.push_back(problem);
  } else {
    ++not_listed_;
  }
}

void ProblemList::throw_if_any() const {
  if (problems_.empty()) return;
  if (problems_.size() == 1 && not_listed_ == 0) throw problems_.front();
  throw InputProblems(problems_, not_listed_);
}

}  // namespace stepcast
