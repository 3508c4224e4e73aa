// Chakra execution traces (MLCommons Chakra, the format ASTRA-sim and its tools read): one file per
// simulated rank of compute, collective, send and receive nodes with their dependencies and sizes.
// The input is plain data that knows nothing of the simulator; whoever builds a step fills it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/output_file.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::report::chakra {

/// What a node does. Chakra's COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE and COMM_RECV_NODE.
enum class NodeKind { kCompute, kCollective, kSend, kRecv };

/// A collective's operation: Chakra's CollectiveCommType, in its order. ASTRA-sim simulates
/// all-reduce, all-gather, reduce-scatter and all-to-all, and replays a broadcast's duration
/// (astra-sim/workload/Workload.cc, issue_coll_comm).
enum class Collective {
  kAllReduce,
  kReduce,
  kAllGather,
  kGather,
  kScatter,
  kBroadcast,
  kAllToAll,
  kReduceScatter,
  kReduceScatterBlock,
  kBarrier
};

/// One node of one rank's trace.
struct TraceNode {
  std::uint64_t id = 0;  ///< unique within the rank's trace
  std::string name;      ///< for people: "layer 3 forward", "dp all-reduce bucket 2"
  NodeKind kind = NodeKind::kCompute;
  Seconds start;     ///< when the node started, if known (written in whole microseconds)
  Seconds duration;  ///< compute: its run time; communication: as stepcast timed it (whole microseconds)
  std::vector<std::uint64_t> data_deps;  ///< nodes whose results this one reads
  std::vector<std::uint64_t> ctrl_deps;  ///< nodes that must finish first without passing data (stream order)
  /// kCollective: the operation.
  Collective collective = Collective::kAllReduce;
  /// Communication: message bytes per rank as nccl-tests counts them (the all-reduce's buffer, a
  /// send's payload): Chakra's comm_size.
  Bytes bytes;
  /// kSend: the destination rank; kRecv: the source rank.
  int peer = -1;
  /// kSend/kRecv: matches a send with its receive between the same two ranks (Chakra's comm_tag).
  std::uint32_t tag = 0;
  /// kCollective: the communicator's name for people ("tp", "dp stage 2") and its ranks, ascending,
  /// this rank among them. Collectives over the same name and ranks share one communicator.
  std::string group;
  std::vector<int> group_ranks;
  /// kCompute, optional: the floating-point operations and the bytes the node moves, which
  /// ASTRA-sim's roofline mode times instead of the duration (Chakra's num_ops and tensor_size).
  double flops = 0.0;
  Bytes tensor_bytes;

  friend bool operator==(const TraceNode&, const TraceNode&) = default;
};

/// Every rank's nodes: ranks[r] is rank r's trace.
using Traces = std::vector<std::vector<TraceNode>>;

/// The files write_chakra made.
struct ChakraFiles {
  std::vector<std::filesystem::path> traces;  ///< <prefix>.<rank>.et, in rank order
  /// <prefix>.comm_groups.json: each communicator's id (the nodes' pg_name) and its ranks, the file
  /// ASTRA-sim takes as --comm-group-configuration.
  std::filesystem::path comm_groups;
};

/// Rank `rank`'s nodes; the reference must stay valid until the next call. Each of write_chakra's
/// worker threads asks its own source for its ranks in increasing order, so a source may build one
/// rank at a time into its own buffer.
using RankSource = std::function<const std::vector<TraceNode>&(int rank)>;

/// Makes one worker's source; write_chakra calls it on the calling thread, once per worker, before
/// any starts.
using RankSourceFactory = std::function<RankSource()>;

/// Writes one Chakra trace per rank into `directory` (made when missing), named
/// <prefix>.<rank>.et as Chakra's converters name them: a GlobalMetadata message, then every node,
/// each message preceded by its length as a varint (Chakra's protolib encodeMessage); and the
/// communicator file. Refuses, with an InputError (exit code 2) naming the rank's file and the
/// node: a dependency on a node the rank does not hold, a repeated id, a cycle, a peer or group rank
/// outside 0..rank_count-1, a collective whose group lacks the rank, a send without its receive
/// (same ranks, tag and bytes), a negative or infinite figure; a folder it cannot write, and a name
/// of its files that is not a regular file (stepcast/core/staged_files.hpp). Of several ranks that
/// break a rule, the lowest is named. Each file goes to a temporary file of its own beside its name,
/// synced, and all replace the previous export together once every one is complete: on any error
/// the folder is as it was (the folder itself removed when this call made it). Ranks are
/// built and written by `threads` worker threads (0: one per core); node ids and ranks are written
/// as given, so the output is byte-identical for the same input whatever the number of threads.
/// `with` (the command's report and trace) is staged beside them and replaces its targets in the
/// same commit: all of the command's files or none.
ChakraFiles write_chakra(const std::filesystem::path& directory, int rank_count, const RankSourceFactory& sources,
                         std::string_view prefix = "stepcast", int threads = 0,
                         const std::vector<OutputContent>& with = {});

/// The same for traces held in memory: ranks[r] is rank r's.
ChakraFiles write_chakra(const std::filesystem::path& directory, const Traces& ranks,
                         std::string_view prefix = "stepcast", int threads = 0,
                         const std::vector<OutputContent>& with = {});

/// One rank's trace as read back from its file.
struct ReadTrace {
  std::string version;  ///< GlobalMetadata's version
  /// Nodes by Chakra NodeType name ("COMP_NODE", "COMM_COLL_NODE", ...), as the file holds them.
  std::map<std::string, std::size_t> counts;
  /// The nodes, in file order, with durations and start times as whole microseconds and each
  /// collective's group resolved through the communicator file.
  std::vector<TraceNode> nodes;
};

/// Parses <directory>/<prefix>.<rank>.et with protobuf (and the communicator file beside it).
/// Throws InputError naming the file when it is missing, truncated or not a Chakra trace.
ReadTrace read_chakra(const std::filesystem::path& directory, int rank, std::string_view prefix = "stepcast");

std::string_view to_string(NodeKind kind);
std::string_view to_string(Collective collective);

}  // namespace stepcast::report::chakra
