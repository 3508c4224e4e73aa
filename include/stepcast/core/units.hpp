// Quantities with units: one double in SI base units behind a tag type, so that bytes, seconds,
// bandwidths and FLOPs cannot be mixed up (STYLE.md B5). Parsing and printing of unit strings.
#pragma once

#include <compare>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stepcast {

/// A value in SI base units (bytes, seconds, bytes/s, FLOP, FLOP/s) tagged with its dimension.
/// Same-dimension arithmetic only; no implicit conversion to double.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double base_value) : value_(base_value) {}

  /// The value in the SI base unit of the dimension.
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr Quantity& operator*=(double k) {
    value_ *= k;
    return *this;
  }
  /// Ratio of two quantities of one dimension.
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.value_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

struct BytesTag {};
struct SecondsTag {};
struct BytesPerSecondTag {};
struct FlopsTag {};
struct FlopsPerSecondTag {};

using Bytes = Quantity<BytesTag>;
using Seconds = Quantity<SecondsTag>;
using BytesPerSecond = Quantity<BytesPerSecondTag>;
using Flops = Quantity<FlopsTag>;
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.value() / t.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Bytes operator*(Seconds t, BytesPerSecond r) { return r * t; }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr FlopsPerSecond operator/(Flops f, Seconds t) { return FlopsPerSecond(f.value() / t.value()); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.value() * t.value()); }

/// Named unit factors, so that no bare 1000 or 1024 appears in a formula.
namespace unit {
inline constexpr double kKilo = 1e3;
inline constexpr double kMega = 1e6;
inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kKibi = 1024.0;
inline constexpr double kMebi = kKibi * 1024.0;
inline constexpr double kGibi = kMebi * 1024.0;
inline constexpr double kTebi = kGibi * 1024.0;
inline constexpr double kBitsPerByte = 8.0;
inline constexpr double kSecondsPerHour = 3600.0;
}  // namespace unit

constexpr Bytes bytes(double b) { return Bytes(b); }
constexpr Bytes gib(double g) { return Bytes(g * unit::kGibi); }
constexpr Seconds seconds(double s) { return Seconds(s); }
constexpr Seconds microseconds(double us) { return Seconds(us / unit::kMega); }
/// A bandwidth given in gigabits per second (network convention: 400 Gbps = 50 GB/s).
constexpr BytesPerSecond gbit_per_s(double g) { return BytesPerSecond(g * unit::kGiga / unit::kBitsPerByte); }
/// A bandwidth given in gigabytes (1e9 B) per second, as nccl-tests reports GB/s.
constexpr BytesPerSecond gbyte_per_s(double g) { return BytesPerSecond(g * unit::kGiga); }
constexpr FlopsPerSecond tflop_per_s(double t) { return FlopsPerSecond(t * unit::kTera); }

/// A unit string that could not be read: the text, what went wrong and the units accepted.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parse "14e9 B", "13.04 GiB", "2 MB" (SI and binary prefixes; bits are refused for sizes).
Bytes parse_bytes(std::string_view text);
/// Parse "400 Gbps", "400 Gbit/s" (bits) or "50 GB/s", "50 GBps", "12 GiB/s" (bytes).
BytesPerSecond parse_bandwidth(std::string_view text);
/// Parse "2 us", "1.5 ms", "24 h", "3 d" ("µs" also accepted).
Seconds parse_duration(std::string_view text);
/// Parse "3.5 PFLOP", "1e18 FLOP".
Flops parse_flops(std::string_view text);
/// Parse "312 TFLOP/s" or "312 TFLOPS".
FlopsPerSecond parse_flops_rate(std::string_view text);

/// Parse a quantity of any of the five dimensions by its type.
template <class Q>
Q parse_quantity(std::string_view text);

/// "13.04 GiB": binary prefixes, two decimals (whole bytes below 1 KiB).
std::string format_bytes(Bytes b);
/// "0.280 s", "40.833 ms", "12.500 us": three decimals in the largest unit that keeps >= 0.1.
std::string format_seconds(Seconds t);
/// "50.00 GB/s": decimal gigabytes per second, as nccl-tests prints algbw and busbw.
std::string format_bandwidth(BytesPerSecond r);
/// "400 Gbps": decimal gigabits per second, as NICs are sold.
std::string format_gbps(BytesPerSecond r);
/// "312.0 TFLOP/s".
std::string format_flops_rate(FlopsPerSecond r);
/// "1.23e+18 FLOP".
std::string format_flops(Flops f);

}  // namespace stepcast
