// The first answers a newcomer gets, through the real executable: one set of defaults in every
// command (FlashAttention, a training length or --seq, a global batch or a note, a memory margin,
// NCCL's collective model in validate), names users type, the memory table without a plan, fit
// advice that fits, MFU over the attention the kernels compute, and --set said back.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/run_stepcast.hpp"

namespace newcomer_cli_test {

using stepcast::test::run_stepcast;
using stepcast::test::run_stepcast_with_status;

namespace {

const std::string kMistral = "tests/workload/data/mistral-7b/config.json";

nlohmann::json json_of(const std::string& args) { return nlohmann::json::parse(run_stepcast(args + " --json")); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("report.newcomer") {
  TEST_CASE("memory with no plan: a labelled table whose FSDP-over-8 row is predict's memory for that plan") {
    const std::string text = run_stepcast("memory --workload " + kMistral);
    for (const char* row : {"dp=8 (DDP)", "fsdp=8 ", "fsdp=8,recompute=selective", "fsdp=8,recompute=full",
                            "bf16 mixed", "fp32", "seq 2048", "seq 4096", "seq 8192"}) {
      CAPTURE(row);
      CHECK(contains(text, row));
    }
    // No training length in the config: never its 32768 positions, and said so.
    CHECK(contains(text, "the config states no training length (32768 positions"));
    CHECK_FALSE(contains(text, "seq 32768"));
    CHECK(contains(text, "Note: flash=on: FlashAttention assumed"));
    const nlohmann::json table = json_of("memory --workload " + kMistral);
    double row = 0.0;
    for (const auto& r : table["rows"]) {
      if (r["plan"] == "fsdp=8" && r["precision"] == "bf16 mixed" && r["seq_len"] == 4096)
        row = r["total_bytes_per_gpu"];
    }
    REQUIRE(row > 0.0);
    const nlohmann::json predicted =
        json_of("predict --workload " + kMistral + " --topology dgx-h100 --plan fsdp=8 --seq 4096");
    const double memory = predicted["memory"]["total_bytes"];
    CHECK(std::fabs(row / memory - 1.0) <= 0.10);
  }

  TEST_CASE("a config's sequence length is required, never its max_position_embeddings") {
    const auto r = run_stepcast_with_status("predict --workload " + kMistral + " --topology dgx-h100 --plan fsdp=8");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output,
                   "--seq: mistral states no training sequence length (its 32768 positions are the longest "
                   "context the model supports, not a training length)"));
  }

  TEST_CASE("a global batch nobody gave is a default said in a note") {
    const std::string text = run_stepcast("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8");
    // dp x mbs x pp = 8 x 1 x 1.
    CHECK(contains(text,
                   "Note: gbs=8 is a default, one micro-batch per data-parallel rank and stage (dp x mbs x pp = 8 "
                   "x 1 x 1); give --global-batch for the batch you train with"));
    CHECK_FALSE(
        contains(run_stepcast("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --global-batch 64"),
                 "is a default"));
  }

  TEST_CASE("the default memory margin is GMLake's 9.2 GB of 80 GB, shown in the Fits line and dropped by 0%") {
    // 11.5% of the H100's 80 GiB = 9.20 GiB.
    const std::string text = run_stepcast("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8");
    CHECK(contains(text, "more than the 9.20 GiB kept free for allocator fragmentation (the default margin, 11.5%"));
    const nlohmann::json j = json_of("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8");
    CHECK(j["memory_margin_bytes"].get<double>() == doctest::Approx(80.0 * 1073741824.0 * 9.2 / 80.0));
    const nlohmann::json none =
        json_of("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --memory-margin 0%");
    CHECK(none["memory_margin_bytes"].get<double>() == 0.0);
  }

  TEST_CASE("names users type: shipped workloads and topologies, a model folder, a Hugging Face id in the cache") {
    CHECK(contains(run_stepcast("memory --workload llama3-8b --plan fsdp=8 --topology dgx-h100"), "llama3-8b"));
    // A model folder: its config.json.
    CHECK(contains(run_stepcast("memory --workload tests/workload/data/mistral-7b --plan fsdp=8 --seq 4096"),
                   "Parameters: 7.242 billion"));
    // huggingface_hub's cache: models--ORG--NAME/refs/main names the snapshot holding config.json.
    const auto home = std::filesystem::temp_directory_path() / "stepcast_hf_home";
    const auto repo = home / "hub" / "models--mistralai--Mistral-7B-v0.1";
    std::filesystem::create_directories(repo / "refs");
    std::filesystem::create_directories(repo / "snapshots" / "26bca36b");
    std::ofstream(repo / "refs" / "main") << "26bca36b";
    std::filesystem::copy_file(std::filesystem::path(STEPCAST_SOURCE_DIR) / kMistral,
                               repo / "snapshots" / "26bca36b" / "config.json",
                               std::filesystem::copy_options::overwrite_existing);
    ::setenv("HF_HOME", home.c_str(), 1);
    const std::string cached = run_stepcast("memory --workload mistralai/Mistral-7B-v0.1 --plan fsdp=8 --seq 4096");
    ::setenv("HF_HOME", (home / "empty").c_str(), 1);
    const auto missing = run_stepcast_with_status("memory --workload mistralai/Mistral-7B-v0.1 --plan fsdp=8");
    ::unsetenv("HF_HOME");
    CHECK(contains(cached, "Parameters: 7.242 billion"));
    CHECK(missing.exit_code == 2);
    CHECK(contains(missing.output, "or a Hugging Face model in the local cache (" + (home / "empty" / "hub").string()));
  }

