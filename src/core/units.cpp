// Unit-string parsing and printing for the quantity types. Units are case-sensitive on purpose:
// "Gb" is gigabits and "GB" gigabytes, the 8x mistake users make most often.
#include "stepcast/core/units.hpp"
#include "stepcast/core/text.hpp"

#include <fmt/format.h>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace stepcast {
namespace {

struct UnitEntry {
  std::string_view suffix;
  double factor;  // multiplies the number to reach the SI base unit
};

// A suffix that names another dimension or an ambiguous spelling, with the hint to give.
struct UnitTrap {
  std::string_view suffix;
  std::string_view hint;
};

struct UnitTable {
  std::string_view dimension;  // "a size", "a bandwidth", ...
  std::string_view example;
  std::span<const UnitEntry> units;
  std::span<const UnitTrap> traps;
  std::string_view accepted;  // the list printed in errors
};

using unit::kBitsPerByte;
using unit::kGibi;
using unit::kGiga;
using unit::kKibi;
using unit::kKilo;
using unit::kMebi;
using unit::kMega;
using unit::kTebi;
using unit::kTera;
constexpr double kPeta = kTera * kKilo;
constexpr double kExa = kPeta * kKilo;
constexpr double kPebi = kTebi * kKibi;

constexpr std::array kByteUnits{
    UnitEntry{"B", 1.0},     UnitEntry{"kB", kKilo},  UnitEntry{"KB", kKilo},  UnitEntry{"MB", kMega},
    UnitEntry{"GB", kGiga},  UnitEntry{"TB", kTera},  UnitEntry{"PB", kPeta},  UnitEntry{"KiB", kKibi},
    UnitEntry{"MiB", kMebi}, UnitEntry{"GiB", kGibi}, UnitEntry{"TiB", kTebi}, UnitEntry{"PiB", kPebi},
};
constexpr std::array kByteTraps{
    UnitTrap{"b", "\"b\" is bits"},
    UnitTrap{"bit", "\"bit\" is bits"},
    UnitTrap{"Kb", "\"Kb\" is kilobits"},
    UnitTrap{"Mb", "\"Mb\" is megabits"},
    UnitTrap{"Gb", "\"Gb\" is gigabits"},
    UnitTrap{"Tb", "\"Tb\" is terabits"},
    UnitTrap{"gb", "\"gb\" is ambiguous"},
    UnitTrap{"mb", "\"mb\" is ambiguous"},
    UnitTrap{"kb", "\"kb\" is ambiguous"},
    UnitTrap{"GB/s", "\"GB/s\" is a bandwidth"},
    UnitTrap{"Gbps", "\"Gbps\" is a bandwidth"},
};

constexpr std::array kBandwidthUnits{
    // bits per second
    UnitEntry{"bps", 1.0 / kBitsPerByte},
    UnitEntry{"bit/s", 1.0 / kBitsPerByte},
    UnitEntry{"Kbps", kKilo / kBitsPerByte},
    UnitEntry{"kbps", kKilo / kBitsPerByte},
    UnitEntry{"Kbit/s", kKilo / kBitsPerByte},
    UnitEntry{"Kb/s", kKilo / kBitsPerByte},
    UnitEntry{"Mbps", kMega / kBitsPerByte},
    UnitEntry{"Mbit/s", kMega / kBitsPerByte},
    UnitEntry{"Mb/s", kMega / kBitsPerByte},
    UnitEntry{"Gbps", kGiga / kBitsPerByte},
    UnitEntry{"Gbit/s", kGiga / kBitsPerByte},
    UnitEntry{"Gb/s", kGiga / kBitsPerByte},
    UnitEntry{"Tbps", kTera / kBitsPerByte},
    UnitEntry{"Tbit/s", kTera / kBitsPerByte},
    UnitEntry{"Tb/s", kTera / kBitsPerByte},
    // bytes per second
    UnitEntry{"B/s", 1.0},
    UnitEntry{"Bps", 1.0},
    UnitEntry{"kB/s", kKilo},
    UnitEntry{"KB/s", kKilo},
    UnitEntry{"KBps", kKilo},
    UnitEntry{"MB/s", kMega},
    UnitEntry{"MBps", kMega},
    UnitEntry{"GB/s", kGiga},
    UnitEntry{"GBps", kGiga},
    UnitEntry{"TB/s", kTera},
    UnitEntry{"TBps", kTera},
    UnitEntry{"KiB/s", kKibi},
    UnitEntry{"MiB/s", kMebi},
    UnitEntry{"GiB/s", kGibi},
    UnitEntry{"TiB/s", kTebi},
};
constexpr std::array kBandwidthTraps{
    UnitTrap{"gbps", "\"gbps\" is ambiguous: write Gbps for gigabits or GB/s for gigabytes"},
    UnitTrap{"gb/s", "\"gb/s\" is ambiguous: write Gb/s for gigabits or GB/s for gigabytes"},
    UnitTrap{"GBPS", "\"GBPS\" is ambiguous: write Gbps for gigabits or GB/s for gigabytes"},
    UnitTrap{"mbps", "\"mbps\" is ambiguous: write Mbps for megabits or MB/s for megabytes"},
    UnitTrap{"GB", "\"GB\" is a size, not a bandwidth: write GB/s"},
    UnitTrap{"GiB", "\"GiB\" is a size, not a bandwidth: write GiB/s"},
    UnitTrap{"Gb", "\"Gb\" is a number of bits, not a bandwidth: write Gbps"},
};

constexpr std::array kDurationUnits{
    UnitEntry{"s", 1.0},
    UnitEntry{"ms", 1.0 / kKilo},
    UnitEntry{"us", 1.0 / kMega},
    UnitEntry{"\xC2\xB5s", 1.0 / kMega},
    UnitEntry{"ns", 1.0 / kGiga},
    UnitEntry{"ps", 1.0 / kTera},
    UnitEntry{"min", 60.0},
    UnitEntry{"h", unit::kSecondsPerHour},
    UnitEntry{"d", 24.0 * unit::kSecondsPerHour},
};
constexpr std::array kDurationTraps{
    UnitTrap{"m", "\"m\" is ambiguous: write min for minutes or ms for milliseconds"},
    UnitTrap{"sec", "write s"},
    UnitTrap{"hr", "write h"},
    UnitTrap{"hours", "write h"},
};

constexpr std::array kFlopUnits{
    UnitEntry{"FLOP", 1.0},    UnitEntry{"kFLOP", kKilo}, UnitEntry{"MFLOP", kMega}, UnitEntry{"GFLOP", kGiga},
    UnitEntry{"TFLOP", kTera}, UnitEntry{"PFLOP", kPeta}, UnitEntry{"EFLOP", kExa},
};
constexpr std::array kFlopTraps{
    UnitTrap{"TFLOP/s", "\"TFLOP/s\" is a rate, not a count"},
    UnitTrap{"TFLOPS", "\"TFLOPS\" is a rate, not a count"},
};

constexpr std::array kFlopRateUnits{
    UnitEntry{"FLOP/s", 1.0}, UnitEntry{"GFLOP/s", kGiga}, UnitEntry{"TFLOP/s", kTera}, UnitEntry{"PFLOP/s", kPeta},
    UnitEntry{"FLOPS", 1.0},  UnitEntry{"GFLOPS", kGiga},  UnitEntry{"TFLOPS", kTera},  UnitEntry{"PFLOPS", kPeta},
};
constexpr std::array kFlopRateTraps{
    UnitTrap{"TFLOP", "\"TFLOP\" is a count, not a rate: write TFLOP/s"},
};

constexpr UnitTable kBytesTable{
    "a size", "14e9 B", kByteUnits, kByteTraps,
    "B, kB, KB, MB, GB, TB, PB (powers of 1000) or KiB, MiB, GiB, TiB, PiB (powers of 1024)"};
constexpr UnitTable kBandwidthTable{
    "a bandwidth", "400 Gbps", kBandwidthUnits, kBandwidthTraps,
    "bits: bps, Kbps, Mbps, Gbps, Tbps (or Gbit/s, Gb/s); bytes: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, "
    "GiB/s, TiB/s (or GBps)"};
constexpr UnitTable kDurationTable{"a duration", "2 us", kDurationUnits, kDurationTraps,
                                   "ps, ns, us (or \xC2\xB5s), ms, s, min, h, d"};
constexpr UnitTable kFlopTable{"a FLOP count", "1e18 FLOP", kFlopUnits, kFlopTraps,
                               "FLOP, kFLOP, MFLOP, GFLOP, TFLOP, PFLOP, EFLOP"};
constexpr UnitTable kFlopRateTable{"a FLOP rate", "312 TFLOP/s", kFlopRateUnits, kFlopRateTraps,
                                   "FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s (or FLOPS, GFLOPS, TFLOPS, PFLOPS)"};

double parse_with(const UnitTable& table, std::string_view text) {
  const std::string_view body = trim(text);
  const auto fail = [&](const std::string& why) -> double {
    throw UnitError(fmt::format("\"{}\": {}; {} takes a unit: {}", text, why, table.dimension, table.accepted));
  };
  if (body.empty()) return fail(fmt::format("empty, expected {} like \"{}\"", table.dimension, table.example));
  double number = 0.0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), number);
  if (ec != std::errc() || !std::isfinite(number)) {
    return fail(fmt::format("expected a number first, like \"{}\"", table.example));
  }
  const std::string_view suffix =
      trim(std::string_view(end, static_cast<std::size_t>(body.data() + body.size() - end)));
  if (suffix.empty())
    return fail(fmt::format("a number without a unit, expected something like \"{}\"", table.example));
  for (const UnitEntry& u : table.units) {
    if (u.suffix == suffix) return number * u.factor;
  }
  for (const UnitTrap& t : table.traps) {
    if (t.suffix == suffix) return fail(fmt::format("{}", t.hint));
  }
  return fail(fmt::format("unknown unit \"{}\"", suffix));
}

}  // namespace

