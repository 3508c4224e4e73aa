// Chakra nodes in protobuf's wire format, as protobuf's generated code writes et_def.proto's
// messages: fields in number order, a proto3 field left out at its default, repeated integers
// packed, a oneof's value written even when zero; the attributes ASTRA-sim's workload layer reads
// (astra-sim/workload/Workload.cc and feeder_v3/et_feeder_node_attr.h).
#include "chakra_encode.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#include "chakra_files.hpp"
#include "et_def.pb.h"
#include "stepcast/core/errors.hpp"

namespace stepcast::report::chakra {
namespace {
namespace wire {

namespace pb = ChakraProtoMsg;

// Chakra's own generator writes this schema version in every GlobalMetadata (mlcommons/chakra,
// src/generator/generator.py).
constexpr std::string_view kSchemaVersion = "0.0.4";

// The longest varint: 64 bits in groups of 7.
constexpr std::size_t kMaxVarint = 10;

// Bytes written to the file at a time: well within a core's cache.
constexpr std::size_t kChunk = std::size_t{64} * 1024;

enum class Type : std::uint8_t { kVarint = 0, kLength = 2 };

constexpr std::uint64_t key(int field, Type type) {
  return (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type);
}

constexpr std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

char* varint(char* p, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<char>((v & 0x7F) | 0x80);
  *p++ = static_cast<char>(v);
  return p;
}

char* field(char* p, int number, std::uint64_t v) { return varint(varint(p, key(number, Type::kVarint)), v); }

char* field(char* p, int number, std::string_view s) {
  p = varint(varint(p, key(number, Type::kLength)), s.size());
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// A packed repeated uint64: left out when empty.
char* packed(char* p, int number, const std::vector<std::uint64_t>& values) {
  if (values.empty()) return p;
  std::size_t size = 0;
  for (const std::uint64_t v : values) size += varint_size(v);
  p = varint(varint(p, key(number, Type::kLength)), size);
  for (const std::uint64_t v : values) p = varint(p, v);
  return p;
}

// An attribute (Node field 10) holding an integer or bool in its oneof field `number`.
char* attr(char* p, std::string_view name, int number, std::uint64_t v) {
  const std::size_t size = varint_size(key(pb::AttributeProto::kNameFieldNumber, Type::kLength)) +
                           varint_size(name.size()) + name.size() + varint_size(key(number, Type::kVarint)) +
                           varint_size(v);
  p = varint(varint(p, key(pb::Node::kAttrFieldNumber, Type::kLength)), size);
  p = field(p, pb::AttributeProto::kNameFieldNumber, name);
  return field(p, number, v);
}

// An attribute holding a string (string_val).
char* attr(char* p, std::string_view name, std::string_view v) {
  constexpr int kNumber = pb::AttributeProto::kStringValFieldNumber;
  const std::size_t size = varint_size(key(pb::AttributeProto::kNameFieldNumber, Type::kLength)) +
                           varint_size(name.size()) + name.size() + varint_size(key(kNumber, Type::kLength)) +
                           varint_size(v.size()) + v.size();
  p = varint(varint(p, key(pb::Node::kAttrFieldNumber, Type::kLength)), size);
  p = field(p, pb::AttributeProto::kNameFieldNumber, name);
  return field(p, kNumber, v);
}

// The most bytes a node's message takes beyond its strings and dependencies: seven scalar fields
// and at most five attributes of a short name and a varint or a decimal id.
constexpr std::size_t kNodeOverhead = 7 * (2 + kMaxVarint) + 5 * (4 * 2 + 32 + kMaxVarint + 11);

std::uint64_t micros(Seconds t) { return static_cast<std::uint64_t>(std::llround(t.value() * kMicrosPerSecond)); }
std::uint64_t whole(double v) { return static_cast<std::uint64_t>(std::llround(v)); }

pb::NodeType node_type(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCompute:
      return pb::COMP_NODE;
    case NodeKind::kCollective:
      return pb::COMM_COLL_NODE;
    case NodeKind::kSend:
      return pb::COMM_SEND_NODE;
    case NodeKind::kRecv:
      return pb::COMM_RECV_NODE;
  }
  STEPCAST_UNREACHABLE("every node kind has a Chakra type");
}

}  // namespace wire
}  // namespace

void TraceEncoder::encode(const std::vector<TraceNode>& nodes, int rank, const std::vector<int>& communicators,
                          const ByteSink& out) {
  namespace pb = ChakraProtoMsg;
  constexpr int kVersion = pb::GlobalMetadata::kVersionFieldNumber;
  constexpr std::size_t kMetadataSize = wire::varint_size(wire::key(kVersion, wire::Type::kLength)) +
                                        wire::varint_size(wire::kSchemaVersion.size()) + wire::kSchemaVersion.size();
  if (chunk_.size() < wire::kMaxVarint + kMetadataSize) chunk_.resize(wire::kMaxVarint + kMetadataSize);
  char* p = wire::varint(chunk_.data(), kMetadataSize);
  p = wire::field(p, kVersion, wire::kSchemaVersion);
  chunk_size_ = static_cast<std::size_t>(p - chunk_.data());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    node(nodes[i], rank, communicators[i]);
    if (chunk_size_ >= wire::kChunk) flush(out);
  }
  flush(out);
}

