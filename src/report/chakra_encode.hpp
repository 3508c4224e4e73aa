// Private: one rank's Chakra trace as the bytes of its file, in protobuf's wire format written by
// hand; protobuf's own messages cost a third of the export's time in allocation and clearing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "stepcast/report/chakra_trace.hpp"

namespace stepcast::report::chakra {

/// A rank's file, built in one buffer that keeps its memory from one rank to the next.
class TraceEncoder {
 public:
  /// Encodes rank `rank`'s file: a GlobalMetadata message, then every node, each preceded by its
  /// length as a varint (Chakra's protolib encodeMessage), byte for byte as protobuf serializes
  /// et_def.proto's messages. `communicators[i]`: node i's communicator id when it is a collective.
  /// The bytes stay valid until the next call.
  std::string_view encode(const std::vector<TraceNode>& nodes, int rank, const std::vector<int>& communicators);

 private:
  void node(const TraceNode& n, int rank, int communicator);

  std::vector<char> file_;  // the file's bytes: file_size_ of them are used
  std::size_t file_size_ = 0;
  std::vector<char> body_;  // one node's message, before its length is known
};

}  // namespace stepcast::report::chakra
