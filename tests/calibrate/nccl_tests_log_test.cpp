// The nccl-tests reader against real public logs (tests/data/nccl-tests/, sources in their first
// lines): point counts and spot values are read off the logs' text by eye, never from the reader.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/core/errors.hpp"
#include "support/input_error_text.hpp"

namespace nccl_tests_log_test {

using stepcast::Bytes;
using stepcast::InputError;
using stepcast::calibrate::Measurements;
using stepcast::calibrate::parse_nccl_tests_log;
using stepcast::calibrate::read_measurements;
using stepcast::cost::CollectiveOp;

namespace {

std::string data(const std::string& name) {
  return std::string(STEPCAST_SOURCE_DIR) + "/tests/data/nccl-tests/" + name;
}

// Times in the logs are microseconds; bandwidths GB/s (1e9 B/s).
double us(double v) { return v * 1e-6; }
double gbs(double v) { return v * 1e9; }

// A run's preamble and header as nccl-tests prints them (lines 1-4), and one row of it (line 5).
const std::string kHead =
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 "
    "graph: 0\n"
    "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0x07] NVIDIA A100-SXM4-40GB\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n";
const std::string kRow =
    "           8             2     float     sum      -1    10.00    0.00    0.00      0    11.00    0.00    0.00     "
    " 0\n";

std::string error_of(std::string_view text, const std::string& origin) {
  return stepcast::test::input_error_text([&] { (void)parse_nccl_tests_log(text, origin); });
}

}  // namespace

TEST_SUITE("calibrate.nccl_tests_log") {
  TEST_CASE("H100 8-GPU five-collective log: five runs of ten sizes, 8 ranks on one host") {
    const Measurements m = read_measurements(data("nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt"));
    REQUIRE(m.runs.size() == 5);
    const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                CollectiveOp::kAllToAll, CollectiveOp::kSendRecv};
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(m.runs[i].op == ops[i]);
      CHECK(m.runs[i].points.size() == 10);
      // The alltoall and sendrecv runs print no "# Rank" lines; they ran on the same 8 GPUs.
      CHECK(m.runs[i].ranks == 8);
      CHECK(m.runs[i].hosts == 1);
    }
    const auto& ar = m.runs[0];
    CHECK(ar.program == "all_reduce_perf");
    CHECK(ar.devices[0] == "NVIDIA H100 80GB HBM3");
    // "    33554432       4194304    double     sum      -1   182.87  183.49  321.10       0   182.88  183.48  321.08
    // 0"
    CHECK(ar.points[0].size == Bytes(33554432));
    CHECK(ar.points[0].count == 4194304);
    CHECK(ar.points[0].type == "double");
    CHECK(ar.points[0].out_of_place.time.value() == doctest::Approx(us(182.87)));
    CHECK(ar.points[0].out_of_place.algbw.value() == doctest::Approx(gbs(183.49)));
    CHECK(ar.points[0].out_of_place.busbw.value() == doctest::Approx(gbs(321.10)));
    CHECK(ar.points[0].in_place->busbw.value() == doctest::Approx(gbs(321.08)));
    // "   536870912      67108864    double     sum      -1  2115.28  253.81  444.16 ..."
    CHECK(ar.points[4].size == Bytes(536870912));
    CHECK(ar.points[4].out_of_place.time.value() == doctest::Approx(us(2115.28)));
    // " 17179869184    2147483648    double     sum      -1  62340.7  275.58  482.27 ..."
    CHECK(ar.points[9].size == Bytes(17179869184.0));
    CHECK(ar.points[9].out_of_place.time.value() == doctest::Approx(us(62340.7)));
    // "# Avg bus bandwidth    : 437.957 "
    CHECK(ar.avg_busbw->value() == doctest::Approx(gbs(437.957)));
    // sendrecv's in-place #wrong column reads N/A: the timing is kept, the check count is not.
    const auto& sr = m.runs[4].points[9];
    CHECK(sr.out_of_place.time.value() == doctest::Approx(us(46779.2)));
    REQUIRE(sr.in_place.has_value());
    CHECK(sr.in_place->time.value() == doctest::Approx(us(46782.8)));
    CHECK_FALSE(sr.in_place->wrong.has_value());
    CHECK(m.runs[4].avg_busbw->value() == doctest::Approx(gbs(279.874)));
  }

  TEST_CASE("H100 4-GPU and 80-rank logs: five runs each with the ranks and hosts of their Rank lines") {
    const Measurements four = read_measurements(data("nccl-tests_5coll_H100_1node_4gpu_xxrjun.txt"));
    REQUIRE(four.runs.size() == 5);
    CHECK(four.runs[0].ranks == 4);
    // "    33554432       4194304    double     sum      -1   171.88  195.22  292.83 ..."
    CHECK(four.runs[0].points[0].out_of_place.time.value() == doctest::Approx(us(171.88)));
    const Measurements eighty = read_measurements(data("nccl-tests_5coll_H100_10nodes_8gpn_80ranks_xxrjun.txt"));
    REQUIRE(eighty.runs.size() == 5);
    CHECK(eighty.runs[0].ranks == 80);
    CHECK(eighty.runs[0].hosts == 10);
    CHECK(eighty.runs[0].points[0].out_of_place.time.value() == doctest::Approx(us(798.52)));
    // Last row of the file: " 17179869184    2147483648    double     sum      -1  1128428   15.22   15.22 ..."
    CHECK(eighty.runs[4].op == CollectiveOp::kSendRecv);
    CHECK(eighty.runs[4].points.back().out_of_place.time.value() == doctest::Approx(us(1128428)));
  }

  TEST_CASE("Polaris logs: the collective comes from the file name, 29 sizes from 4 B (or 0 B) to 1 GiB") {
    const Measurements ar = read_measurements(data("nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf.txt"));
    REQUIRE(ar.runs.size() == 1);
    const auto& run = ar.runs[0];
    CHECK(run.op == CollectiveOp::kAllReduce);
    CHECK(run.ranks == 8);
    CHECK(run.hosts == 2);
    CHECK(run.devices[7] == "NVIDIA A100-SXM4-40GB");
    REQUIRE(run.points.size() == 29);
    // "           4             1     float     sum      -1    36.90    0.00    0.00      0    32.69 ..."
    CHECK(run.points[0].size == Bytes(4));
    CHECK(run.points[0].out_of_place.time.value() == doctest::Approx(us(36.90)));
    CHECK(run.points[0].in_place->time.value() == doctest::Approx(us(32.69)));
    // "      131072         32768     float     sum      -1    370.8    0.35    0.62 ..."
    CHECK(run.points[15].size == Bytes(131072));
    CHECK(run.points[15].out_of_place.time.value() == doctest::Approx(us(370.8)));
    // "  1073741824     268435456     float     sum      -1    51310   20.93   36.62 ..."
    CHECK(run.points[28].out_of_place.time.value() == doctest::Approx(us(51310)));
    CHECK(run.points[28].out_of_place.busbw.value() == doctest::Approx(gbs(36.62)));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(9.76937)));

    const Measurements ag = read_measurements(data("nccl-tests_allgather_A100-40GB_polaris_2nodes_8ranks_alcf.txt"));
    CHECK(ag.runs[0].op == CollectiveOp::kAllGather);
    REQUIRE(ag.runs[0].points.size() == 29);
    // "           0             0     float    none      -1     0.26 ..."
    CHECK(ag.runs[0].points[0].size == Bytes(0));
    CHECK(ag.runs[0].points[28].out_of_place.time.value() == doctest::Approx(us(25755)));
    const Measurements a2a = read_measurements(data("nccl-tests_alltoall_A100-40GB_polaris_2nodes_8ranks_alcf.txt"));
    CHECK(a2a.runs[0].op == CollectiveOp::kAllToAll);
    CHECK(a2a.runs[0].points[28].out_of_place.time.value() == doctest::Approx(us(110914)));
    const Measurements big = read_measurements(data("nccl-tests_allreduce_A100-40GB_polaris_8nodes_32ranks_alcf.txt"));
    CHECK(big.runs[0].ranks == 32);
    CHECK(big.runs[0].hosts == 8);
    CHECK(big.runs[0].points[28].out_of_place.time.value() == doctest::Approx(us(57191)));
  }

  TEST_CASE("PCIe pair log: the shell prompt's command line names the program, 28 sizes from 8 B") {
    const Measurements m = read_measurements(data("nccl-tests_allreduce_2xRTX2080Ti_PCIe_autodl_anthonyhoo.txt"));
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].program == "all_reduce_perf");
    CHECK(m.runs[0].ranks == 2);
    REQUIRE(m.runs[0].points.size() == 28);
    CHECK(m.runs[0].points[0].size == Bytes(8));
    CHECK(m.runs[0].points[0].out_of_place.time.value() == doctest::Approx(us(12.25)));
    // "     1048576        262144     float     sum      -1    279.5    3.75    3.75 ..."
    CHECK(m.runs[0].points[17].out_of_place.time.value() == doctest::Approx(us(279.5)));
    CHECK(m.runs[0].points[27].out_of_place.time.value() == doctest::Approx(us(268588)));
    CHECK(m.runs[0].avg_busbw->value() == doctest::Approx(gbs(2.05774)));
  }

  TEST_CASE("NCCL INFO/WARN lines and MPI banners between the lines of a log are skipped") {
    const std::string text =
        "--------------------------------------------------------------------------\n"
        "WARNING: There was an error initializing an OpenFabrics device.\n"
        "# Collective test starting: broadcast_perf\n"
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: "
        "1 graph: 0\n"
        "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0x07] NVIDIA A100-SXM4-40GB\n"
        "#  Rank  1 Group  0 Pid 1 on hostA device  1 [0x46] NVIDIA A100-SXM4-40GB\n"
        "hostA:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n"
        "           8             2     float    none       0    10.00    0.00    0.00      0    11.00    0.00    0.00 "
        "     0\n"
        "hostA:1:1 [1] NCCL WARN Cuda failure 'out of memory'\n"
        "          16             4     float    none       0    20.00    0.00    0.00      0    21.00    0.00    0.00 "
        "     0\n"
        "# Avg bus bandwidth    : 0.001\n";
    const Measurements m = parse_nccl_tests_log(text, "synthetic.log");
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kBroadcast);
    REQUIRE(m.runs[0].points.size() == 2);
    CHECK(m.runs[0].points[1].out_of_place.time.value() == doctest::Approx(us(20.0)));
    CHECK(m.runs[0].points[1].line == 11);
  }

  TEST_CASE("bad logs: empty and foreign files, and a table whose only row is cut off, name the file and line") {
    CHECK(error_of("", "empty.log") ==
          "empty.log: the file is empty, expected nccl-tests output (all_reduce_perf and the like)");
    CHECK(error_of("hello\nworld\n", "foreign.txt") ==
          "foreign.txt: not an nccl-tests log: no result table found (expected a \"#  size  count  type ...\" header "
          "followed by result rows, as all_reduce_perf and the other nccl-tests programs print)");
    CHECK(error_of(kHead + "          16             4     float     sum      -1    20.00    0.0\n", "half.log") ==
          "half.log:5: no result row could be read: a result row cut off after 7 of its 13 columns (size count type "
          "redop root time algbw busbw #wrong time algbw busbw #wrong)");
    // A program nccl-tests has and stepcast does not model: left out, and nothing else is there.
    CHECK(error_of("# Collective test starting: gather_perf\n" + kHead.substr(kHead.find('\n') + 1) + kRow,
                   "gather.log") ==
          "gather.log:1: no run could be read: a run of \"gather_perf\", which is no collective stepcast models: the "
          "run is left out");
  }

  TEST_CASE("a run cut before its summary is read with a note, a row cut mid-line is skipped, naming its line") {
    const Measurements cut = parse_nccl_tests_log(kHead + kRow, "cut.log");
    REQUIRE(cut.runs.size() == 1);
    CHECK(cut.runs[0].points.size() == 1);
    CHECK_FALSE(cut.runs[0].avg_busbw.has_value());
    REQUIRE(cut.notes.size() == 1);
    CHECK(cut.notes[0].line == 5);
    CHECK(cut.notes[0].text ==
          "the run that starts at line 1 has no \"# Avg bus bandwidth\" line (the file ends after "
          "its last row); its 1 row is read");

    const Measurements half = parse_nccl_tests_log(
        kHead + kRow + "          16             4     float     sum      -1    20.00    0.0\n", "half.log");
    REQUIRE(half.runs.size() == 1);
    CHECK(half.runs[0].points.size() == 1);
    REQUIRE(half.skipped.size() == 1);
    CHECK(half.skipped[0].line == 6);
    CHECK(half.skipped[0].kind == stepcast::calibrate::SkippedLine::Kind::kResultRow);

    // A line of vertical tab only (whitespace to the tokenizer, not a blank to the line trimmer),
    // found by the nccl_tests_log fuzz target: neither a row nor a skipped line.
    const Measurements vtab = parse_nccl_tests_log(kHead + kRow + "\v\n", "vtab.log");
    CHECK(vtab.runs[0].points.size() == 1);
    CHECK(vtab.skipped.empty());
  }

  TEST_CASE("2025 per-iteration columns (i_min i_max i_p99 i_cv% after each #wrong) are stepped over") {
    // The header as nccl-tests' src/util.cu writeResultHeader prints it with per-iteration timing.
    const std::string text =
        "# Collective test starting: all_gather_perf\n"
        "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0000:07:00] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 2 on hostA device  1 [0000:0f:00] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    "
        "i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%\n"
        "     1048576        131072     float    none      -1    20.50   51.15   25.58       0    19.90    22.10    "
        "21.80     2.31    20.10   52.17   26.09       0    19.70    21.40    21.20     1.95\n";
    const Measurements m = parse_nccl_tests_log(text, "per_iteration.log");
    REQUIRE(m.runs.size() == 1);
    REQUIRE(m.runs[0].points.size() == 1);
    const auto& p = m.runs[0].points[0];
    // Row (line 5): out-of-place time 20.50 us, busbw 25.58; in-place (after i_cv% 2.31) 20.10 us, busbw 26.09.
    CHECK(p.out_of_place.time.value() == doctest::Approx(us(20.50)));
    CHECK(p.out_of_place.busbw.value() == doctest::Approx(gbs(25.58)));
    CHECK(p.in_place->time.value() == doctest::Approx(us(20.10)));
    CHECK(p.in_place->busbw.value() == doctest::Approx(gbs(26.09)));
    CHECK(m.runs[0].ranks == 2);
  }

  TEST_CASE("Polaris all-reduce log cut after its 12th row: the 12 rows are read, the missing summary noted") {
    // tests/data/nccl-tests/nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf_cut.txt is the
    // Polaris 2-node log (sources in its first lines) cut after line 30, the row of 8192 B.
    const Measurements m = read_measurements(data("nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf_cut.txt"));
    REQUIRE(m.runs.size() == 1);
    REQUIRE(m.runs[0].points.size() == 12);
    // Line 30: "        8192          2048     float     sum      -1    54.50    0.15    0.26      0    43.85 ..."
    CHECK(m.runs[0].points[11].size == Bytes(8192));
    CHECK(m.runs[0].points[11].out_of_place.time.value() == doctest::Approx(us(54.50)));
    CHECK(m.runs[0].points[11].in_place->time.value() == doctest::Approx(us(43.85)));
    REQUIRE(m.notes.size() == 1);
    CHECK(m.notes[0].line == 30);
  }

}  // TEST_SUITE

}  // namespace nccl_tests_log_test