Bytes parse_bytes(std::string_view text) { return Bytes(parse_with(kBytesTable, text)); }
BytesPerSecond parse_bandwidth(std::string_view text) { return BytesPerSecond(parse_with(kBandwidthTable, text)); }
Seconds parse_duration(std::string_view text) { return Seconds(parse_with(kDurationTable, text)); }
Flops parse_flops(std::string_view text) { return Flops(parse_with(kFlopTable, text)); }
FlopsPerSecond parse_flops_rate(std::string_view text) { return FlopsPerSecond(parse_with(kFlopRateTable, text)); }

template <>
Bytes parse_quantity<Bytes>(std::string_view text) {
  return parse_bytes(text);
}
template <>
BytesPerSecond parse_quantity<BytesPerSecond>(std::string_view text) {
  return parse_bandwidth(text);
}
template <>
Seconds parse_quantity<Seconds>(std::string_view text) {
  return parse_duration(text);
}
template <>
Flops parse_quantity<Flops>(std::string_view text) {
  return parse_flops(text);
}
template <>
FlopsPerSecond parse_quantity<FlopsPerSecond>(std::string_view text) {
  return parse_flops_rate(text);
}

// Past these, fixed notation prints a wall of digits (1e30 B would be 909494701772928256.00 TiB):
// scientific notation keeps the magnitude readable.
constexpr double kHugeTebi = 1e4 * kTebi;
constexpr double kHugeSeconds = 1e7;  // about four months

