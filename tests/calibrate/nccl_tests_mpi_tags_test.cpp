// An nccl-tests log of 128 ranks under OpenMPI's --tag-output, where OpenMPI forwarded some lines in
// two pieces and tagged each, leaving a tag inside the host name ("node-[1,0]<stdout>:00000C").
// The expected counts are read off tests/data/nccl-tests/forms/mpirun_tag_inside_hostname.log:
// ranks 0-127 on node-000000 ... node-00000F, eight each; rows on lines 141-145.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"

namespace nccl_tests_mpi_tags_test {

using stepcast::calibrate::Measurements;
using stepcast::calibrate::parse_nccl_tests_log;
using stepcast::calibrate::read_measurements;

TEST_SUITE("calibrate.nccl_tests_mpi_tags") {
  TEST_CASE("tags inside Rank lines and rows are taken out wherever they fall, other brackets kept") {
    // Two ranks on host-a, two on host-b; the tags cut a host name, a device name and a row.
    const std::string text =
        "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid 11 on host-a device  0 [0000:1b:00] NVIDIA H100\n"
        "[1,0]<stdout>:#  Rank  1 Group  0 Pid 12 on ho[1,0]<stdout>:st-a device  1 [0000:2a:00] NVIDIA H100\n"
        "[1,0]<stdout>:#  Rank  2 Group  0 Pid 13 on host-b device  0 [0000:1b:00] NVI[1,0]<stderr>:DIA H100\n"
        "[1,0]<stdout>:#  Rank  3 Group  0 Pid 14 on host-b[1,0]<stdout>: device  1 [0000:2a:00] NVIDIA H100\n"
        "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
        "algbw   busbw #wrong\n"
        "[1,0]<stdout>:     1048576        262144     float     sum      -1    40.00   26.21[1,0]<stdout>:   39.32     "
        " 0 "
        "   40.00   26.21   39.32      0\n";
    const Measurements m = parse_nccl_tests_log(text, "tagged.log");
    REQUIRE(m.runs.size() == 1);
    CHECK(m.runs[0].ranks == 4);
    CHECK(m.runs[0].hosts == 2);
    CHECK(m.runs[0].devices[2] == "NVIDIA H100");
    REQUIRE(m.runs[0].points.size() == 1);
    CHECK(m.runs[0].points[0].out_of_place.busbw.value() == doctest::Approx(39.32e9));
  }

  TEST_CASE("the 128-rank log with tags inside two host names reads as 16 hosts of 8 ranks") {
    const std::string log =
        std::string(STEPCAST_SOURCE_DIR) + "/tests/data/nccl-tests/forms/mpirun_tag_inside_hostname.log";
    const Measurements m = read_measurements(log);
    REQUIRE(m.runs.size() == 1);
    const auto& run = m.runs[0];
    CHECK(run.program == "all_reduce_perf");
    CHECK(run.ranks == 128);
    CHECK(run.hosts == 16);
    CHECK(run.devices[100] == "NVIDIA A100-SXM4-80GB");
    REQUIRE(run.points.size() == 5);
    CHECK(run.points[0].line == 141);
    CHECK(run.points[0].size.value() == 1048576.0);
    // Line 145: 8589934592 B in 86890.0 us out of place.
    CHECK(run.points[4].line == 145);
    CHECK(run.points[4].out_of_place.time.value() == doctest::Approx(86890.0e-6));
  }
}

}  // namespace nccl_tests_mpi_tags_test
