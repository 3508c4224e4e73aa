// Chakra execution traces: a hand-built two-rank step written and parsed back with protobuf, its
// framing checked byte by byte against Chakra's protolib (a varint length before each message), the
// attributes ASTRA-sim reads checked by name and type, and bad traces refused with nothing written.
#include <doctest/doctest.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "et_def.pb.h"
#include "stepcast/core/errors.hpp"
#include "stepcast/report/chakra_trace.hpp"

namespace chakra_trace_test {

using namespace stepcast;
namespace fs = std::filesystem;
using report::chakra::Collective;
using report::chakra::NodeKind;
using report::chakra::TraceNode;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A fresh, empty folder per test under the system's temporary folder (named by process, so that
// test runs side by side do not meet), removed when the test ends.
struct Scratch {
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("stepcast-chakra-test-" + std::to_string(getpid()) + "-" + name)) {
    fs::remove_all(dir);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  fs::path dir;
};

TraceNode compute(std::uint64_t id, std::string name, double micros, std::vector<std::uint64_t> deps = {}) {
  TraceNode n;
  n.id = id;
  n.name = std::move(name);
  n.kind = NodeKind::kCompute;
  n.duration = Seconds(micros / 1e6);
  n.data_deps = std::move(deps);
  return n;
}

// Two data-parallel ranks: each computes its forward (250 us, 2e12 FLOPs over 1 MiB), all-reduces
// 64 MiB of gradients over both ranks once the forward is done, and rank 0 sends rank 1 a 4 MiB
// activation (tag 7) after its all-reduce, which rank 1 receives before its backward.
report::chakra::Traces two_ranks() {
  report::chakra::Traces t(2);
  for (int r = 0; r < 2; ++r) {
    TraceNode fwd = compute(0, "forward", 250.0);
    fwd.start = Seconds(10e-6);
    fwd.flops = 2e12;
    fwd.tensor_bytes = Bytes(kMiB);
    TraceNode ar;
    ar.id = 1;
    ar.name = "dp all-reduce";
    ar.kind = NodeKind::kCollective;
    ar.collective = Collective::kAllReduce;
    ar.start = Seconds(260e-6);
    ar.duration = Seconds(1200e-6);
    ar.bytes = Bytes(64 * kMiB);
    ar.group = "dp";
    ar.group_ranks = {0, 1};
    ar.data_deps = {0};
    t[static_cast<std::size_t>(r)] = {fwd, ar};
  }
  TraceNode send;
  send.id = 2;
  send.name = "activation to stage 1";
  send.kind = NodeKind::kSend;
  send.duration = Seconds(80e-6);
  send.bytes = Bytes(4 * kMiB);
  send.peer = 1;
  send.tag = 7;
  send.data_deps = {0};
  send.ctrl_deps = {1};
  t[0].push_back(send);
  TraceNode recv = send;
  recv.name = "activation from stage 0";
  recv.kind = NodeKind::kRecv;
  recv.peer = 0;
  recv.data_deps = {};
  t[1].push_back(recv);
  t[1].push_back(compute(3, "backward", 500.0, {2}));
  return t;
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The raw messages of a file, parsed with protobuf directly (not through read_chakra).
std::vector<ChakraProtoMsg::Node> raw_nodes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  google::protobuf::io::IstreamInputStream stream(&in);
  ChakraProtoMsg::GlobalMetadata metadata;
  bool eof = false;
  REQUIRE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &eof));
  std::vector<ChakraProtoMsg::Node> nodes;
  for (;;) {
    ChakraProtoMsg::Node n;  // a fresh message each time: parsing merges into it
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&n, &stream, &eof)) break;
    nodes.push_back(n);
  }
  CHECK(eof);
  return nodes;
}

const ChakraProtoMsg::AttributeProto& attr(const ChakraProtoMsg::Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() == name) return a;
  }
  FAIL("node ", n.id(), " has no attribute ", name);
  static const ChakraProtoMsg::AttributeProto none;
  return none;
}

