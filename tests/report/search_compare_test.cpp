// `search --compare PLAN` on the Megatron-Bridge H100 sizes: the published plan's rank, or the
// step-time terms that put the search's pick ahead of it; and the lead note on every search. The
// published plans and throughputs are Megatron-Bridge's DGX-H100 table (../shared/data/
// training_runs_megatron_bridge.md, 25.09 container): Llama 3 70B on 64 GPUs, FP8, GBS 128,
// MBS 1, sequence 8192, TP 4, PP 8, VP 5, 1602 tokens/s/GPU; Llama 3.1 405B on 1,024 GPUs, GBS 512,
// TP 8, PP 8, CP 2, VP 8, 292 tokens/s/GPU.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "support/run_stepcast.hpp"
#include "support/scratch_folder.hpp"

namespace search_compare_test {

using namespace stepcast;

namespace {

const nlohmann::json& table(const nlohmann::json& report, const std::string& name) {
  for (const auto& t : report.at("tables")) {
    if (t.at("name") == name) return t;
  }
  FAIL("no table " << name);
  static const nlohmann::json none;
  return none;
}

std::string note_starting(const nlohmann::json& report, const std::string& start) {
  for (const auto& n : report.at("notes")) {
    if (n.get<std::string>().starts_with(start)) return n.get<std::string>();
  }
  return {};
}

// The step's terms add up to it (compute + bubble + exposed communication + optimizer), for each
// plan and for their difference.
void check_terms_add_up(const nlohmann::json& rows) {
  double best = 0.0, compared = 0.0, difference = 0.0;
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    best += rows[i].at("best_s").get<double>();
    compared += rows[i].at("compared_s").get<double>();
    difference += rows[i].at("difference_s").get<double>();
  }
  const auto& step = rows.back();
  CHECK(step.at("term") == "step time");
  CHECK(best == doctest::Approx(step.at("best_s").get<double>()).epsilon(1e-6));
  CHECK(compared == doctest::Approx(step.at("compared_s").get<double>()).epsilon(1e-6));
  CHECK(difference == doctest::Approx(step.at("difference_s").get<double>()).epsilon(1e-6));
}

}  // namespace

