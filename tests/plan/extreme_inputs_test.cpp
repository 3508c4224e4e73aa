// Every reader fed the extreme values of its counts (the largest int, one past it, the int64 ends,
// 1e308, negative and zero): each is refused with its key and the limit, or read, and nothing in
// between overflows. The sanitizer build runs this under UBSan, which stops on any signed
// overflow or out-of-range conversion. Limits are those the readers state (workload_limits.cpp,
// topology_json.cpp, plan_limits.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/input_error_text.hpp"

namespace extreme_inputs_test {

namespace fs = std::filesystem;
using nlohmann::json;
using stepcast::test::input_error_text;

namespace {

const fs::path kSource = STEPCAST_SOURCE_DIR;

/// The values each count is fed: around the int and int64 ends, beyond a double's integers, and
/// below zero.
std::vector<json> extremes() {
  return {json(std::numeric_limits<int>::max()),
          json(std::int64_t{std::numeric_limits<int>::max()} + 1),
          json(std::int64_t{1} << 32 | 1),
          json(std::numeric_limits<std::int64_t>::max()),
          json(std::numeric_limits<std::int64_t>::min()),
          json(-4294967295LL),
          json(1e308),
          json(-1),
          json(0)};
}

fs::path write(const std::string& name, const json& doc) {
  const fs::path p = fs::temp_directory_path() / ("stepcast_extreme_" + name);
  std::ofstream(p) << doc.dump(1);
  return p;
}

json read(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

/// Loads the workload; any error must be bad input naming the file, never a crash or a bug.
void load_or_refuse(const fs::path& file) {
  try {
    (void)stepcast::workload::load_workload(file);
  } catch (const stepcast::InputError& e) {
    CHECK(std::string(e.what()).rfind(file.string(), 0) == 0);
  }
}

}  // namespace

TEST_SUITE("plan.extreme_inputs") {
  TEST_CASE("stepcast's workload JSON: every count at every extreme is read or refused, nothing wraps") {
    const json base = read(kSource / "workloads/deepseek-v3.json");
    std::vector<std::vector<std::string>> fields;
    for (const auto& [key, value] : base.at("shape").items()) {
      if (value.is_number_integer()) fields.push_back({key});
    }
    for (const auto& [key, value] : base.at("shape").at("moe").items()) {
      if (value.is_number_integer()) fields.push_back({"moe", key});
    }
    for (const auto& [key, value] : base.at("shape").at("mla").items()) {
      if (value.is_number_integer()) fields.push_back({"mla", key});
    }
    REQUIRE(fields.size() >= 15);
    for (const auto& field : fields) {
      for (const json& v : extremes()) {
        json doc = base;
        json* at = &doc.at("shape");
        for (std::size_t i = 0; i + 1 < field.size(); ++i) at = &at->at(field[i]);
        (*at)[field.back()] = v;
        CAPTURE(field.back());
        CAPTURE(v.dump());
        load_or_refuse(write("workload.json", doc));
      }
    }
  }

  TEST_CASE("the issue's values: hidden 2^30, shared_experts 2^32+1 and first_dense_layers -(2^32-1) are refused") {
    json doc = read(kSource / "workloads/deepseek-v3.json");
    doc["shape"]["hidden"] = 1 << 30;
    const fs::path hidden = write("hidden.json", doc);
    CHECK(input_error_text([&] { (void)stepcast::workload::load_workload(hidden); }) ==
          hidden.string() +
              ":/shape/hidden: the hidden size 1073741824 is above stepcast's limit of 1048576, far beyond any "
              "published model: a typo?");
    doc = read(kSource / "workloads/deepseek-v3.json");
    doc["shape"]["moe"]["shared_experts"] = 4294967297LL;
    const fs::path shared = write("shared.json", doc);
    CHECK(input_error_text([&] { (void)stepcast::workload::load_workload(shared); }) ==
          shared.string() + ":/shape/moe/shared_experts: too large, got 4294967297");
    doc = read(kSource / "workloads/deepseek-v3.json");
    doc["shape"]["moe"]["first_dense_layers"] = -4294967295LL;
    const fs::path first = write("first.json", doc);
    CHECK(input_error_text([&] { (void)stepcast::workload::load_workload(first); }) ==
          first.string() + ":/shape/moe/first_dense_layers: must be >= 0, got -4294967295");
    doc = read(kSource / "workloads/llama2-7b.json");
    doc["shape"]["layers"] = 2000000000;
    const fs::path layers = write("layers.json", doc);
    CHECK(input_error_text([&] { (void)stepcast::workload::load_workload(layers); }) ==
          layers.string() +
              ":/shape/layers: the layer count 2000000000 is above stepcast's limit of 16384, far beyond any published "
              "model: a typo?");
  }

  TEST_CASE("a Hugging Face config.json: every count at every extreme is read or refused") {
    const json base = read(kSource / "tests/workload/data/deepseek-v3/config.json");
    std::vector<std::string> fields;
    for (const auto& [key, value] : base.items()) {
      if (value.is_number_integer()) fields.push_back(key);
    }
    REQUIRE(fields.size() >= 15);
    for (const auto& field : fields) {
      for (const json& v : extremes()) {
        json doc = base;
        doc[field] = v;
        CAPTURE(field);
        CAPTURE(v.dump());
        load_or_refuse(write("config.json", doc));
      }
    }
    json doc = base;
    doc["hidden_size"] = 1 << 30;
    const fs::path hidden = write("config.json", doc);
    CHECK(
        input_error_text([&] { (void)stepcast::workload::load_workload(hidden); }) ==
        hidden.string() +
            ":/hidden_size: the hidden size 1073741824 is above stepcast's limit of 1048576, far beyond any published "
            "model: a typo?");
  }

  TEST_CASE("a topology: node and GPU counts at their extremes, and more GPUs in all than the limit") {
    const json base = read(kSource / "topologies/dgx-h100.json");
    for (const json& v : extremes()) {
      for (const std::vector<std::string>& field :
           std::vector<std::vector<std::string>>{{"nodes"}, {"node", "gpus_per_node"}, {"node", "nics", "count"}}) {
        json doc = base;
        json* at = &doc;
        for (std::size_t i = 0; i + 1 < field.size(); ++i) at = &at->at(field[i]);
        (*at)[field.back()] = v;
        const fs::path file = write("topology.json", doc);
        CAPTURE(field.back());
        CAPTURE(v.dump());
        try {
          (void)stepcast::topology::load_topology(file);
        } catch (const stepcast::InputError& e) {
          CHECK(std::string(e.what()).rfind(file.string(), 0) == 0);
        }
      }
    }
    json doc = base;
    doc["nodes"] = 1 << 16;  // 65536 nodes x 8 GPUs = 2^19 GPUs
    const fs::path file = write("topology.json", doc);
    CHECK(input_error_text([&] { (void)stepcast::topology::load_topology(file); }) ==
          file.string() +
              ":/nodes: 65536 nodes x 8 GPUs per node = 524288 GPUs, above stepcast's limit of 262144 GPUs (beyond the "
              "largest clusters built)");
    CHECK(input_error_text([] {
            (void)stepcast::topology::load_topology(kSource / "topologies/dgx-h100.json",
                                                    std::numeric_limits<int>::max());
          }).find("--nodes must be in 1..1048576, got 2147483647") != std::string::npos);
  }

  TEST_CASE("plans: degrees, batch and sequence at the int's end are refused, never multiplied past it") {
    const auto w = stepcast::workload::load_workload(kSource / "workloads/llama2-7b.json");
    for (const std::string key : {"dp", "tp", "pp", "vp", "cp", "mbs", "gbs", "seq", "ep", "etp"}) {
      for (const std::string value : {"2147483647", "2147483648", "9223372036854775807", "-1", "0", "1e308"}) {
        CAPTURE(key);
        CAPTURE(value);
        try {
          const stepcast::plan::Plan p = stepcast::plan::parse_plan(key + "=" + value);
          (void)stepcast::plan::problems(stepcast::plan::resolve(p, w, 1 << 18), w, 1 << 18);
        } catch (const stepcast::InputError& e) {
          CHECK(std::string(e.what()).rfind("--plan", 0) == 0);
        }
      }
    }
    // The predict: --global-batch 2147483632 --seq 2147483647 on 8 GPUs.
    stepcast::plan::Plan p = stepcast::plan::parse_plan("dp=8");
    p.global_batch = 2147483632;
    p.seq_len = 2147483647;
    const auto found = stepcast::plan::problems(stepcast::plan::resolve(p, w, 8), w, 8);
    REQUIRE(found.size() == 3);
    CHECK(stepcast::plan::describe(found[0]) ==
          "the sequence length 2147483647 is above stepcast's limit of 134217728 tokens");
    CHECK(stepcast::plan::describe(found[1]) ==
          "global batch x sequence = 2147483632 x 2147483647 = 4611685981920165904 tokens per step is above "
          "stepcast's limit of 68719476736 (2^36), thousands of times the largest published batch");
    // 2147483632 / 8 = 268435454 micro-batches: times a stage's 32 layers, past an int (compute.cpp's kernel counts).
    CHECK(stepcast::plan::describe(found[2]) ==
          "global batch / (dp x mbs) = 2147483632 / (8 x 1) = 268435454 micro-batches per step is above stepcast's "
          "limit of 65536: raise mbs= or dp=, or lower the global batch");
  }
}

}  // namespace extreme_inputs_test
