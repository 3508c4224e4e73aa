// --memory-margin: the share or size of a GPU's memory kept free, and the fit verdict with it.
// Expected values are worked by hand from the margin's definition (capacity x share, or a size).
#include <doctest/doctest.h>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "support/input_error_text.hpp"

namespace memory_margin_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {
MemoryBreakdown needing(double gib_total) {
  MemoryBreakdown m;
  m.total = gib(gib_total);
  return m;
}
}  // namespace

TEST_SUITE("cost.memory_margin") {
  TEST_CASE("\"5%\" of a 40 GiB GPU keeps 2 GiB free, \"2 GiB\" keeps 2^31 bytes") {
    const MemoryMargin share = parse_memory_margin("5%", "--memory-margin");
    CHECK(share.fraction == doctest::Approx(0.05));
    CHECK(share.of(gib(40)).value() == doctest::Approx(2.0 * 1024 * 1024 * 1024));
    const MemoryMargin size = parse_memory_margin("2 GiB", "--memory-margin");
    CHECK(size.of(gib(80)).value() == doctest::Approx(2147483648.0));
    CHECK(share.to_string() == "5%");
  }

  TEST_CASE("a plan inside the margin does not fit, one at its edge does") {
    const MemoryMargin five = parse_memory_margin("5%", "--memory-margin");
    // 40 GiB - 38 GiB = 2 GiB free = the margin: fits.
    const MemoryFit edge = check_fit(needing(38.0), gib(40), five);
    CHECK(edge.fits);
    // The case: 39.61 of 40 GiB leaves 0.39 GiB, inside a 2 GiB margin.
    const MemoryFit close = check_fit(needing(39.61), gib(40), five);
    CHECK_FALSE(close.fits);
    CHECK(close.within_margin());
    CHECK(close.headroom.value() == doctest::Approx(gib(0.39).value()));
    CHECK(close.margin.value() == doctest::Approx(gib(2).value()));
    // Without a margin the same plan fits, as before.
    CHECK(check_fit(needing(39.61), gib(40)).fits);
    // Over the capacity is not "within the margin": it does not fit at all.
    CHECK_FALSE(check_fit(needing(41.0), gib(40), five).within_margin());
  }

  TEST_CASE("a margin must be a share under 50% or a size with its unit") {
    CHECK(stepcast::test::input_error_text([] { (void)parse_memory_margin("60%", "--memory-margin"); }) ==
          "--memory-margin: expected a share of the GPU's memory such as \"5%\" (0 to under 50%) or a size such as \"2 "
          "GiB\", got \"60%\"");
    CHECK(stepcast::test::input_error_text([] {
            (void)parse_memory_margin("five%", "--memory-margin");
          }).find("got \"five%\"") != std::string::npos);
    CHECK(stepcast::test::input_error_text([] {
            (void)parse_memory_margin("2", "--memory-margin");
          }).starts_with("--memory-margin: expected a share"));
  }
}

}  // namespace memory_margin_test
