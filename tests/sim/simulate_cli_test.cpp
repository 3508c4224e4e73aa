// `stepcast simulate` through the real executable: same seed, same JSON; the trace is valid JSON
// with events on every simulated GPU and the tensor-parallel collectives on their own tracks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/run_stepcast.hpp"

namespace simulate_cli_test {

namespace {

std::string run(const std::string& args) {
  const std::string command = std::string(STEPCAST_BINARY) + " " + args + " 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (const std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  CHECK(pclose(pipe) == 0);
  return out;
}

const std::string kArgs = std::string("simulate --workload ") + STEPCAST_SOURCE_DIR +
                          "/workloads/llama2-7b.json --topology " + STEPCAST_SOURCE_DIR +
                          "/topologies/p4d-24xlarge.json --nodes 2 --plan \"tp=2,pp=4,dp=2,mbs=1\" " +
                          "--global-batch 32 --seq 2048 --straggler cv=0.05 --seed 7 --json";

}  // namespace

TEST_SUITE("sim.simulate_cli") {
  TEST_CASE("two runs with the same seed print identical JSON with the analytical figure beside") {
    const std::string a = run(kArgs);
    const std::string b = run(kArgs);
    CHECK(a == b);
    const auto j = nlohmann::json::parse(a);
    CHECK(j.at("step_time_s").get<double>() > 0.0);
    CHECK(j.at("analytical_step_time_s").get<double>() > 0.0);
    CHECK(j.at("breakdown").is_object());
    CHECK(j.at("seed").get<int>() == 7);
  }

  TEST_CASE("per-step noise: every replica's stages are simulated, and the same seed gives the same JSON") {
    std::string args = kArgs;
    args.replace(args.find("cv=0.05"), 7, "step-cv=0.05");
    const std::string a = run(args);
    CHECK(a == run(args));
    const auto j = nlohmann::json::parse(a);
    // pp = 4 stages times dp = 2 replicas.
    CHECK(j.at("simulated_ranks").get<int>() == 8);
    CHECK(j.at("straggler_wait_s").get<double>() > 0.0);
  }

  TEST_CASE(
      "the trace is valid JSON with events on every simulated GPU's compute track and TP collectives on their own") {
    const auto path = std::filesystem::temp_directory_path() / "stepcast_simulate_cli_test_trace.json";
    run(kArgs + " --trace " + path.string());
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const auto trace = nlohmann::json::parse(text.str());
    std::set<int> tracks_with_events;
    std::set<int> named_tracks;
    std::set<int> compute_tracks;
    std::set<int> tensor_tracks;
    std::set<int> tensor_spans_on;
    std::map<int, std::vector<std::pair<double, double>>> spans_on;
    int sends = 0;
    bool process_named = false;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.at("name") == "process_name") process_named = true;
      if (e.at("ph") == "X") {
        const int tid = e.at("tid").get<int>();
        tracks_with_events.insert(tid);
        const double ts = e.at("ts").get<double>();
        spans_on[tid].emplace_back(ts, ts + e.at("dur").get<double>());
        if (e.at("name") == "TP all-reduce") tensor_spans_on.insert(tid);
        if (e.at("name").get<std::string>().rfind("send ", 0) == 0) ++sends;
      }
      if (e.at("name") == "thread_name") {
        const std::string name = e.at("args").at("name").get<std::string>();
        named_tracks.insert(e.at("tid").get<int>());
        if (name.find(" tensor comm") != std::string::npos) tensor_tracks.insert(e.at("tid").get<int>());
        if (name.size() > 8 && name.substr(name.size() - 8) == " compute")
          compute_tracks.insert(e.at("tid").get<int>());
      }
    }
    CHECK(process_named);
    // pp = 4: one representative GPU per stage, each with a compute track holding its tasks.
    CHECK(compute_tracks.size() == 4);
    for (const int t : compute_tracks) CHECK(tracks_with_events.count(t) == 1);
    // tp = 2: each stage's tensor-parallel all-reduces are spans of their own on its TP comm track.
    CHECK(tensor_tracks.size() == 4);
    CHECK(tensor_spans_on == tensor_tracks);
    // No empty rows: every named track holds spans.
    CHECK(named_tracks == tracks_with_events);
    // Pipeline sends: gbs 32 / (dp 2 x mbs 1) = 16 micro-batches; stages 0-2 send each forward
    // output on and stages 1-3 each backward output back: 2 x 3 x 16 = 96 sends.
    CHECK(sends == 96);
    // Perfetto nests complete events: on one track two spans are disjoint or one holds the other.
    for (auto& entry : spans_on) {
      const int tid = entry.first;  // named, not a structured binding: clang 14's CHECK cannot capture one
      auto& spans = entry.second;
      std::sort(spans.begin(), spans.end());
      for (std::size_t i = 1; i < spans.size(); ++i) {
        const bool disjoint = spans[i].first >= spans[i - 1].second - 1e-6;
        const bool nested = spans[i].second <= spans[i - 1].second + 1e-6;
        CHECK_MESSAGE((disjoint || nested), "track " << tid << " has partly overlapping spans");
      }
    }
    std::filesystem::remove(path);
  }

  TEST_CASE("a plan that does not fit: the step is shown with predict's memory verdict, then exit 3 as predict does") {
    // GPT-3 175B at tp=8, pp=8 without flash attention stores every layer's 2048 x 2048 scores
    // (Korthikanti's 5as/h term) and needs more than an A100's 80 GB; both commands must say so.
    // flash=off is asked for: fused attention is the default on an A100.
    const std::string shape =
        "--workload workloads/gpt3-175b.json --topology topologies/dgx-a100.json --nodes 128 "
        "--global-batch 1536 --seq 2048 --plan ";
    const std::string plan = shape + "tp=8,pp=8,dp=16,mbs=1,flash=off";
    const auto predicted = stepcast::test::run_stepcast_with_status("predict " + plan);
    const auto simulated = stepcast::test::run_stepcast_with_status("simulate " + plan);
    CHECK(predicted.exit_code == 3);
    CHECK(simulated.exit_code == 3);
    const auto fits_line = [](const std::string& out) {
      const std::size_t at = out.find("Fits: NO");
      return at == std::string::npos ? std::string{} : out.substr(at, out.find('\n', at) - at);
    };
    CHECK_FALSE(fits_line(simulated.output).empty());
    CHECK(fits_line(simulated.output) == fits_line(predicted.output));
    CHECK(simulated.output.find("step time (simulated)") != std::string::npos);
    // The fit hint lists the changes that fit with the default 11.5% margin (report/fit_hint.hpp):
    // full recompute among them; flash=on alone leaves less than the margin free.
    CHECK(simulated.output.find("\n    recompute=full ") != std::string::npos);
    // With flash attention and no margin the same plan fits, and simulate exits 0.
    CHECK(stepcast::test::run_stepcast_with_status("simulate " + shape +
                                                   "tp=8,pp=8,dp=16,mbs=1,flash=on --memory-margin 0%")
              .exit_code == 0);
  }

  TEST_CASE("per-step noise with context and expert parallel: every replica runs, their groups' calls meet") {
    const std::string root = STEPCAST_SOURCE_DIR;
    for (const std::string& args : {"--workload " + root + "/workloads/llama3-8b.json --topology " + root +
                                        "/topologies/dgx-h100.json --nodes 1 --plan cp=8,zero=3,flash=on,seq=32768 "
                                        "--straggler step-cv=0.05 --json",
                                    "--workload " + root + "/workloads/mixtral-8x7b.json --topology " + root +
                                        "/topologies/dgx-h100.json --nodes 2 --plan "
                                        "dp=16,ep=8,zero=1,recompute=full,flash=on --global-batch 64 --seq 4096 "
                                        "--straggler step-cv=0.05 --json"}) {
      CAPTURE(args);
      const auto j = nlohmann::json::parse(run("simulate " + args));
      // One rank per replica (cp = 8 replicas on one node; dp = 16), none of them refused.
      CHECK(j.at("simulated_ranks").get<int>() == (args.find("cp=8") != std::string::npos ? 8 : 16));
      CHECK(j.at("straggler_wait_s").get<double>() > 0.0);
    }
  }
}

}  // namespace simulate_cli_test
