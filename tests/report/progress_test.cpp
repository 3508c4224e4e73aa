// Progress lines: count, rate and time left, and silence when not on a terminal.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "stepcast/report/progress.hpp"

namespace progress_test {

using namespace stepcast::report;

TEST_SUITE("report.progress") {
  TEST_CASE("line: 500 of 1000 in 2 s is 250/s with 2 s left") {
    // rate = 500 / 2 s = 250/s; left = (1000 - 500) / 250 = 2 s.
    CHECK(progress_line("plans", 500, 1000, 2.0) == "500 / 1,000 plans  250/s  2 s left");
  }

  TEST_CASE("line: counts are grouped by thousands") {
    // 123456 done in 4 s: 30864/s; 876544 left / 30864 = 28.4 -> 29 s (rounded up).
    CHECK(progress_line("plans", 123456, 1000000, 4.0) == "123,456 / 1,000,000 plans  30,864/s  29 s left");
  }

  TEST_CASE("disabled progress writes nothing") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    {
      Progress p("plans", 10, f, false);
      for (int i = 0; i < 10; ++i) p.advance();
      CHECK(p.done() == 10);
    }
    CHECK(std::ftell(f) == 0);
    std::fclose(f);
  }

  TEST_CASE("a file is not a terminal, so progress to a file is disabled") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f != nullptr);
    Progress p("plans", 10, f);
    CHECK_FALSE(p.enabled());
    std::fclose(f);
  }
}

}  // namespace progress_test
