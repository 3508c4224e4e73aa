// Reading a Chakra trace back with protobuf: the length-delimited GlobalMetadata and nodes of one
// rank's file, and the communicators its collectives name (the file write_chakra puts beside it).
#include <fmt/format.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>

#include "chakra_files.hpp"
#include "et_def.pb.h"
#include "stepcast/core/errors.hpp"
#include "stepcast/report/chakra_trace.hpp"

namespace stepcast::report::chakra {
namespace {

namespace pb = ChakraProtoMsg;

// The value of an integer attribute, whichever integer kind the writer chose.
std::optional<std::int64_t> integer(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return a.int64_val();
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      return static_cast<std::int64_t>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return a.sint64_val();
    default:
      return std::nullopt;
  }
}

std::map<std::string, std::vector<int>> read_communicators(const std::filesystem::path& file) {
  std::map<std::string, std::vector<int>> out;
  std::ifstream in(file);
  if (!in) return out;  // traces without collectives need none
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const auto& [id, ranks] : j.items()) out[id] = ranks.get<std::vector<int>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string(), {}, fmt::format("not a communicator file: {}", e.what()));
  }
  return out;
}

class NodeDecoder {
 public:
  NodeDecoder(std::string file, std::map<std::string, std::vector<int>> communicators)
      : file_(std::move(file)), communicators_(std::move(communicators)) {}

  // A node of the four kinds stepcast writes; other Chakra node types are counted only.
  std::optional<TraceNode> decode(const pb::Node& m) const {
    TraceNode n;
    switch (m.type()) {
      case pb::COMP_NODE:
        n.kind = NodeKind::kCompute;
        break;
      case pb::COMM_COLL_NODE:
        n.kind = NodeKind::kCollective;
        break;
      case pb::COMM_SEND_NODE:
        n.kind = NodeKind::kSend;
        break;
      case pb::COMM_RECV_NODE:
        n.kind = NodeKind::kRecv;
        break;
      default:
        return std::nullopt;
    }
    n.id = m.id();
    n.name = m.name();
    n.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
    n.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
    n.start = Seconds(static_cast<double>(m.start_time_micros()) / kMicrosPerSecond);
    n.duration = Seconds(static_cast<double>(m.duration_micros()) / kMicrosPerSecond);
    int src = -1;
    int dst = -1;
    for (const pb::AttributeProto& a : m.attr()) {
      const std::optional<std::int64_t> v = integer(a);
      if (a.name() == "comm_type" && v) n.collective = static_cast<Collective>(*v);
      if (a.name() == "comm_size" && v) n.bytes = Bytes(static_cast<double>(*v));
      if (a.name() == "comm_src" && v) src = static_cast<int>(*v);
      if (a.name() == "comm_dst" && v) dst = static_cast<int>(*v);
      if (a.name() == "comm_tag" && v) n.tag = static_cast<std::uint32_t>(*v);
      if (a.name() == "num_ops" && v) n.flops = static_cast<double>(*v);
      if (a.name() == "tensor_size" && v) n.tensor_bytes = Bytes(static_cast<double>(*v));
      if (a.name() == "pg_desc") n.group = a.string_val();
      if (a.name() == "pg_name") n.group_ranks = group(a.string_val(), m.id());
    }
    if (n.kind == NodeKind::kSend) n.peer = dst;
    if (n.kind == NodeKind::kRecv) n.peer = src;
    return n;
  }

 private:
  std::vector<int> group(const std::string& id, std::uint64_t node) const {
    const auto it = communicators_.find(id);
    if (it == communicators_.end()) {
      throw InputError(file_, {},
                       fmt::format("node {} names communicator \"{}\", which the communicator file lacks", node, id));
    }
    return it->second;
  }

  std::string file_;
  std::map<std::string, std::vector<int>> communicators_;
};

}  // namespace

ReadTrace read_chakra(const std::filesystem::path& directory, int rank, std::string_view prefix) {
  const std::filesystem::path path = trace_path(directory, prefix, rank);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), {}, "cannot read the Chakra trace");
  google::protobuf::io::IstreamInputStream stream(&in);
  ReadTrace out;
  pb::GlobalMetadata metadata;
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &clean_eof)) {
    throw InputError(path.string(), {}, "does not start with a Chakra GlobalMetadata message");
  }
  out.version = metadata.version();
  const NodeDecoder decoder(path.string(), read_communicators(comm_groups_path(directory, prefix)));
  pb::Node node;
  for (std::size_t i = 0;; ++i) {
    node.Clear();  // parsing merges into the message
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof)) {
      if (clean_eof) break;
      throw InputError(path.string(), {}, fmt::format("node message {} is truncated or not a Chakra node", i));
    }
    ++out.counts[pb::NodeType_Name(node.type())];
    if (auto n = decoder.decode(node)) out.nodes.push_back(std::move(*n));
  }
  return out;
}

}  // namespace stepcast::report::chakra
