// Shared by the operator tests: a layer's operator by name and pass, and the bytes its forward
// operators keep for the backward.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string_view>
#include <vector>

#include "stepcast/cost/operators.hpp"

namespace stepcast::test {

/// The operator named `name` in `pass`, or null when the list has none.
inline const cost::Operator* find_op(const std::vector<cost::Operator>& ops, std::string_view name, cost::OpPass pass) {
  for (const cost::Operator& op : ops) {
    if (op.name == name && op.pass == pass) return &op;
  }
  return nullptr;
}

/// The forward operator named `name` (a test failure when the list has none).
inline cost::Operator forward_op(const std::vector<cost::Operator>& ops, std::string_view name) {
  if (const cost::Operator* op = find_op(ops, name, cost::OpPass::kForward)) return *op;
  FAIL("no forward operator named " << name);
  return ops.front();
}

/// What the forward operators keep, of those whose name starts with one of `prefixes` (all of
/// them when none is given).
inline double forward_saved_bytes(const std::vector<cost::Operator>& ops,
                                  std::initializer_list<std::string_view> prefixes = {}) {
  double out = 0.0;
  for (const cost::Operator& op : ops) {
    if (op.pass != cost::OpPass::kForward) continue;
    bool named = prefixes.size() == 0;
    for (const std::string_view prefix : prefixes) named = named || op.name.starts_with(prefix);
    if (named) out += op.saved.value();
  }
  return out;
}

}  // namespace stepcast::test