std::string error_of(const report::chakra::Traces& t, const fs::path& dir) {
  try {
    report::chakra::write_chakra(dir, t);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Whether `dir` is gone or empty: a refused trace leaves nothing behind.
bool nothing_left(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

TraceNode collective(std::uint64_t id, std::string group, std::vector<int> ranks, std::vector<std::uint64_t> deps) {
  TraceNode n;
  n.id = id;
  n.name = group + " all-reduce";
  n.kind = NodeKind::kCollective;
  n.duration = Seconds(100e-6);
  n.bytes = Bytes(kMiB);
  n.group = std::move(group);
  n.group_ranks = std::move(ranks);
  n.data_deps = std::move(deps);
  return n;
}

// Six ranks in tp pairs {0,1} {2,3} {4,5} and dp triples {0,2,4} {1,3,5}: even ranks all-reduce
// over dp first and tp second, odd ranks tp first, so the communicators' numbers follow the ranks'
// order.
report::chakra::Traces six_ranks() {
  report::chakra::Traces t(6);
  for (int r = 0; r < 6; ++r) {
    const std::vector<int> tp = {r / 2 * 2, r / 2 * 2 + 1};
    const std::vector<int> dp = {r % 2, r % 2 + 2, r % 2 + 4};
    auto& nodes = t[static_cast<std::size_t>(r)];
    nodes.push_back(compute(0, "forward", 250.0));
    nodes.push_back(r % 2 == 0 ? collective(1, "dp", dp, {0}) : collective(1, "tp", tp, {0}));
    nodes.push_back(r % 2 == 0 ? collective(2, "tp", tp, {1}) : collective(2, "dp", dp, {1}));
  }
  return t;
}

// The file's messages as protobuf writes them once it has parsed them: the file's own bytes when
// they are protobuf's encoding.
std::string reencoded(const fs::path& file) {
  std::ostringstream out;
  ChakraProtoMsg::GlobalMetadata metadata;
  std::ifstream in(file, std::ios::binary);
  google::protobuf::io::IstreamInputStream stream(&in);
  bool eof = false;
  REQUIRE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &eof));
  REQUIRE(google::protobuf::util::SerializeDelimitedToOstream(metadata, &out));
  for (;;) {
    ChakraProtoMsg::Node n;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&n, &stream, &eof)) break;
    REQUIRE(google::protobuf::util::SerializeDelimitedToOstream(n, &out));
  }
  CHECK(eof);
  return out.str();
}

}  // namespace