  TEST_CASE("a name that is nothing stepcast can find says where it looked and how to download a config") {
    const auto r = run_stepcast_with_status("memory --workload llama3-8c --plan fsdp=8");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, "\"llama3-8c\" is not a file, a folder with a config.json, a shipped workload ("));
    CHECK(contains(r.output, "did you mean \"llama3-8b\"?"));
    CHECK(contains(r.output, "huggingface-cli download ORG/NAME config.json"));
    const auto t = run_stepcast_with_status("topology --topology dgx-h10");
    CHECK(t.exit_code == 2);
    CHECK(contains(t.output, "did you mean \"dgx-h100\"?"));
  }

  TEST_CASE("--plan without --gpus runs on the GPUs the plan spans") {
    // dgx-h100.json lists 4 nodes (32 GPUs); fsdp=8 is one node of them.
    const nlohmann::json j = json_of("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8");
    CHECK(j["gpus"] == 8);
  }

  TEST_CASE("--set says what it changed: the p4d file's NIC bandwidth is per NIC, 4 to a node") {
    const std::string text = run_stepcast("topology --topology p4d-24xlarge --set nics.bandwidth=\"50 Gbps\"");
    CHECK(contains(text,
                   "Set: node.nics.bandwidth \"100 Gbps\" -> \"50 Gbps\" (per NIC; 4 NICs per node: 400 Gbps -> "
                   "200 Gbps)"));
  }

  TEST_CASE("a plan that does not fit is told only the changes that fit, each checked by running it") {
    // Llama 3 405B on 1,024 H100s, tp=8 x pp=16 with Llama 3's embedding and loss stages: 114 GiB.
    const std::string base =
        "predict --workload llama3-405b --topology dgx-h100 --gpus 1024 --global-batch 1024 --plan "
        "tp=8,pp=16,sp=on,pp-embedding-loss-layers=on";
    const auto r = run_stepcast_with_status(base);
    REQUIRE(r.exit_code == 3);
    const auto at = r.output.find("each change that fits, priced on the model (smallest first):\n");
    REQUIRE(at != std::string::npos);
    // Every listed change, run on its own, fits (exit 0); listed from the largest memory down.
    std::istringstream listed(r.output.substr(at));
    std::string line;
    std::getline(listed, line);
    int count = 0;
    double previous = 1e30;
    while (std::getline(listed, line) && line.starts_with("    ")) {
      std::istringstream words(line);
      std::string change;
      double gib = 0.0;
      words >> change >> gib;
      CAPTURE(line);
      CHECK(gib <= previous);
      previous = gib;
      CHECK(run_stepcast_with_status(base + "," + change).exit_code == 0);
      ++count;
    }
    CHECK(count >= 1);
    // What is not listed does not fit: selective recompute saves nothing once FlashAttention stores
    // no scores, and zero=1 (76.7 GiB) eats into the 9.20 GiB margin.
    CHECK_FALSE(contains(r.output.substr(at), "recompute=selective"));
    CHECK(run_stepcast_with_status(base + ",recompute=selective").exit_code == 3);
    CHECK_FALSE(contains(r.output.substr(at), "zero=1 "));
    CHECK(run_stepcast_with_status(base + ",zero=1").exit_code == 3);
  }

  TEST_CASE("search: 120 columns of text, --wide for the rest, ties within the model's error marked, --set said") {
    const std::string args =
        "search --workload llama2-70b --topology p4d-24xlarge --nodes 8 --global-batch 512 --seq 4096 --refine 0 "
        "--set nics.bandwidth=\"50 Gbps\"";
    const std::string narrow = run_stepcast(args);
    std::istringstream lines(narrow);
    std::size_t widest = 0;
    for (std::string line; std::getline(lines, line);) widest = std::max(widest, line.size());
    CHECK(widest <= 120);
    CHECK(contains(narrow, "Set: node.nics.bandwidth \"100 Gbps\" -> \"50 Gbps\""));
    const std::string wide = run_stepcast(args + " --wide");
    CHECK(contains(wide, "exposed comm [s]"));
    CHECK(contains(wide, "first example"));
    // The tie rule: a row is marked when its step is within the note's scatter of the first row's.
    const auto note = narrow.find("tie: a step within ");
    REQUIRE(note != std::string::npos);
    const double scatter = std::stod(narrow.substr(note + 19)) / 100.0;
    std::istringstream rows(narrow.substr(narrow.find("\n--  ")));
    std::string line;
    std::getline(rows, line);
    std::getline(rows, line);
    double best = 0.0;
    int marked = 0;
    while (std::getline(rows, line) && !line.empty()) {
      if (line.starts_with("    ")) continue;  // a long plan's continuation line
      std::istringstream words(line);
      std::string rank, plan, word;
      double step = 0.0, mfu = 0.0, memory = 0.0;
      words >> rank >> plan >> step >> mfu >> memory;
      // Then the 90% interval "low-high" where the plan's class has one, and "tie" where marked.
      std::string tie;
      while (words >> word) {
        if (word == "tie") {
          tie = word;
        } else {
          const auto dash = word.find('-');
          REQUIRE(dash != std::string::npos);
          CHECK(std::stod(word.substr(0, dash)) < std::stod(word.substr(dash + 1)));
        }
      }
      CAPTURE(line);
      if (best == 0.0) {  // the fastest itself: the one the others tie with
        best = step;
        CHECK(tie.empty());
        continue;
      }
      // Three printed decimals: within rounding of the rule.
      if (step / best - 1.0 < scatter - 1e-3) CHECK(tie == "tie");
      if (step / best - 1.0 > scatter + 1e-3) CHECK(tie.empty());
      marked += tie == "tie" ? 1 : 0;
    }
    CHECK(marked >= 1);
  }

  TEST_CASE("a step outside its own interval says so and points to the median, one inside says nothing more") {
    // Read back from the JSON: the line appears exactly when the step lies outside [low, high].
    for (const char* args : {"predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --global-batch 64",
                             "predict --workload llama2-7b --topology p4d-24xlarge --nodes 1 --plan tp=8 --seq 4096 "
                             "--global-batch 64"}) {
      CAPTURE(args);
      const nlohmann::json j = json_of(args);
      REQUIRE(j["step_time_interval_s"].is_object());
      const double step = j["step_time_s"];
      const double low = j["step_time_interval_s"]["low_s"];
      const double high = j["step_time_interval_s"]["high_s"];
      const std::string text = run_stepcast(args);
      const bool outside = step < low || step > high;
      CHECK(contains(text, "the step above lies") == outside);
      if (outside) CHECK(contains(text, step < low ? "lies below this interval" : "lies above this interval"));
    }
  }

  TEST_CASE("MFU counts the causal half of attention FlashAttention computes: Llama 3 8B by hand") {
    // Per token and layer: 2 x (Q, K, V, O: 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040; MLP 3 x 4096
    // x 14336 = 176,160,768) = 436,207,616, plus scores 2 x (s/2 keys) x 32 heads x (128 + 128) =
    // 67,108,864 at s = 8192: 503,316,480, x 32 layers = 16,106,127,360; logits 2 x 4096 x 128256 =
    // 1,050,673,152. Forward and backward: 3 x 17,156,800,512 per token, over 16 x 8192 tokens.
    const nlohmann::json j =
        json_of("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --global-batch 16");
    CHECK(j["model_flops"].get<double>() == doctest::Approx(3.0 * 17156800512.0 * 16.0 * 8192.0).epsilon(1e-9));
    CHECK(contains(run_stepcast("predict --workload llama3-8b --topology dgx-h100 --plan fsdp=8 --global-batch 16"),
                   "(attention counted causal (half the s x s scores), as FlashAttention computes it)"));
    // At 128k tokens the causal count keeps MFU under the GEMM ceiling the kernels run at (0.801
    // of the H100's peak, topologies/gpus): counted over the whole square it read 0.823.
    const nlohmann::json long_context = json_of(
        "predict --workload llama3-8b --topology dgx-h100 --gpus 16 --plan tp=8,sp=on,cp=2 --seq 131072 "
        "--global-batch 8");
    CHECK(long_context["mfu"].get<double>() < 0.801);
  }

  TEST_CASE("validate prices collectives with NCCL's tuning model, as predict does, unless --algorithm names one") {
    const std::string log = "tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt";
    const nlohmann::json plain = json_of("validate --measured " + log + " --topology dgx-h100 --nodes 1");
    const nlohmann::json nccl =
        json_of("validate --measured " + log + " --topology dgx-h100 --nodes 1 --algorithm auto");
    CHECK(plain["median_abs_error_pct"] == nccl["median_abs_error_pct"]);
    CHECK(contains(run_stepcast("validate --measured " + log + " --topology dgx-h100 --nodes 1"),
                   "NCCL's tuning model picks"));
  }
}

}  // namespace newcomer_cli_test
