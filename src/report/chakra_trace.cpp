// Writing Chakra execution traces: each rank's nodes as ChakraProtoMsg messages, each preceded by
// its varint length as Chakra's protolib encodeMessage writes them, with the attributes ASTRA-sim's
// workload layer reads (astra-sim/workload/Workload.cc and feeder_v3/et_feeder_node_attr.h).
#include "stepcast/report/chakra_trace.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "chakra_files.hpp"
#include "et_def.pb.h"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"

namespace stepcast::report::chakra {
namespace {

namespace pb = ChakraProtoMsg;

// Chakra's own generator writes this schema version in every GlobalMetadata (mlcommons/chakra,
// src/generator/generator.py).
constexpr std::string_view kSchemaVersion = "0.0.4";

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

// Communicators by name and ranks, numbered from 1 in the order the traces first use them:
// ASTRA-sim takes pg_name "" or "0" for the group of all ranks and looks any other number up in
// the --comm-group-configuration file (Workload::extract_comm_group).
class Communicators {
 public:
  // Looked up by name first, without copying the node's name and ranks: a trace asks this for
  // every collective node.
  int id(const TraceNode& n) {
    auto named = by_name_.find(n.group);
    if (named == by_name_.end())
      named = by_name_.emplace(n.group, std::vector<std::pair<std::vector<int>, int>>{}).first;
    for (const auto& [ranks, id] : named->second) {
      if (ranks == n.group_ranks) return id;
    }
    auto [it, added] = ids_.try_emplace({n.group, n.group_ranks}, static_cast<int>(ids_.size()) + 1);
    if (added) ranks_by_id_.push_back(&it->first.second);
    named->second.emplace_back(n.group_ranks, it->second);
    return it->second;
  }

  [[nodiscard]] std::string json() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < ranks_by_id_.size(); ++i) j[std::to_string(i + 1)] = *ranks_by_id_[i];
    return j.dump() + "\n";
  }

 private:
  std::map<std::pair<std::string, std::vector<int>>, int> ids_;
  std::unordered_map<std::string, std::vector<std::pair<std::vector<int>, int>>> by_name_;
  std::vector<const std::vector<int>*> ranks_by_id_;
};

class NodeEncoder {
 public:
  // Fills the reused message: protobuf keeps the attributes' memory across Clear(), so a rank's
  // thousands of nodes allocate once.
  const pb::Node& encode(const TraceNode& n, int rank, Communicators& communicators) {
    node_.Clear();
    node_.set_id(n.id);
    node_.set_name(n.name);
    node_.set_type(node_type(n.kind));
    for (const std::uint64_t d : n.data_deps) node_.add_data_deps(d);
    for (const std::uint64_t d : n.ctrl_deps) node_.add_ctrl_deps(d);
    node_.set_start_time_micros(micros(n.start));
    node_.set_duration_micros(micros(n.duration));
    // Every node runs on the GPU; ASTRA-sim refuses a communication node marked as a CPU op.
    attr("is_cpu_op")->set_bool_val(false);
    switch (n.kind) {
      case NodeKind::kCompute:
        if (n.flops > 0.0) attr("num_ops")->set_uint64_val(whole(n.flops));
        if (n.tensor_bytes.value() > 0.0) attr("tensor_size")->set_uint64_val(whole(n.tensor_bytes.value()));
        break;
      case NodeKind::kCollective:
        // Types as Chakra's generator writes them: comm_type int64, comm_size uint64.
        attr("comm_type")->set_int64_val(static_cast<std::int64_t>(n.collective));
        attr("comm_size")->set_uint64_val(whole(n.bytes.value()));
        attr("pg_name")->set_string_val(std::to_string(communicators.id(n)));
        // The communicator's name for people, as PyTorch's ProcessGroupNCCL reports pg_desc beside pg_name.
        attr("pg_desc")->set_string_val(n.group);
        break;
      case NodeKind::kSend:
      case NodeKind::kRecv: {
        const bool send = n.kind == NodeKind::kSend;
        attr("comm_size")->set_uint64_val(whole(n.bytes.value()));
        attr("comm_src")->set_uint32_val(static_cast<std::uint32_t>(send ? rank : n.peer));
        attr("comm_dst")->set_uint32_val(static_cast<std::uint32_t>(send ? n.peer : rank));
        attr("comm_tag")->set_uint32_val(n.tag);
        break;
      }
    }
    return node_;
  }

 private:
  pb::AttributeProto* attr(std::string_view name) {
    pb::AttributeProto* a = node_.add_attr();
    a->set_name(std::string(name));
    return a;
  }