TEST_SUITE("report.search_compare") {
  TEST_CASE("Llama 3 70B on 64 H100: the published plan's rank, and why the pick leads it") {
    const std::string published = "tp=4,pp=8,vp=5,schedule=interleaved,sp=on,tp-overlap=on,zero=1";
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload llama3-70b --topology dgx-h100 --gpus 64 --global-batch 128 --seq 8192 --precision fp8 "
        "--refine 0 --top 10 --json --compare \"" +
        published + "\""));
    const std::string where = note_starting(report, "compared: ");
    REQUIRE(!where.empty());
    CHECK(where.find("ranks #") != std::string::npos);  // the search enumerates it
    const auto& rows = table(report, "compare").at("rows");
    check_terms_add_up(rows);
    const double step = rows.back().at("compared_s").get<double>();
    // Measured: 128 x 8192 tokens / (1602 tokens/s/GPU x 64 GPUs) = 10.23 s a step.
    CHECK(std::abs(step / (128.0 * 8192.0 / (1602.0 * 64.0)) - 1.0) < 0.15);
    // Ranked below 10, the output says which terms the pick wins by.
    const auto rank = std::stoul(where.substr(where.find("ranks #") + 7));
    if (rank > 10) CHECK(note_starting(report, "why #1 leads it: ahead on ").size() > 30);
    CHECK(note_starting(report, "lead: ").find("faster than #") != std::string::npos);
  }

  TEST_CASE("Llama 3.1 405B on 1,024 H100 with cp up to 2: the published plan is in the searched space") {
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload llama3-405b --topology dgx-h100 --gpus 1024 --global-batch 512 --seq 8192 "
        "--precision fp8 --max-cp 2 --refine 0 --max-mbs 2 --json --compare "
        "\"tp=8,pp=8,cp=2,vp=8,schedule=interleaved,sp=on,tp-overlap=on,zero=1,pp-embedding-loss-layers=on\""));
    const std::string where = note_starting(report, "compared: ");
    CHECK(where.find("ranks #") != std::string::npos);
    const auto& rows = table(report, "compare").at("rows");
    check_terms_add_up(rows);
    // Measured: 512 x 8192 / (292 x 1024) = 14.03 s a step.
    CHECK(std::abs(rows.back().at("compared_s").get<double>() / (512.0 * 8192.0 / (292.0 * 1024.0)) - 1.0) < 0.15);
  }

  TEST_CASE("a compared plan outside the space, over memory, breaking a rule, or on another batch") {
    const std::string search =
        "search --workload llama3-8b --topology dgx-h100 --gpus 8 --global-batch 32 --seq 8192 --refine 0 --json ";
    // cp=2 is not searched without --max-cp; with ZeRO-3 over dp x cp = 8 ranks it fits.
    const auto outside = nlohmann::json::parse(test::run_stepcast(search + "--compare \"dp=4,cp=2,zero=3\""));
    CHECK(note_starting(outside, "compared: dp=4,tp=1,pp=1,").find("outside the searched space") != std::string::npos);
    // Llama 3 8B with DDP on one GPU's state: 16 bytes x 8.03e9 parameters = 128 GB > 80 GiB.
    const auto over = nlohmann::json::parse(test::run_stepcast(search + "--compare \"dp=8\""));
    CHECK(note_starting(over, "compared: ").find("does not fit: it needs") != std::string::npos);
    const auto broken =
        nlohmann::json::parse(test::run_stepcast(search + "--compare \"dp=2,pp=4,vp=3,schedule=interleaved\""));
    CHECK(note_starting(broken, "compared: ").find("breaks a plan rule: layers (32) must be divisible by pp*vp") !=
          std::string::npos);
    const auto other_batch = test::run_stepcast_with_status(search + "--compare \"dp=8,gbs=64\"");
    CHECK(other_batch.exit_code == 2);
    CHECK(other_batch.output.find("gbs=64 is not the search's --global-batch 32") != std::string::npos);
  }

  TEST_CASE("--compare repeated: one note per plan in order, and a terms table for each that fits") {
    // Three plans of Llama 3 8B on 8 H100s: ZeRO-3 over dp x cp (fits, outside the searched space),
    // a pipeline of 3 stages x 3 chunks that 32 layers do not divide (a rule), and FSDP over 8.
    const auto report = nlohmann::json::parse(test::run_stepcast(
        "search --workload llama3-8b --topology dgx-h100 --gpus 8 --global-batch 32 --seq 8192 --refine 0 --json "
        "--compare \"dp=4,cp=2,zero=3\" --compare \"dp=2,pp=4,vp=3,schedule=interleaved\" --compare \"fsdp=8\""));
    std::vector<std::string> compared;
    for (const auto& n : report.at("notes")) {
      if (n.get<std::string>().starts_with("compared: ")) compared.push_back(n.get<std::string>());
    }
    REQUIRE(compared.size() == 3);
    CHECK(compared[0].starts_with("compared: dp=4,tp=1,pp=1,"));
    CHECK(compared[1].find("layers (32) must be divisible by pp*vp") != std::string::npos);
    CHECK(compared[2].starts_with("compared: dp=8,"));
    // Tables for the first and third plan, named by their place on the command line.
    std::vector<std::string> names;
    for (const auto& t : report.at("tables")) names.push_back(t.at("name").get<std::string>());
    CHECK(std::count(names.begin(), names.end(), "compare") == 1);
    CHECK(std::count(names.begin(), names.end(), "compare-2") == 0);
    CHECK(std::count(names.begin(), names.end(), "compare-3") == 1);
    check_terms_add_up(table(report, "compare").at("rows"));
    check_terms_add_up(table(report, "compare-3").at("rows"));
    // Both tables set their plan beside the same #1.
    CHECK(table(report, "compare").at("rows").back().at("best_s") ==
          table(report, "compare-3").at("rows").back().at("best_s"));
  }

  TEST_CASE("a compute lead says how much of it the fitted time per kernel makes") {
    // tp=8 runs the same work of Llama 3 8B on 8 H100 in twice the kernels of #1's plan. The part
    // of the compute difference the per-kernel overheads make is the difference less the one with
    // no GPU or host time per kernel, which a calibration file of zero overheads gives here.
    const std::string search = "--workload llama3-8b --topology dgx-h100 --gpus 8 --global-batch 64";
    const auto report = nlohmann::json::parse(
        test::run_stepcast("search " + search + " --refine 0 --top 1 --compare \"tp=8,zero=1\" --json"));
    const std::string best = table(report, "plans").at("rows").at(0).at("plan").get<std::string>();
    const test::ScratchFolder folder("stepcast_search_compare_", "overheads");
    const auto zero = folder.path / "zero-overheads.json";
    std::ofstream(zero) << R"({"source": "test", "compute": {"kernel_overhead": "0 s", "host_overhead": "0 s",
        "source": "test: no time per kernel"}})";
    const auto compute = [&](const std::string& plan, const std::string& extra) {
      return nlohmann::json::parse(
                 test::run_stepcast("predict --workload llama3-8b --topology dgx-h100 --gpus 8 --plan \"" + plan +
                                    ",gbs=64\" --json" + extra))
          .at("breakdown")
          .at("compute_s")
          .get<double>();
    };
    const std::string with_zero = " --calibration " + zero.string();
    const double difference = compute("tp=8,zero=1", "") - compute(best, "");
    const double work = compute("tp=8,zero=1", with_zero) - compute(best, with_zero);
    const std::string why = note_starting(report, "why #1 leads it");
    CAPTURE(why);
    CHECK(why.find(fmt::format("its compute lead of {:.3f} s: {:.3f} s from the time per kernel", difference,
                               difference - work)) != std::string::npos);
    CHECK(why.find(fmt::format("{:.3f} s from the kernels' work", work)) != std::string::npos);
  }

  TEST_CASE("simulate runs both published plans, within 15% of their measured steps") {
    struct Published {
      std::string args;
      double measured_s;
    };
    // Measured steps as above: 10.23 s and 14.03 s.
    for (const Published& p :
         {Published{"--workload llama3-70b --gpus 64 --plan "
                    "\"tp=4,pp=8,vp=5,schedule=interleaved,sp=on,tp-overlap=on,zero=1,gbs=128,seq=8192,precision=fp8\"",
                    128.0 * 8192.0 / (1602.0 * 64.0)},
          Published{"--workload llama3-405b --gpus 1024 --plan "
                    "\"tp=8,pp=8,cp=2,vp=8,schedule=interleaved,sp=on,tp-overlap=on,zero=1,pp-embedding-loss-layers=on,"
                    "gbs=512,seq=8192,precision=fp8\"",
                    512.0 * 8192.0 / (292.0 * 1024.0)}}) {
      const auto out = nlohmann::json::parse(test::run_stepcast("simulate --topology dgx-h100 --json " + p.args));
      const double simulated = out.at("step_time_s").get<double>();
      CAPTURE(p.args);
      CHECK(std::abs(simulated / p.measured_s - 1.0) < 0.15);
    }
  }
}

}  // namespace search_compare_test
