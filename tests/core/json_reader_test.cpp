// JsonReader: every error names the file, the JSON pointer and the rule.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/core/json_reader.hpp"
#include "support/input_error_text.hpp"

namespace json_reader_test {

using namespace stepcast;

namespace {
template <class F>
std::string error_of(F&& f) {
  return test::input_error_text(std::forward<F>(f));
}
}  // namespace

TEST_SUITE("core.json_reader") {
  TEST_CASE("quantities: a bare number is refused with the pointer and an example") {
    const auto doc = parse_json_text(R"({"links": [{"bandwidth": 400}, {"bandwidth": "0 Gbps"}]})", "t.json");
    const JsonReader r(doc, "t.json");
    const auto links = r.at("links").elements();
    CHECK(error_of([&] { (void)links[0].at("bandwidth").quantity<BytesPerSecond>(); }) ==
          "t.json:/links/0/bandwidth: expected a quantity with a unit like \"400 Gbps\", got the bare number 400");
    CHECK(error_of([&] { (void)links[1].at("bandwidth").positive_quantity<BytesPerSecond>(); }) ==
          "t.json:/links/1/bandwidth: must be greater than zero, got \"0 Gbps\"");
  }

  TEST_CASE("missing and unknown keys") {
    const auto doc = parse_json_text(R"({"name": "x", "nodez": 2})", "c.json");
    const JsonReader r(doc, "c.json");
    CHECK(error_of([&] { (void)r.at("nodes"); }) == "c.json: missing required field \"nodes\"");
    CHECK(error_of([&] {
            r.check_keys({"name", "nodes"});
          }) == "c.json:/nodez: unknown key \"nodez\" (allowed here: name, nodes)");
  }

  TEST_CASE("malformed JSON names line and column") {
    const std::string err = error_of([] { (void)parse_json_text("{\n  \"a\": 1,\n  \"b\" 2\n}", "bad.json"); });
    CHECK(err.rfind("bad.json: malformed JSON at line 3, column 7", 0) == 0);
  }

  TEST_CASE("a number too large for a double is bad input, not a crash") {
    // 1e400 exceeds the largest double (about 1.8e308); found by the calibration fuzz target.
    CHECK(error_of([] { (void)parse_json_text(R"({"bandwidth": 1e400})", "big.json"); }) ==
          "big.json: malformed JSON: number overflow parsing '1e400'");
  }

  TEST_CASE("integers and counts") {
    const auto doc = parse_json_text(R"({"a": 2.5, "b": 0, "c": 8})", "n.json");
    const JsonReader r(doc, "n.json");
    CHECK(error_of([&] { (void)r.at("a").integer(); }) == "n.json:/a: expected an integer, got 2.5");
    CHECK(error_of([&] { (void)r.at("b").count(); }) == "n.json:/b: must be at least 1, got 0");
    CHECK(r.at("c").count() == 8);
  }
}

TEST_SUITE("core.json_duplicate_keys") {
  TEST_CASE("a key given twice in one object is refused at its pointer, with the lines of both") {
    const std::string text = "{\n  \"plan\": {\"tp\": 2,\n    \"tp\": 4}\n}";
    CHECK(error_of([&] { (void)parse_json_text(text, "p.json"); }) ==
          "p.json:/plan/tp: the key \"tp\" appears twice in one object, at lines 2 and 3: give it once (JSON readers "
          "differ on which one counts)");
  }

  TEST_CASE("inside arrays the pointer counts elements, and an escaped spelling is the same key") {
    const std::string text = R"({"links": [{"a": 1}, {"b": 1, "\u0062": 2}]})";
    CHECK(error_of([&] { (void)parse_json_text(text, "t.json"); }) ==
          "t.json:/links/1/b: the key \"b\" appears twice in one object, at lines 1 and 1: give it once (JSON readers "
          "differ on which one counts)");
  }

  TEST_CASE("nesting deeper than 256 levels is refused before it is parsed, brackets in strings not counted") {
    const std::string deep = "\n" + std::string(257, '[') + std::string(257, ']');
    CHECK(error_of([&] { (void)parse_json_text(deep, "deep.json"); }) ==
          "deep.json: objects and arrays nested more than 256 deep at line 2: no stepcast input nests so deep");
    const std::string ok =
        "{\"a\": \"" + std::string(300, '[') + "\", \"b\": " + std::string(255, '[') + std::string(255, ']') + "}";
    CHECK(error_of([&] { (void)parse_json_text(ok, "ok.json"); }) == "no error");
  }

  TEST_CASE("the same key in different objects, and keys inside strings, are no repeat") {
    const std::string text = R"({"a": {"x": 1}, "b": {"x": 2}, "c": ["x", "x"], "d": "\"x\": 1, \"x\": 2", "x": 3})";
    CHECK(error_of([&] { (void)parse_json_text(text, "ok.json"); }) == "no error");
  }
}

}  // namespace json_reader_test
