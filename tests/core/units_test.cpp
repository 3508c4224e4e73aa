// Units: parsing, printing and the bits-versus-bytes traps.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/core/units.hpp"

namespace units_test {

using namespace stepcast;

namespace {
std::string unit_error(double (*parse)(const char*), const char* text) {
  try {
    parse(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "no error";
}
double bw(const char* t) { return parse_bandwidth(t).value(); }
double sz(const char* t) { return parse_bytes(t).value(); }
double dur(const char* t) { return parse_duration(t).value(); }
}  // namespace

TEST_SUITE("core.units") {
  TEST_CASE("bandwidth: 400 Gbps is 50e9 bytes per second, GB/s is bytes") {
    CHECK(parse_bandwidth("400 Gbps").value() == doctest::Approx(50e9));
    CHECK(parse_bandwidth("400Gbps").value() == doctest::Approx(50e9));
    CHECK(parse_bandwidth("400 Gbit/s").value() == doctest::Approx(50e9));
    CHECK(parse_bandwidth("400 Gb/s").value() == doctest::Approx(50e9));
    CHECK(parse_bandwidth("50 GB/s").value() == doctest::Approx(50e9));
    CHECK(parse_bandwidth("300 GB/s").value() == doctest::Approx(300e9));
    CHECK(parse_bandwidth("3200 Gbps").value() == doctest::Approx(400e9));
    CHECK(parse_bandwidth("1 GiB/s").value() == doctest::Approx(1073741824.0));
  }

  TEST_CASE("sizes: SI and binary prefixes differ, the seed's 14e9 B is 13.04 GiB") {
    CHECK(parse_bytes("14e9 B").value() == doctest::Approx(14e9));
    CHECK(parse_bytes("13.04 GiB").value() == doctest::Approx(13.04 * 1073741824.0));
    CHECK(parse_bytes("1 GB").value() == doctest::Approx(1e9));
    CHECK(parse_bytes("1 KiB").value() == doctest::Approx(1024.0));
    CHECK(parse_bytes("40 GiB").value() == doctest::Approx(42949672960.0));
    // 7e9 params x 2 bytes printed in GiB: 14e9 / 2^30 = 13.0385 -> "13.04 GiB" (seed).
    CHECK(format_bytes(parse_bytes("14e9 B")) == "13.04 GiB");
  }

  TEST_CASE("durations: us, ms, h") {
    CHECK(parse_duration("2 us").value() == doctest::Approx(2e-6));
    CHECK(parse_duration("1.5 ms").value() == doctest::Approx(1.5e-3));
    CHECK(parse_duration("24 h").value() == doctest::Approx(86400.0));
    CHECK(parse_duration("3 min").value() == doctest::Approx(180.0));
  }

  TEST_CASE("FLOP counts and rates") {
    CHECK(parse_flops_rate("312 TFLOP/s").value() == doctest::Approx(312e12));
    CHECK(parse_flops_rate("989.4 TFLOPS").value() == doctest::Approx(989.4e12));
    CHECK(parse_flops("3.5 PFLOP").value() == doctest::Approx(3.5e15));
  }

  TEST_CASE("printing: seed figures and round trips") {
    CHECK(format_seconds(seconds(0.28)) == "0.280 s");
    CHECK(format_seconds(seconds(0.525)) == "0.525 s");
    CHECK(format_seconds(microseconds(2.0)) == "2.000 us");
    CHECK(format_seconds(seconds(0.0408333)) == "40.833 ms");
    CHECK(format_bandwidth(gbit_per_s(400)) == "50.00 GB/s");
    CHECK(format_gbps(gbyte_per_s(50)) == "400 Gbps");
    CHECK(format_bytes(bytes(512)) == "512 B");
    // Huge figures in scientific notation: 1e30 B / 2^40 = 9.095e17 TiB; 3.75e18 s stays 3.750e+18 s.
    CHECK(format_bytes(bytes(1e30)) == "9.095e+17 TiB");
    CHECK(format_seconds(seconds(3.75e18)) == "3.750e+18 s");
    CHECK(format_seconds(seconds(86400.0)) == "86400.000 s");
    for (const char* text : {"13.04 GiB", "1.50 MiB", "2.00 KiB", "3.25 TiB"}) {
      CHECK(format_bytes(parse_bytes(text)) == text);
    }
    // An input pipeline's 7.2 samples/s of 4096 two-byte tokens is 58,982 B/s, not "0.00 GB/s".
    CHECK(format_bandwidth(BytesPerSecond(7.2 * 4096 * 2)) == "58.98 kB/s");
    CHECK(format_bandwidth(gbyte_per_s(0.5)) == "500.00 MB/s");
    CHECK(format_bandwidth(BytesPerSecond(0.0)) == "0.00 GB/s");
    for (double g : {0.5, 50.0, 300.0, 12.5, 0.0005, 2e-9}) {
      CHECK(parse_bandwidth(format_bandwidth(gbyte_per_s(g))).value() == doctest::Approx(g * 1e9));
    }
    CHECK(parse_bandwidth(format_gbps(gbit_per_s(400))).value() == doctest::Approx(50e9));
  }

  TEST_CASE("typed arithmetic: bytes over bandwidth is seconds") {
    const Seconds t = bytes(14e9) / gbit_per_s(400);
    CHECK(t.value() == doctest::Approx(0.28));
    const Bytes moved = gbyte_per_s(50) * seconds(2);
    CHECK(moved.value() == doctest::Approx(100e9));
    CHECK(tflop_per_s(312) * seconds(1) == Flops(312e12));
  }

  TEST_CASE("malformed units: the error shows the text and the units accepted") {
    CHECK(unit_error(bw, "400") ==
          "\"400\": a number without a unit, expected something like \"400 Gbps\"; a bandwidth takes a unit: bits: "
          "bps, Kbps, Mbps, Gbps, Tbps (or Gbit/s, Gb/s); bytes: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, "
          "TiB/s (or GBps)");
    CHECK(unit_error(bw, "400 gbps").find("\"gbps\" is ambiguous: write Gbps for gigabits or GB/s for gigabytes") !=
          std::string::npos);
    CHECK(unit_error(bw, "50 GB").find("\"GB\" is a size, not a bandwidth: write GB/s") != std::string::npos);
    CHECK(unit_error(bw, "fast").find("\"fast\": expected a number first, like \"400 Gbps\"") != std::string::npos);
    CHECK(unit_error(bw, "400 Gbsp").find("unknown unit \"Gbsp\"") != std::string::npos);
    CHECK(unit_error(bw, "").find("empty, expected a bandwidth like \"400 Gbps\"") != std::string::npos);
    CHECK(unit_error(sz, "14 Gb").find("\"Gb\" is gigabits") != std::string::npos);
    CHECK(unit_error(sz, "14 gb").find("\"gb\" is ambiguous") != std::string::npos);
    CHECK(unit_error(sz, "14").find("a number without a unit") != std::string::npos);
    CHECK(unit_error(sz, "14 GiBs").find("unknown unit \"GiBs\"; a size takes a unit: B, kB, KB") != std::string::npos);
    CHECK(unit_error(sz, "1e999 B").find("expected a number first") != std::string::npos);
    CHECK(unit_error(dur, "5 m").find("\"m\" is ambiguous: write min for minutes or ms") != std::string::npos);
    CHECK(unit_error(dur, "2 sec").find("write s") != std::string::npos);
    CHECK(unit_error(dur, "two us").find("expected a number first") != std::string::npos);
  }
}

}  // namespace units_test
