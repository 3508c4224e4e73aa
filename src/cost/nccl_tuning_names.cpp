// NCCL's algorithm and protocol names, spelt as NCCL_ALGO and NCCL_PROTO take them.
#include <fmt/format.h>
#include <array>
#include <cctype>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::cost {
namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::kTree:
      return "tree";
    case NcclAlgorithm::kRing:
      return "ring";
    case NcclAlgorithm::kCollNetDirect:
      return "collnetdirect";
    case NcclAlgorithm::kCollNetChain:
      return "collnetchain";
    case NcclAlgorithm::kNvls:
      return "nvls";
    case NcclAlgorithm::kNvlsTree:
      return "nvlstree";
    case NcclAlgorithm::kPat:
      return "pat";
  }
  STEPCAST_UNREACHABLE("every NcclAlgorithm is named");
}

std::string_view to_string(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLL:
      return "LL";
    case NcclProtocol::kLL128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
  }
  STEPCAST_UNREACHABLE("every NcclProtocol is named");
}

std::optional<NcclAlgorithm> parse_nccl_algorithm(std::string_view name) {
  for (const NcclAlgorithm a : kNcclAlgorithmList) {
    if (equal_ignoring_case(name, to_string(a))) return a;
  }
  return std::nullopt;
}

std::optional<NcclProtocol> parse_nccl_protocol(std::string_view name) {
  for (const NcclProtocol p : kNcclProtocolList) {
    if (equal_ignoring_case(name, to_string(p))) return p;
  }
  return std::nullopt;
}

std::string accepted_nccl_protocols() { return "LL, LL128, Simple"; }

std::string accepted_nccl_algorithms(CollectiveOp op) {
  std::string out;
  for (const NcclAlgorithm a : kNcclAlgorithmList) {
    if (nccl_runs(op, a)) out += (out.empty() ? "" : ", ") + std::string(to_string(a));
  }
  return out;
}

}  // namespace stepcast::cost