std::string format_bytes(Bytes b) {
  const double v = b.value();
  const double mag = std::fabs(v);
  if (mag < kKibi) return fmt::format("{:.0f} B", v);
  if (mag < kMebi) return fmt::format("{:.2f} KiB", v / kKibi);
  if (mag < kGibi) return fmt::format("{:.2f} MiB", v / kMebi);
  if (mag < kTebi) return fmt::format("{:.2f} GiB", v / kGibi);
  if (mag < kHugeTebi) return fmt::format("{:.2f} TiB", v / kTebi);
  return fmt::format("{:.3e} TiB", v / kTebi);
}

std::string format_seconds(Seconds t) {
  const double v = t.value();
  const double mag = std::fabs(v);
  if (mag >= kHugeSeconds) return fmt::format("{:.3e} s", v);
  if (mag == 0.0 || mag >= 0.1) return fmt::format("{:.3f} s", v);
  if (mag >= 0.1 / kKilo) return fmt::format("{:.3f} ms", v * kKilo);
  if (mag >= 0.1 / kMega) return fmt::format("{:.3f} us", v * kMega);
  return fmt::format("{:.3f} ns", v * kGiga);
}

std::string format_bandwidth(BytesPerSecond r) {
  // Decimal units, as NIC and storage datasheets quote them; small rates (an input pipeline's)
  // keep their digits instead of printing as 0.00 GB/s.
  const double v = r.value();
  const double mag = std::fabs(v);
  if (mag == 0.0 || mag >= kGiga) return fmt::format("{:.2f} GB/s", v / kGiga);
  if (mag >= kMega) return fmt::format("{:.2f} MB/s", v / kMega);
  if (mag >= kKilo) return fmt::format("{:.2f} kB/s", v / kKilo);
  return fmt::format("{:.2f} B/s", v);
}

std::string format_gbps(BytesPerSecond r) { return fmt::format("{:g} Gbps", r.value() * kBitsPerByte / kGiga); }

std::string format_flops_rate(FlopsPerSecond r) { return fmt::format("{:.1f} TFLOP/s", r.value() / kTera); }

std::string format_flops(Flops f) { return fmt::format("{:.3e} FLOP", f.value()); }

}  // namespace stepcast