  pb::Node node_;
};

// One rank's file, written beside its final name; renamed into place only once every rank's is
// complete (write_chakra).
void write_rank(const std::filesystem::path& partial, const std::filesystem::path& final_path,
                const std::vector<TraceNode>& nodes, int rank, Communicators& communicators) {
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(final_path.string(), {}, "cannot write the Chakra trace (is its folder writable?)");
  {
    google::protobuf::io::OstreamOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    pb::GlobalMetadata metadata;
    metadata.set_version(std::string(kSchemaVersion));
    google::protobuf::util::SerializeDelimitedToCodedStream(metadata, &coded);
    NodeEncoder encoder;
    for (const TraceNode& n : nodes) {
      google::protobuf::util::SerializeDelimitedToCodedStream(encoder.encode(n, rank, communicators), &coded);
    }
  }
  if (!out.flush()) throw InputError(final_path.string(), {}, "writing the Chakra trace failed");
}

void remove_quietly(const std::vector<std::filesystem::path>& files) {
  std::error_code ignored;
  for (const auto& f : files) std::filesystem::remove(f, ignored);
}

std::filesystem::path partial_of(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  p += ".partial";
  return p;
}

}  // namespace

std::filesystem::path trace_path(const std::filesystem::path& directory, std::string_view prefix, int rank) {
  return directory / fmt::format("{}.{}.et", prefix, rank);
}

std::filesystem::path comm_groups_path(const std::filesystem::path& directory, std::string_view prefix) {
  return directory / fmt::format("{}.comm_groups.json", prefix);
}

ChakraFiles write_chakra(const std::filesystem::path& directory, int rank_count, const RankSource& source,
                         std::string_view prefix) {
  if (rank_count < 1) throw InputError(directory.string(), {}, "a Chakra trace needs at least one rank");
  std::error_code ec;
  const bool created = std::filesystem::create_directories(directory, ec);
  if (ec || !std::filesystem::is_directory(directory)) {
    throw InputError(directory.string(), {},
                     fmt::format("cannot make the folder for the Chakra traces: {}",
                                 ec ? ec.message() : "a file of that name is in the way"));
  }
  ChakraFiles files;
  std::vector<std::filesystem::path> partials;
  // On any failure: no file of this trace is left, nor the folder if this call made it.
  const auto undo = [&](std::size_t renamed) {
    remove_quietly(partials);
    remove_quietly({files.traces.begin(), files.traces.begin() + static_cast<std::ptrdiff_t>(renamed)});
    std::error_code ignored;
    if (created) std::filesystem::remove(directory, ignored);
  };
  Communicators communicators;
  Messages messages;
  try {
    for (int r = 0; r < rank_count; ++r) {
      files.traces.push_back(trace_path(directory, prefix, r));
      const std::vector<TraceNode>& nodes = source(r);
      check_rank(files.traces.back(), r, rank_count, nodes, messages);
      partials.push_back(partial_of(files.traces.back()));
      write_rank(partials.back(), files.traces.back(), nodes, r, communicators);
    }
    check_messages(directory, prefix, messages);
  } catch (...) {
    undo(0);
    throw;
  }
  // Every file is complete: put them in place, the communicators last (written atomically too).
  for (std::size_t r = 0; r < partials.size(); ++r) {
    std::filesystem::rename(partials[r], files.traces[r], ec);
    if (ec) {
      undo(r);
      throw InputError(files.traces[r].string(), {}, "cannot put the Chakra trace in place: " + ec.message());
    }
  }
  files.comm_groups = comm_groups_path(directory, prefix);
  try {
    write_file_atomically(files.comm_groups, communicators.json());
  } catch (...) {
    undo(partials.size());
    throw;
  }
  return files;
}

ChakraFiles write_chakra(const std::filesystem::path& directory, const Traces& ranks, std::string_view prefix) {
  return write_chakra(
      directory, static_cast<int>(ranks.size()),
      [&ranks](int r) -> const std::vector<TraceNode>& { return ranks[static_cast<std::size_t>(r)]; }, prefix);
}

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCompute:
      return "compute";
    case NodeKind::kCollective:
      return "collective";
    case NodeKind::kSend:
      return "send";
    case NodeKind::kRecv:
      return "recv";
  }
  STEPCAST_UNREACHABLE("every node kind has a name");
}

std::string_view to_string(Collective collective) {
  return pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(collective));
}

}  // namespace stepcast::report::chakra
