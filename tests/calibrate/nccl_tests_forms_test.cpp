// The nccl-tests reader against the forms logs take in the wild (tests/data/nccl-tests/forms/: small
// logs written for these tests, each naming the form it reproduces in its first lines). Every
// expected row count, line number and figure below is read off the log's text by eye.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/core/errors.hpp"
#include "support/input_error_text.hpp"

namespace nccl_tests_forms_test {

using stepcast::Bytes;
using stepcast::calibrate::Measurements;
using stepcast::calibrate::read_measurements;
using stepcast::calibrate::RunFacts;
using stepcast::calibrate::SkippedLine;
using stepcast::cost::CollectiveOp;

namespace {

std::string form(const std::string& name) {
  return std::string(STEPCAST_SOURCE_DIR) + "/tests/data/nccl-tests/forms/" + name;
}

// Times in the logs are microseconds (milliseconds in the 2016 form); bandwidths GB/s (1e9 B/s).
double us(double v) { return v * 1e-6; }
double gbs(double v) { return v * 1e9; }

int skipped(const Measurements& m, SkippedLine::Kind kind) {
  int n = 0;
  for (const auto& s : m.skipped) n += s.kind == kind ? 1 : 0;
  return n;
}

std::string error_reading(const std::string& name, const RunFacts& facts = {}) {
  return stepcast::test::input_error_text([&] { (void)read_measurements(form(name), facts); });
}

}  // namespace

TEST_SUITE("calibrate.nccl_tests_forms") {
  TEST_CASE("mpirun --tag-output: tags stripped, other ranks' NCCL INFO lines skipped, --op names the collective") {
    // Nothing in the log names the program: without --op the run cannot be read (line 5 is "# nThread").
    CHECK(error_reading("mpirun_tag_output.log") ==
          form("mpirun_tag_output.log") +
              ":5: cannot tell which collective this run measured: no \"# Collective test starting:\" line, no command "
              "line naming an nccl-tests program (all_reduce_perf, ...), and the file name names none (pass --op)");
    RunFacts facts;
    facts.op = CollectiveOp::kAllReduce;
    const Measurements m = read_measurements(form("mpirun_tag_output.log"), facts);
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kAllReduce);
    CHECK(run.program == "all_reduce_perf (from --op)");
    // Lines 8-15: ranks 0-3 on x1002c0s2b1n0, ranks 4-7 on x1002c0s3b0n0.
    CHECK(run.ranks == 8);
    CHECK(run.hosts == 2);
    CHECK(run.devices[7] == "NVIDIA A100-SXM4-40GB");
    // Rows on lines 22-25 and 28-31.
    REQUIRE(run.points.size() == 8);
    // Line 22: "1024  256  float  sum  -1  34.66  0.03  0.05  0  33.98  0.03  0.05  0"
    CHECK(run.points[0].line == 22);
    CHECK(run.points[0].size == Bytes(1024));
    CHECK(run.points[0].count == 256);
    CHECK(run.points[0].out_of_place.time.value() == doctest::Approx(us(34.66)));
    CHECK(run.points[0].out_of_place.busbw.value() == doctest::Approx(gbs(0.05)));
    CHECK(run.points[0].in_place->time.value() == doctest::Approx(us(33.98)));
    // Line 31: "16777216  4194304  float  sum  -1  2719.6  6.17  10.80  0  2716.4 ..."
    CHECK(run.points[7].line == 31);
    CHECK(run.points[7].size == Bytes(16777216));
    CHECK(run.points[7].out_of_place.time.value() == doctest::Approx(us(2719.6)));
    CHECK(run.points[7].out_of_place.busbw.value() == doctest::Approx(gbs(10.80)));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(4.52812)));
    // NCCL INFO lines 4, 16, 17, 26 and 27; line 35 is a tag with nothing after it.
    CHECK(m.skipped.size() == 5);
    CHECK(skipped(m, SkippedLine::Kind::kNcclDebug) == 5);
    CHECK(m.skipped[3].line == 26);
    CHECK(m.notes.empty());
  }

  TEST_CASE("srun --label: padded task numbers stripped, srun's own lines and other tasks' lines skipped") {
    const Measurements m = read_measurements(form("srun_label.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kAllGather);  // line 7: "# Collective test starting: all_gather_perf"
    CHECK(run.program == "all_gather_perf");
    CHECK(run.ranks == 16);  // lines 11-26
    CHECK(run.hosts == 2);
    REQUIRE(run.points.size() == 8);  // lines 32-33 and 35-40
    // Line 35: "4194304  65536  float  none  -1  82.95  50.56  47.40  0  81.40 ..."
    CHECK(run.points[2].line == 35);
    CHECK(run.points[2].size == Bytes(4194304));
    CHECK(run.points[2].count == 65536);
    CHECK(run.points[2].type == "float");
    CHECK(run.points[2].out_of_place.time.value() == doctest::Approx(us(82.95)));
    // Line 40: "134217728  2097152  float  none  -1  1321.5  101.56  95.22  0  1318.0  101.83  95.47  0"
    CHECK(run.points[7].out_of_place.time.value() == doctest::Approx(us(1321.5)));
    CHECK(run.points[7].out_of_place.algbw.value() == doctest::Approx(gbs(101.56)));
    CHECK(run.points[7].in_place->busbw.value() == doctest::Approx(gbs(95.47)));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(64.66)));
    CHECK(skipped(m, SkippedLine::Kind::kOther) == 2);      // lines 4-5, srun's messages
    CHECK(skipped(m, SkippedLine::Kind::kNcclDebug) == 2);  // lines 27 and 34, tasks 11 and 9
    CHECK(m.notes.empty());
  }

  TEST_CASE("torchrun [rank0]: tags stripped, the collective comes from the file name") {
    const Measurements m = read_measurements(form("torchrun_rank_prefix_broadcast.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kBroadcast);
    CHECK(run.program == "broadcast_perf (from the file name)");
    CHECK(run.ranks == 4);
    CHECK(run.hosts == 1);
    CHECK(run.devices[0] == "NVIDIA A100 80GB PCIe");
    REQUIRE(run.points.size() == 6);  // lines 19-24
    // Line 19: "65536  16384  float  none  0  19.87  3.30  3.30  0  19.52  3.36  3.36  0"
    CHECK(run.points[0].size == Bytes(65536));
    CHECK(run.points[0].out_of_place.time.value() == doctest::Approx(us(19.87)));
    CHECK(run.points[0].out_of_place.algbw.value() == doctest::Approx(gbs(3.30)));
    // Line 24: "67108864  16777216  float  none  0  2470.8  27.16  27.16  0  2468.1 ..."
    CHECK(run.points[5].out_of_place.time.value() == doctest::Approx(us(2470.8)));
    CHECK(run.points[5].in_place->time.value() == doctest::Approx(us(2468.1)));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(18.1608)));
    CHECK(skipped(m, SkippedLine::Kind::kOther) == 3);      // torchrun's warning, lines 4-6
    CHECK(skipped(m, SkippedLine::Kind::kNcclDebug) == 1);  // line 14, rank 3
  }

  TEST_CASE("CRLF line ends read as LF ones") {
    const Measurements m = read_measurements(form("crlf_line_ends.log"));
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kReduceScatter);
    CHECK(m.runs[0].ranks == 8);
    CHECK(m.runs[0].devices[7] == "NVIDIA H100 80GB HBM3");  // no "\r" left at the end of the name
    REQUIRE(m.runs[0].points.size() == 5);                   // lines 20-24
    // Line 24: "134217728  4194304  float  sum  -1  583.0  230.22  201.44  0  581.7  230.73  201.89  0"
    CHECK(m.runs[0].points[4].size == Bytes(134217728));
    CHECK(m.runs[0].points[4].out_of_place.time.value() == doctest::Approx(us(583.0)));
    CHECK(m.runs[0].points[4].in_place->busbw.value() == doctest::Approx(gbs(201.89)));
    CHECK(m.runs[0].points[4].in_place->wrong == 0.0);
    CHECK(m.runs[0].avg_busbw->value() == doctest::Approx(gbs(177.167)));  // line 26, "177.167 \r"
    CHECK(m.skipped.empty());
  }

  TEST_CASE("2019 columns: no root column, validation's float error column, program from the command line") {
    const Measurements m = read_measurements(form("validation_float_error_2019.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.program == "all_reduce_perf");  // line 4: "$ ./build/all_reduce_perf -b 8 -e 2M -f 8 -g 8"
    CHECK(run.op == CollectiveOp::kAllReduce);
    CHECK(run.ranks == 8);  // lines 8-15, "#   Rank  0 Pid  21870 on    dgx1-04 device  0 [0x06] ..."
    CHECK(run.hosts == 1);
    CHECK(run.devices[0] == "Tesla V100-SXM2-16GB");
    REQUIRE(run.points.size() == 7);  // lines 20-26
    // Line 22: "512  128  float  sum  28.02  0.02  0.03  1e-07  27.58  0.02  0.03  0e+00"
    CHECK(run.points[2].size == Bytes(512));
    CHECK(run.points[2].type == "float");
    CHECK(run.points[2].out_of_place.time.value() == doctest::Approx(us(28.02)));
    CHECK(run.points[2].out_of_place.wrong == doctest::Approx(1e-7));
    CHECK(run.points[2].in_place->wrong == 0.0);
    // Line 26: "2097152  524288  float  sum  291.3  7.20  12.60  2e-07  289.8  7.24  12.66  2e-07"
    CHECK(run.points[6].out_of_place.time.value() == doctest::Approx(us(291.3)));
    CHECK(run.points[6].out_of_place.busbw.value() == doctest::Approx(gbs(12.60)));
    CHECK(run.points[6].in_place->time.value() == doctest::Approx(us(289.8)));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(2.76143)));
    CHECK(m.skipped.empty());
  }

  TEST_CASE("2019 per-test headers: all_gather without redop and root, broadcast with root only, two runs") {
    const Measurements m = read_measurements(form("per_test_headers_2019.log"));
    REQUIRE(m.runs.size() == 2);
    const auto& ag = m.runs[0];
    CHECK(ag.op == CollectiveOp::kAllGather);
    CHECK(ag.first_line == 5);
    CHECK(ag.ranks == 4);
    REQUIRE(ag.points.size() == 6);  // lines 16-21
    // Line 19: "262144  16384  float  30.45  8.61  6.46  0e+00  29.98  8.74  6.56  0e+00"
    CHECK(ag.points[3].size == Bytes(262144));
    CHECK(ag.points[3].count == 16384);
    CHECK(ag.points[3].out_of_place.time.value() == doctest::Approx(us(30.45)));
    CHECK(ag.points[3].out_of_place.busbw.value() == doctest::Approx(gbs(6.46)));
    CHECK(ag.points[3].in_place->algbw.value() == doctest::Approx(gbs(8.74)));
    CHECK(ag.avg_busbw->value() == doctest::Approx(gbs(5.2625)));
    const auto& bc = m.runs[1];
    CHECK(bc.op == CollectiveOp::kBroadcast);
    CHECK(bc.first_line == 26);
    REQUIRE(bc.points.size() == 6);  // lines 37-42
    // Line 42: "4194304  1048576  float  0  341.8  12.27  12.27  0e+00  340.2  12.33  12.33  0e+00"
    CHECK(bc.points[5].count == 1048576);
    CHECK(bc.points[5].out_of_place.time.value() == doctest::Approx(us(341.8)));
    CHECK(bc.points[5].in_place->time.value() == doctest::Approx(us(340.2)));
    CHECK(bc.avg_busbw->value() == doctest::Approx(gbs(5.95417)));
  }

  TEST_CASE("2016-2017 columns: bytes N type op, time in milliseconds, summary lines without #") {
    const Measurements m = read_measurements(form("columns_2016_milliseconds.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kAllReduce);  // line 5 runs ./build/all_reduce_perf
    CHECK(run.ranks == 4);
    CHECK(run.hosts == 1);
    CHECK(run.devices[3] == "Tesla P100-SXM2-16GB");
    REQUIRE(run.points.size() == 4);  // lines 14-17, one size and four ops
    // Line 14: "33554432  8388608  float  sum  3.412  9.83  14.75  2e-07  3.389  9.90  14.85  2e-07":
    // 3.412 ms = 3412 us; check: 33554432 B / 3.412e-3 s = 9.83e9 B/s, the algbw printed.
    CHECK(run.points[0].size == Bytes(33554432));
    CHECK(run.points[0].out_of_place.time.value() == doctest::Approx(3.412e-3));
    CHECK(run.points[0].out_of_place.algbw.value() == doctest::Approx(gbs(9.83)));
    CHECK(run.points[0].out_of_place.wrong == doctest::Approx(2e-7));
    // Line 17: "... min  3.401  9.87  14.80  0e+00  3.395 ..."
    CHECK(run.points[3].out_of_place.time.value() == doctest::Approx(3.401e-3));
    CHECK(run.points[3].in_place->time.value() == doctest::Approx(3.395e-3));
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(14.815)));  // line 19, " Avg bus bandwidth    : 14.815"
    CHECK(m.skipped.empty());
    CHECK(m.notes.empty());
  }

  TEST_CASE("-G (CUDA graphs): the parameters say graph: 10, the columns are the usual ones") {
    const Measurements m = read_measurements(form("cuda_graph_launches.log"));
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kAllReduce);
    CHECK(m.runs[0].ranks == 8);
    REQUIRE(m.runs[0].points.size() == 4);  // lines 22-25
    // Line 25: "524288  131072  float  sum  -1  24.65  21.27  37.22  0  24.31  21.57  37.74  0"
    CHECK(m.runs[0].points[3].out_of_place.time.value() == doctest::Approx(us(24.65)));
    CHECK(m.runs[0].points[3].in_place->busbw.value() == doctest::Approx(gbs(37.74)));
    CHECK(m.runs[0].avg_busbw->value() == doctest::Approx(gbs(12.25)));
  }

  TEST_CASE("2025 columns: cputime, #bitdiff after each #wrong, a two-word timestamp, #wrong as %g") {
    const Measurements m = read_measurements(form("columns_2025_cputime_bitdiff_timestamp.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kReduce);
    CHECK(run.ranks == 8);
    REQUIRE(run.points.size() == 3);  // lines 23-25
    // Line 23: "16777216  4194304  float  sum  0  96.12  174.54  174.54  0  0  95.80  175.13  175.13  0  0
    // 2025-11-03 14:22:07"
    CHECK(run.points[0].out_of_place.time.value() == doctest::Approx(us(96.12)));
    CHECK(run.points[0].in_place->time.value() == doctest::Approx(us(95.80)));
    CHECK(run.points[0].in_place->busbw.value() == doctest::Approx(gbs(175.13)));
    // Line 25: "67108864  16777216  float  sum  0  341.9  196.28  196.28  1.67772e+07  0  341.2 ..."
    CHECK(run.points[2].out_of_place.time.value() == doctest::Approx(us(341.9)));
    CHECK(run.points[2].out_of_place.wrong == doctest::Approx(1.67772e7));
    CHECK(run.points[2].in_place->wrong == 0.0);
    CHECK(run.avg_busbw->value() == doctest::Approx(gbs(186.555)));
    CHECK(m.skipped.empty());
  }

  TEST_CASE("MPI help messages inside the table are skipped, with and without their [host:pid] prefix") {
    const Measurements m = read_measurements(form("mpi_help_messages.log"));
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kAllToAll);
    CHECK(m.runs[0].ranks == 16);
    CHECK(m.runs[0].hosts == 2);
    REQUIRE(m.runs[0].points.size() == 4);  // lines 35, 38, 39, 41
    CHECK(m.runs[0].points[3].line == 41);
    CHECK(m.runs[0].points[3].out_of_place.time.value() == doctest::Approx(us(2398.1)));
    CHECK(m.runs[0].avg_busbw->value() == doctest::Approx(gbs(19.8962)));
    // Lines 4-5 and 7-9, the OpenFabrics warning; 36-37, the bracketed help lines: other text.
    CHECK(skipped(m, SkippedLine::Kind::kOther) == 7);
    // Line 40, "8 more processes have sent help message ...", starts like a row inside the table.
    REQUIRE(skipped(m, SkippedLine::Kind::kResultRow) == 1);
    const SkippedLine& help = m.skipped.back();
    CHECK(help.line == 40);
    CHECK(help.why ==
          "not a whole result row: column 2 (count) reads \"more\" where a whole number of bytes or "
          "elements is expected");
  }

  TEST_CASE("a log cut after its last row is read, with a note that its summary is missing") {
    const Measurements m = read_measurements(form("cut_after_last_row.log"));
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kSendRecv);
    CHECK(m.runs[0].ranks == 2);
    CHECK(m.runs[0].hosts == 2);
    REQUIRE(m.runs[0].points.size() == 6);  // lines 15-20
    // Line 20: "67108864  16777216  float  sum  -1  3462.7  19.38  19.38  0  3461.2  19.39  19.39  0"
    CHECK(m.runs[0].points[5].out_of_place.time.value() == doctest::Approx(us(3462.7)));
    CHECK_FALSE(m.runs[0].avg_busbw.has_value());
    REQUIRE(m.notes.size() == 1);
    CHECK(m.notes[0].line == 20);
    CHECK(m.notes[0].text ==
          "the run that starts at line 4 has no \"# Avg bus bandwidth\" line (the file ends after "
          "its last row); its 6 rows are read");
  }

  TEST_CASE("rows quoted in an issue thread: --ranks and --nodes say what the log does not") {
    CHECK(error_reading("some_rows_quoted.log") ==
          form("some_rows_quoted.log") +
              ":7: no \"#  Rank ... device\" lines: cannot tell how many ranks ran this test (pass --ranks, or --nodes "
              "and --gpus-per-node)");
    RunFacts facts;
    facts.ranks = 16;
    facts.nodes = 2;
    const Measurements m = read_measurements(form("some_rows_quoted.log"), facts);
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.program == "all_reduce_perf");  // line 5: "$ mpirun -np 16 ... ./build/all_reduce_perf ..."
    CHECK(run.ranks == 16);
    CHECK(run.hosts == 2);
    REQUIRE(run.points.size() == 3);  // lines 10, 11 and 13
    // Line 13: "8589934592  2147483648  float  sum  -1  71032  120.93  226.74  0  71011  120.97  226.81  0"
    CHECK(run.points[2].line == 13);
    CHECK(run.points[2].size == Bytes(8589934592.0));
    CHECK(run.points[2].out_of_place.time.value() == doctest::Approx(us(71032)));
    CHECK(skipped(m, SkippedLine::Kind::kOther) == 5);  // "```" on lines 4 and 14, "..." on 6, 9 and 12
    // The rank count from the options, and the missing summary.
    REQUIRE(m.notes.size() == 2);
    CHECK(m.notes[0].text ==
          "the run that starts at line 7 has no \"# Avg bus bandwidth\" line (the file ends after "
          "its last row); its 3 rows are read");
    CHECK(m.notes[1].text == "a run without \"# Rank\" lines: 16 ranks on 2 nodes, as the options say");
  }

  TEST_CASE("a log without Rank lines or program: --op with --nodes and --gpus-per-node, and disagreements refused") {
    RunFacts facts;
    facts.op = CollectiveOp::kAllToAll;
    facts.nodes = 4;
    facts.gpus_per_node = 8;
    const Measurements m = read_measurements(form("no_rank_lines.log"), facts);
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].op == CollectiveOp::kAllToAll);
    CHECK(m.runs[0].ranks == 32);  // 4 nodes x 8
    CHECK(m.runs[0].hosts == 4);
    REQUIRE(m.runs[0].points.size() == 3);  // lines 11-13
    // Line 13: "268435456  2097152  float  none  -1  19690  13.63  13.21  0  19672  13.65  13.22  0"
    CHECK(m.runs[0].points[2].out_of_place.time.value() == doctest::Approx(us(19690)));
    CHECK(m.runs[0].avg_busbw->value() == doctest::Approx(gbs(12.795)));

    // A log that names its collective and ranks is refused when the options say otherwise: both named.
    RunFacts other_op;
    other_op.op = CollectiveOp::kAllReduce;
    CHECK(error_reading("srun_label.log", other_op) ==
          form("srun_label.log") + ":6: the all_gather_perf run measured all-gather, but --op says all-reduce");
    RunFacts other_ranks;
    other_ranks.ranks = 8;
    CHECK(error_reading("srun_label.log", other_ranks) ==
          form("srun_label.log") + ":6: the all_gather_perf run has 16 ranks, but --ranks says 8");
    RunFacts other_nodes;
    other_nodes.nodes = 4;
    CHECK(error_reading("srun_label.log", other_nodes) ==
          form("srun_label.log") + ":6: the all_gather_perf run's ranks ran on 2 hosts, but --nodes says 4");
    RunFacts other_gpn;
    other_gpn.gpus_per_node = 4;
    CHECK(error_reading("srun_label.log", other_gpn) ==
          form("srun_label.log") +
              ":6: the all_gather_perf run has 8 ranks per host (16 ranks on 2 hosts), but --gpus-per-node says 4");
  }

  TEST_CASE(
      "several runs in one file: each program from its command line, a run without Rank lines takes the one before") {
    const Measurements m = read_measurements(form("several_runs.log"));
    REQUIRE(m.runs.size() == 3);
    CHECK(m.runs[0].op == CollectiveOp::kAllReduce);
    CHECK(m.runs[1].op == CollectiveOp::kReduceScatter);
    CHECK(m.runs[2].op == CollectiveOp::kAllGather);
    CHECK(m.runs[0].first_line == 5);
    CHECK(m.runs[1].first_line == 28);
    CHECK(m.runs[2].first_line == 51);
    for (const auto& run : m.runs) {
      CHECK(run.ranks == 8);
      CHECK(run.hosts == 1);
      CHECK(run.points.size() == 4);
    }
    // Line 23: "33554432  8388608  float  sum  -1  874.6  38.37  67.14  0  872.9  38.44  67.27  0"
    CHECK(m.runs[0].points[3].out_of_place.time.value() == doctest::Approx(us(874.6)));
    // Line 43: "4194304  131072  float  sum  -1  78.55  53.40  46.72  0  77.91 ..."
    CHECK(m.runs[1].points[0].count == 131072);
    CHECK(m.runs[1].points[0].out_of_place.time.value() == doctest::Approx(us(78.55)));
    // Line 61: "33554432  1048576  float  none  -1  479.9  69.92  61.18  0  478.4  70.14  61.37  0"
    CHECK(m.runs[2].points[3].out_of_place.busbw.value() == doctest::Approx(gbs(61.18)));
    CHECK(m.runs[2].avg_busbw->value() == doctest::Approx(gbs(54.6388)));
    CHECK(m.skipped.empty());
  }

  TEST_CASE("rows truncated mid-line are skipped, each named with its line, and the rows around them read") {
    const Measurements m = read_measurements(form("rows_truncated_mid_line.log"));
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.op == CollectiveOp::kAllGather);
    CHECK(run.ranks == 24);
    CHECK(run.hosts == 3);
    REQUIRE(run.points.size() == 2);  // lines 37 and 40
    CHECK(run.points[0].line == 37);
    CHECK(run.points[0].size == Bytes(4194240));
    CHECK(run.points[1].line == 40);
    // Line 40: "67108800  699050  float  none  -1  1201.8  55.84  53.51  0  1199.5  55.95  53.62  0"
    CHECK(run.points[1].out_of_place.time.value() == doctest::Approx(us(1201.8)));
    REQUIRE(m.skipped.size() == 5);
    const std::string columns = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";
    CHECK(m.skipped[0].line == 38);  // the row with an NCCL INFO line written into its in-place time
    CHECK(m.skipped[0].kind == SkippedLine::Kind::kResultRow);
    CHECK(m.skipped[0].why ==
          "not a whole result row: column 10 (time) reads \"311gpu-c02:40411:40520\" where a time as a non-negative "
          "number is expected");
    CHECK(m.skipped[1].line == 39);  // ".8   53.81   51.57       0", the rest of that row
    CHECK(m.skipped[1].why ==
          "a piece of a result row broken across lines (it starts with \".8\", not a size in bytes)");
    CHECK(m.skipped[2].line == 41);  // the last row, 9 of its 13 words
    CHECK(m.skipped[2].why == "a result row cut off after 9 of its 13 columns (" + columns + ")");
    CHECK(m.skipped[3].kind == SkippedLine::Kind::kNcclDebug);  // lines 42-43, NCCL's WARN and INFO
    CHECK(m.skipped[4].line == 43);
    REQUIRE(m.notes.size() == 1);
    CHECK(m.notes[0].text ==
          "the run that starts at line 4 has no \"# Avg bus bandwidth\" line (the file ends after "
          "its last row); its 2 rows are read");
  }

}  // TEST_SUITE

}  // namespace nccl_tests_forms_test
