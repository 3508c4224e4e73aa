// Private: one rank's Chakra trace as the bytes of its file, in protobuf's wire format written by
// hand; protobuf's own messages cost a third of the export's time in allocation and clearing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "stepcast/report/chakra_trace.hpp"

namespace stepcast::report::chakra {

/// Where a rank's bytes go, a piece at a time.
using ByteSink = std::function<void(std::string_view bytes)>;

/// Writes rank files through one buffer that keeps its memory from one rank to the next.
class TraceEncoder {
 public:
  /// Gives rank `rank`'s file to `out`: a GlobalMetadata message, then every node, each preceded
  /// by its length as a varint (Chakra's protolib encodeMessage), byte for byte as protobuf
  /// serializes et_def.proto's messages. `communicators[i]`: node i's communicator id when it is a
  /// collective.
  void encode(const std::vector<TraceNode>& nodes, int rank, const std::vector<int>& communicators,
              const ByteSink& out);

 private:
  void node(const TraceNode& n, int rank, int communicator);
  void flush(const ByteSink& out);

  std::vector<char> chunk_;  // the bytes not yet written: chunk_size_ of them are used
  std::size_t chunk_size_ = 0;
  std::vector<char> body_;  // one node's message, before its length is known
};

}  // namespace stepcast::report::chakra