// Written a chunk at a time, while the bytes are still in the cache: copying a whole rank's file
// into the page cache at once reads it back from memory.
void TraceEncoder::flush(const ByteSink& out) {
  out(std::string_view(chunk_.data(), chunk_size_));
  chunk_size_ = 0;
}

void TraceEncoder::node(const TraceNode& n, int rank, int communicator) {
  namespace pb = ChakraProtoMsg;
  const std::size_t most = wire::kNodeOverhead + n.name.size() + n.group.size() +
                           wire::kMaxVarint * (n.data_deps.size() + n.ctrl_deps.size());
  if (body_.size() < most) body_.resize(most);
  char* const begin = body_.data();
  char* p = begin;
  // Scalars at their default are left out, as proto3 writes them.
  if (n.id != 0) p = wire::field(p, pb::Node::kIdFieldNumber, n.id);
  if (!n.name.empty()) p = wire::field(p, pb::Node::kNameFieldNumber, n.name);
  p = wire::field(p, pb::Node::kTypeFieldNumber, static_cast<std::uint64_t>(wire::node_type(n.kind)));
  p = wire::packed(p, pb::Node::kCtrlDepsFieldNumber, n.ctrl_deps);
  p = wire::packed(p, pb::Node::kDataDepsFieldNumber, n.data_deps);
  if (const std::uint64_t start = wire::micros(n.start); start != 0)
    p = wire::field(p, pb::Node::kStartTimeMicrosFieldNumber, start);
  if (const std::uint64_t duration = wire::micros(n.duration); duration != 0)
    p = wire::field(p, pb::Node::kDurationMicrosFieldNumber, duration);
  // Every node runs on the GPU; ASTRA-sim refuses a communication node marked as a CPU op.
  p = wire::attr(p, "is_cpu_op", pb::AttributeProto::kBoolValFieldNumber, 0);
  switch (n.kind) {
    case NodeKind::kCompute:
      if (n.flops > 0.0) p = wire::attr(p, "num_ops", pb::AttributeProto::kUint64ValFieldNumber, wire::whole(n.flops));
      if (n.tensor_bytes.value() > 0.0) {
        p = wire::attr(p, "tensor_size", pb::AttributeProto::kUint64ValFieldNumber,
                       wire::whole(n.tensor_bytes.value()));
      }
      break;
    case NodeKind::kCollective: {
      // Types as Chakra's generator writes them: comm_type int64, comm_size uint64.
      p = wire::attr(p, "comm_type", pb::AttributeProto::kInt64ValFieldNumber,
                     static_cast<std::uint64_t>(static_cast<std::int64_t>(n.collective)));
      p = wire::attr(p, "comm_size", pb::AttributeProto::kUint64ValFieldNumber, wire::whole(n.bytes.value()));
      char id[16];
      const auto written = std::to_chars(std::begin(id), std::end(id), communicator);
      p = wire::attr(p, "pg_name", std::string_view(id, static_cast<std::size_t>(written.ptr - id)));
      // The communicator's name for people, as PyTorch's ProcessGroupNCCL reports pg_desc beside pg_name.
      p = wire::attr(p, "pg_desc", n.group);
      break;
    }
    case NodeKind::kSend:
    case NodeKind::kRecv: {
      const bool send = n.kind == NodeKind::kSend;
      p = wire::attr(p, "comm_size", pb::AttributeProto::kUint64ValFieldNumber, wire::whole(n.bytes.value()));
      p = wire::attr(p, "comm_src", pb::AttributeProto::kUint32ValFieldNumber,
                     static_cast<std::uint32_t>(send ? rank : n.peer));
      p = wire::attr(p, "comm_dst", pb::AttributeProto::kUint32ValFieldNumber,
                     static_cast<std::uint32_t>(send ? n.peer : rank));
      p = wire::attr(p, "comm_tag", pb::AttributeProto::kUint32ValFieldNumber, n.tag);
      break;
    }
  }
  const auto size = static_cast<std::size_t>(p - begin);
  if (chunk_.size() < chunk_size_ + wire::kMaxVarint + size) chunk_.resize(chunk_size_ + wire::kMaxVarint + size);
  char* out = wire::varint(chunk_.data() + chunk_size_, size);
  std::memcpy(out, begin, size);
  chunk_size_ = static_cast<std::size_t>(out + size - chunk_.data());
}

}  // namespace stepcast::report::chakra