TEST_SUITE("report.chakra") {
  TEST_CASE("two ranks: compute, a 64 MiB all-reduce, a send/recv pair, written and parsed back field by field") {
    const Scratch dir_scratch("roundtrip");
    const fs::path& dir = dir_scratch.dir;
    const report::chakra::Traces t = two_ranks();
    const report::chakra::ChakraFiles files = report::chakra::write_chakra(dir, t);
    REQUIRE(files.traces.size() == 2);
    CHECK(files.traces[1] == dir / "stepcast.1.et");
    CHECK(files.comm_groups == dir / "stepcast.comm_groups.json");
    // One communicator, numbered 1 (ASTRA-sim reads pg_name "0" as all ranks), over ranks 0 and 1.
    CHECK(read_bytes(files.comm_groups) == "{\"1\":[0,1]}\n");

    // Framing, by hand: GlobalMetadata{version = "0.0.4"} is field 1 (tag byte 0x0A), length 5,
    // then the 5 characters: 7 bytes, so the file opens with the varint 7 and those 7 bytes.
    const std::string bytes = read_bytes(files.traces[0]);
    REQUIRE(bytes.size() > 8);
    CHECK(bytes.substr(0, 8) == std::string("\x07\x0A\x05"
                                            "0.0.4",
                                            8));

    const auto r0 = report::chakra::read_chakra(dir, 0);
    const auto r1 = report::chakra::read_chakra(dir, 1);
    CHECK(r0.version == "0.0.4");
    CHECK(r0.counts ==
          std::map<std::string, std::size_t>{{"COMP_NODE", 1}, {"COMM_COLL_NODE", 1}, {"COMM_SEND_NODE", 1}});
    CHECK(r1.counts ==
          std::map<std::string, std::size_t>{{"COMP_NODE", 2}, {"COMM_COLL_NODE", 1}, {"COMM_RECV_NODE", 1}});
    // Every field back as written: ids, names, kinds, whole-microsecond times, dependencies, the
    // collective and its bytes and group, the peers and tag, the compute node's FLOPs and bytes.
    CHECK(r0.nodes == t[0]);
    CHECK(r1.nodes == t[1]);
    CHECK(r1.nodes[3].data_deps == std::vector<std::uint64_t>{2});
    CHECK(r0.nodes[2].ctrl_deps == std::vector<std::uint64_t>{1});
  }

  TEST_CASE("the attributes ASTRA-sim's workload layer reads, by name and protobuf type") {
    const Scratch dir_scratch("attributes");
    const fs::path& dir = dir_scratch.dir;
    report::chakra::write_chakra(dir, two_ranks());
    const auto n0 = raw_nodes(dir / "stepcast.0.et");
    const auto n1 = raw_nodes(dir / "stepcast.1.et");
    REQUIRE(n0.size() == 3);
    REQUIRE(n1.size() == 4);
    // Compute: 250 us, 2e12 FLOPs over 1 MiB for the roofline mode, on the GPU.
    CHECK(n0[0].type() == ChakraProtoMsg::COMP_NODE);
    CHECK(n0[0].duration_micros() == 250);
    CHECK(n0[0].start_time_micros() == 10);
    CHECK(attr(n0[0], "num_ops").uint64_val() == 2000000000000ULL);
    CHECK(attr(n0[0], "tensor_size").uint64_val() == 1048576);
    CHECK(attr(n0[0], "is_cpu_op").value_case() == ChakraProtoMsg::AttributeProto::kBoolVal);
    CHECK_FALSE(attr(n0[0], "is_cpu_op").bool_val());
    // All-reduce: comm_type ALL_REDUCE (0) as int64, 64 MiB = 67,108,864 bytes as uint64.
    CHECK(n0[1].type() == ChakraProtoMsg::COMM_COLL_NODE);
    CHECK(attr(n0[1], "comm_type").value_case() == ChakraProtoMsg::AttributeProto::kInt64Val);
    CHECK(attr(n0[1], "comm_type").int64_val() == ChakraProtoMsg::ALL_REDUCE);
    CHECK(attr(n0[1], "comm_size").uint64_val() == 67108864);
    CHECK(attr(n0[1], "pg_name").string_val() == "1");
    CHECK(attr(n0[1], "pg_desc").string_val() == "dp");
    CHECK(n0[1].data_deps_size() == 1);
    CHECK(n0[1].data_deps(0) == 0);
    // Send and receive: 4 MiB from rank 0 to rank 1 with tag 7, as uint32 ranks and tag.
    CHECK(n0[2].type() == ChakraProtoMsg::COMM_SEND_NODE);
    CHECK(n1[2].type() == ChakraProtoMsg::COMM_RECV_NODE);
    for (const auto* n : {&n0[2], &n1[2]}) {
      CHECK(attr(*n, "comm_src").uint32_val() == 0);
      CHECK(attr(*n, "comm_dst").uint32_val() == 1);
      CHECK(attr(*n, "comm_tag").uint32_val() == 7);
      CHECK(attr(*n, "comm_size").uint64_val() == 4194304);
    }
  }

  TEST_CASE("the same input writes the same bytes") {
    const Scratch a_scratch("same-a");
    const fs::path& a = a_scratch.dir;
    const Scratch b_scratch("same-b");
    const fs::path& b = b_scratch.dir;
    report::chakra::write_chakra(a, two_ranks());
    report::chakra::write_chakra(b, two_ranks());
    for (const char* f : {"stepcast.0.et", "stepcast.1.et", "stepcast.comm_groups.json"}) {
      CHECK(read_bytes(a / f) == read_bytes(b / f));
    }
  }

  TEST_CASE("any number of threads writes the bytes one thread writes, communicators numbered by first use") {
    const Scratch one_scratch("threads-1");
    report::chakra::write_chakra(one_scratch.dir, six_ranks(), "stepcast", 1);
    // By hand: rank 0 names dp {0,2,4} (1) then tp {0,1} (2); rank 1 tp {0,1} then dp {1,3,5} (3);
    // rank 2 tp {2,3} (4); rank 4 tp {4,5} (5).
    CHECK(read_bytes(one_scratch.dir / "stepcast.comm_groups.json") ==
          "{\"1\":[0,2,4],\"2\":[0,1],\"3\":[1,3,5],\"4\":[2,3],\"5\":[4,5]}\n");
    const auto rank3 = raw_nodes(one_scratch.dir / "stepcast.3.et");
    REQUIRE(rank3.size() == 3);
    CHECK(attr(rank3[1], "pg_name").string_val() == "4");
    CHECK(attr(rank3[2], "pg_name").string_val() == "3");
    for (const int threads : {2, 4, 7}) {
      CAPTURE(threads);
      const Scratch many_scratch("threads-" + std::to_string(threads));
      report::chakra::write_chakra(many_scratch.dir, six_ranks(), "stepcast", threads);
      for (int r = 0; r < 6; ++r) {
        const std::string f = "stepcast." + std::to_string(r) + ".et";
        CHECK(read_bytes(many_scratch.dir / f) == read_bytes(one_scratch.dir / f));
      }
      CHECK(read_bytes(many_scratch.dir / "stepcast.comm_groups.json") ==
            read_bytes(one_scratch.dir / "stepcast.comm_groups.json"));
    }
  }

  TEST_CASE("the files hold protobuf's own encoding of every message, whatever the ids and figures") {
    const Scratch dir_scratch("encoding");
    const fs::path& dir = dir_scratch.dir;
    report::chakra::Traces t = two_ranks();
    // Ids that are not positions, listed before the nodes they depend on; zero and unnamed fields
    // (left out by protobuf) and a 40-bit id (a five-byte varint).
    TraceNode idle = compute(1ULL << 40, "", 0.0, {3});
    idle.ctrl_deps = {2, 0};
    t[1].insert(t[1].begin(), idle);
    t[0][2].tag = t[1][3].tag = (1u << 31) | 5u;  // the send's tag, a five-byte varint
    report::chakra::write_chakra(dir, t);
    for (const char* f : {"stepcast.0.et", "stepcast.1.et"}) {
      CAPTURE(f);
      CHECK(reencoded(dir / f) == read_bytes(dir / f));
    }
    CHECK(report::chakra::read_chakra(dir, 1).nodes == t[1]);
  }

  TEST_CASE("a repeated node id is refused, naming the first repeat in node order") {
    const Scratch dir_scratch("repeated-id");
    const fs::path& dir = dir_scratch.dir;
    report::chakra::Traces t = two_ranks();
    // Rank 1's ids 5, 3, 5, 3: the third node repeats 5 before the fourth repeats 3.
    t[1][0].id = 5;
    t[1][1].id = 3;
    t[1][2].id = 5;
    t[1][3].id = 3;
    CHECK(error_of(t, dir) == (dir / "stepcast.1.et").string() + ": node id 5 appears twice");
    CHECK(nothing_left(dir));
  }

  TEST_CASE("of several ranks that break a rule, the lowest is named, whatever the threads") {
    report::chakra::Traces t = six_ranks();
    t[3][2].data_deps = {8};
    t[1][1].data_deps = {9};
    for (const int threads : {1, 2, 6}) {
      CAPTURE(threads);
      const Scratch dir_scratch("lowest-" + std::to_string(threads));
      const fs::path& dir = dir_scratch.dir;
      std::string error = "no error";
      try {
        report::chakra::write_chakra(dir, t, "stepcast", threads);
      } catch (const InputError& e) {
        error = e.what();
      }
      CHECK(error == (dir / "stepcast.1.et").string() +
                         ": node 1 (tp all-reduce) depends on node 9, which rank 1's trace does not hold");
      CHECK(nothing_left(dir));
    }
  }

  TEST_CASE("a dependency on a node the rank does not hold is refused and nothing is written") {
    const Scratch dir_scratch("missing-dependency");
    const fs::path& dir = dir_scratch.dir;
    report::chakra::Traces t = two_ranks();
    t[1][3].data_deps = {9};
    CHECK(error_of(t, dir) == (dir / "stepcast.1.et").string() +
                                  ": node 3 (backward) depends on node 9, which rank 1's trace does not hold");
    CHECK(nothing_left(dir));
  }

  TEST_CASE("a folder that cannot be made is refused, naming it") {
    const Scratch base_scratch("unwritable");
    const fs::path& base = base_scratch.dir;
    fs::create_directories(base);
    std::ofstream(base / "file") << "a file, not a folder";
    const fs::path dir = base / "file" / "traces";
    CHECK(error_of(two_ranks(), dir) ==
          dir.string() + ": cannot make the folder for the Chakra traces: Not a directory");
  }

  TEST_CASE("a send without its receive, a cycle, a group without the rank: refused with their numbers") {
    {
      const Scratch dir_scratch("unmatched");
      const fs::path& dir = dir_scratch.dir;
      report::chakra::Traces t = two_ranks();
      t[1].erase(t[1].begin() + 2);  // rank 1's receive
      t[1].back().data_deps = {};
      CHECK(error_of(t, dir) ==
            (dir / "stepcast.0.et").string() +
                ": rank 0 sends 1 message(s) of 4194304 bytes with tag 7 to rank 1 that rank 1 does not receive");
      CHECK(nothing_left(dir));
    }
    {
      const Scratch dir_scratch("cycle");
      const fs::path& dir = dir_scratch.dir;
      report::chakra::Traces t = two_ranks();
      t[0][0].ctrl_deps = {2};  // the forward waits for the send that waits for it
      CHECK(error_of(t, dir) ==
            (dir / "stepcast.0.et").string() + ": the dependencies form a cycle: node 0 (forward) never becomes ready");
      CHECK(nothing_left(dir));
    }
    {
      const Scratch dir_scratch("group");
      const fs::path& dir = dir_scratch.dir;
      report::chakra::Traces t = two_ranks();
      t[1][1].group_ranks = {0};
      CHECK(error_of(t, dir) ==
            (dir / "stepcast.1.et").string() + ": node 1 (dp all-reduce): group \"dp\" does not hold rank 1");
    }
    {
      const Scratch dir_scratch("peer");
      const fs::path& dir = dir_scratch.dir;
      report::chakra::Traces t = two_ranks();
      t[0][2].peer = 2;
      CHECK(error_of(t, dir) == (dir / "stepcast.0.et").string() +
                                    ": node 2 (activation to stage 1) sends to rank 2: the peer must be another of "
                                    "the 2 ranks");
    }
  }

  TEST_CASE("a rank's name taken by a folder is refused before any file is written") {
    // Only a regular file or a new name is replaced (stepcast/core/output_file.hpp).
    const Scratch dir_scratch("rename");
    const fs::path& dir = dir_scratch.dir;
    fs::create_directories(dir / "stepcast.1.et" / "occupied");
    CHECK(error_of(two_ranks(), dir) ==
          (dir / "stepcast.1.et").string() +
              ": cannot write the output file: it is a folder; give the name of a file (new or to replace)");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    CHECK(names == std::vector<std::string>{"stepcast.1.et"});
  }

  TEST_CASE("a truncated file is refused when read") {
    const Scratch dir_scratch("truncated");
    const fs::path& dir = dir_scratch.dir;
    report::chakra::write_chakra(dir, two_ranks());
    const std::string bytes = read_bytes(dir / "stepcast.0.et");
    std::ofstream(dir / "stepcast.0.et", std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 3);
    CHECK_THROWS_AS(report::chakra::read_chakra(dir, 0), InputError);
  }
}

}  // namespace chakra_trace_test
