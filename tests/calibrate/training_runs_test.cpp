// Measured training runs: the reader's rules, the comparison's arithmetic against hand-computed
// statistics (a stand-in engine returns round step times, so every error below is derived by
// hand), and that the analytical engine returns exactly what `stepcast predict` computes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "support/input_error_text.hpp"

namespace training_runs_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

const std::filesystem::path kRoot = STEPCAST_SOURCE_DIR;

/// Writes `text` to a file of its own in the temporary folder and returns its path.
std::filesystem::path write_runs(const std::string& name, const std::string& text) {
  const auto folder = std::filesystem::temp_directory_path() / ("stepcast_runs_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto path = folder / name;
  std::ofstream(path) << text;
  return path;
}

std::vector<TrainingRun> read(const std::string& name, const std::string& text) {
  return read_training_runs({write_runs(name, text)}, kRoot);
}

/// A stand-in engine: each run's step time by its id, memory 10 GiB, fits.
RunEngine fixed_engine(std::map<std::string, double> step_time_s) {
  return [step_time_s](const TrainingRun& run) {
    EnginePrediction p;
    p.step_time = Seconds(step_time_s.at(run.id));
    p.memory = gib(10.0);
    p.fit = {true, gib(80.0), gib(70.0), Bytes{}};
    return p;
  };
}

// vTrain's source row 2 (data/ground_truth_single.csv): 2 GPUs, global batch 16, micro-batch 8,
// hidden 1024, 16 heads, 24 layers, sequence 1024, tp 1, dp 1, pp 2: 372.160408 ms, as
// scripts/convert-training-runs writes it.
const std::string kShapeHeader =
    "run,group,layers,hidden,heads,vocab,tied_embeddings,biases,learned_positions,norm,topology,nodes,gpus,plan,global_"
    "batch,"
    "seq_len,precision,step_time\n";
const std::string kVtrainRow =
    "vtrain:2,g,24,1024,16,50257,true,true,true,layernorm,dgx-a100,1,2,\"tp=1,pp=2,dp=1,mbs=8,recompute=full,schedule="
    "1f1b,"
    "flash=off\",16,1024,fp16,372.160408 ms\n";

/// Rows of one shape in group `group` with these ids, global batches and step times.
std::string shape_rows(const std::string& group, const std::vector<std::tuple<std::string, int, std::string>>& rows) {
  std::string out;
  for (const auto& [id, gbs, time] : rows) {
    out += id + "," + group + ",24,1024,16,50257,true,true,true,layernorm,dgx-a100,1,8,\"tp=1,pp=1,mbs=1\"," +
           std::to_string(gbs) + ",1024,bf16," + time + "\n";
  }
  return out;
}

}  // namespace

TEST_SUITE("calibrate.training_runs") {
  TEST_CASE("a vTrain row is predicted exactly as predict_step predicts its workload, plan and topology") {
    const auto runs = read("vtrain_row.csv", kShapeHeader + kVtrainRow);
    REQUIRE(runs.size() == 1);
    REQUIRE(runs[0].expressible());
    // The same inputs built by hand: GPT (4h MLP, biases, learned positions, LayerNorm, tied), one
    // DGX A100 node of which the plan uses 2 GPUs.
    workload::TransformerShape s;
    s.layers = 24;
    s.hidden = 1024;
    s.heads = 16;
    s.kv_heads = 16;
    s.ffn_hidden = 4096;
    s.vocab = 50257;
    s.seq_len = 1024;
    s.tied_embeddings = true;
    s.biases = true;
    s.learned_positions = true;
    s.norm = workload::Norm::kLayerNorm;
    workload::Workload w;
    w.shape = s;
    w.parameters = workload::parameter_count(s);
    const auto topo = topology::load_topology(kRoot / "topologies/dgx-a100.json", 1);
    const plan::Plan p = plan::resolve(
        plan::parse_plan("tp=1,pp=2,dp=1,mbs=8,recompute=full,schedule=1f1b,flash=off,gbs=16,seq=1024,precision=fp16"),
        w, 2);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepPrediction expected = graph::predict_step(w, p, topo, options);

    CHECK(runs[0].gpus == 2);
    CHECK(runs[0].topology->gpu_count() == 8);
    CHECK(plan::to_string(runs[0].plan) == plan::to_string(p));
    const RunValidation r =
        validate_runs(runs, [](const TrainingRun& run) { return predict_analytically(run, nullptr); });
    REQUIRE(r.runs[0].compared());
    CHECK(r.runs[0].prediction.step_time.value() == expected.step_time.value());
    CHECK(r.runs[0].prediction.memory.value() == expected.memory.total.value());
    REQUIRE(r.runs[0].errors.size() == 1);
    CHECK(r.runs[0].errors[0].measured == doctest::Approx(0.372160408));
    CHECK(r.runs[0].errors[0].error_pct ==
          doctest::Approx((expected.step_time.value() - 0.372160408) / 0.372160408 * 100.0));
    // tokens per step 16 x 1024 = 16384
    CHECK(*r.runs[0].predicted_tokens_per_s == doctest::Approx(16384.0 / expected.step_time.value()));
    CHECK(*r.runs[0].measured_tokens_per_s == doctest::Approx(16384.0 / 0.372160408));
  }

  TEST_CASE("median, mean, p90, worst and Spearman of a small group, computed by hand") {
    // Group "g": measured 1, 1, 2, 4 s; predicted 1.1, 0.9, 2.4, 3.0 s.
    // Errors +10, -10, +20, -25%; |error| sorted 10, 10, 20, 25: median (10 + 20) / 2 = 15,
    // mean 65 / 4 = 16.25, p90 the ceil(0.9 x 4) = 4th = 25, worst 25.
    // Throughput (8 x 1024 = 8192 tokens per step): measured 8192, 8192, 4096, 2048 -> ranks
    // 3.5, 3.5, 2, 1; predicted 7447, 9102, 3413, 2731 -> ranks 3, 4, 2, 1. Around the mean 2.5:
    // cov = 1 x 0.5 + 1 x 1.5 + 0.5 x 0.5 + 1.5 x 1.5 = 4.5; var 4.5 and 5; rho = 4.5 / sqrt(22.5).
    // Group "h" has 2 runs: no correlation.
    const std::string text = kShapeHeader +
                             shape_rows("g", {{"a", 8, "1 s"}, {"b", 8, "1000 ms"}, {"c", 8, "2 s"}, {"d", 8, "4 s"}}) +
                             shape_rows("h", {{"e", 8, "1 s"}, {"f", 8, "1 s"}});
    const auto runs = read("stats.csv", text);
    const RunValidation r =
        validate_runs(runs, fixed_engine({{"a", 1.1}, {"b", 0.9}, {"c", 2.4}, {"d", 3.0}, {"e", 1.0}, {"f", 2.0}}));
    REQUIRE(r.groups.size() == 2);
    const GroupResult& g = r.groups[0];
    CHECK(g.group == "g");
    CHECK(g.runs == 4);
    REQUIRE(g.metrics.size() == 1);
    CHECK(g.metrics[0].metric == RunMetric::kStepTime);
    CHECK(g.metrics[0].median_abs_error_pct == doctest::Approx(15.0));
    CHECK(g.metrics[0].mean_abs_error_pct == doctest::Approx(16.25));
    CHECK(g.metrics[0].p90_abs_error_pct == doctest::Approx(25.0));
    CHECK(g.metrics[0].max_abs_error_pct == doctest::Approx(25.0));
    REQUIRE(g.spearman.has_value());
    CHECK(*g.spearman == doctest::Approx(4.5 / std::sqrt(22.5)));
    CHECK_FALSE(r.groups[1].spearman.has_value());
    CHECK(r.ranked_groups == 1);
    CHECK(*r.median_spearman == doctest::Approx(4.5 / std::sqrt(22.5)));
    // Over all six runs: |error| 10, 10, 20, 25, 0, 100 -> sorted 0, 10, 10, 20, 25, 100.
    REQUIRE(r.metrics.size() == 1);
    CHECK(r.metrics[0].runs == 6);
    CHECK(r.metrics[0].median_abs_error_pct == doctest::Approx(15.0));
    CHECK(r.metrics[0].mean_abs_error_pct == doctest::Approx(165.0 / 6.0));
    CHECK(r.metrics[0].p90_abs_error_pct == doctest::Approx(100.0));  // ceil(0.9 x 6) = 6th
  }

  TEST_CASE("distinct plans: runs of one plan count once, at their mean, in the group's second Spearman") {
    // p and q run one plan (global batch 8), measured 1 and 1.2 s, predicted 1 s each; r (batch 16)
    // measured 1.5 s, predicted 2.5 s; s (batch 32) measured 2.5 s, predicted 2 s.
    // Throughput, tokens per step / step time (1024 tokens a sequence): measured 8192, 6826.7,
    // 10922.7, 13107.2 -> ranks 2, 1, 3, 4; predicted 8192, 8192, 6553.6, 16384 -> ranks 2.5, 2.5,
    // 1, 4. Around 2.5: cov = 0 + 0 - 0.75 + 2.25 = 1.5, var 5 and 4.5: rho = 1.5 / sqrt(22.5).
    // Distinct plans: batch 8 at (8192 + 6826.7) / 2 = 7509.3 measured, 8192 predicted; batch 16
    // 10922.7 and 6553.6; batch 32 13107.2 and 16384. Measured ranks 1, 2, 3; predicted 2, 1, 3:
    // rho = 1 - 6 x (1 + 1) / (3 x 8) = 0.5.
    const std::string text =
        kShapeHeader + shape_rows("g", {{"p", 8, "1 s"}, {"q", 8, "1.2 s"}, {"r", 16, "1.5 s"}, {"s", 32, "2.5 s"}});
    const RunValidation r =
        validate_runs(read("plans.csv", text), fixed_engine({{"p", 1.0}, {"q", 1.0}, {"r", 2.5}, {"s", 2.0}}));
    REQUIRE(r.groups.size() == 1);
    CHECK(*r.groups[0].spearman == doctest::Approx(1.5 / std::sqrt(22.5)));
    CHECK(r.groups[0].plans == 3);
    REQUIRE(r.groups[0].plan_spearman.has_value());
    CHECK(*r.groups[0].plan_spearman == doctest::Approx(0.5));
    CHECK(r.plan_ranked_groups == 1);
    CHECK(*r.median_plan_spearman == doctest::Approx(0.5));
  }

  TEST_CASE("Spearman: perfect order is +1, reversed -1, a constant side has none") {
    CHECK(*spearman({1, 2, 3, 4}, {10, 20, 30, 400}) == doctest::Approx(1.0));
    CHECK(*spearman({1, 2, 3}, {3, 2, 1}) == doctest::Approx(-1.0));
    CHECK_FALSE(spearman({1, 2, 3}, {5, 5, 5}).has_value());
    CHECK_FALSE(spearman({1, 2}, {1, 2}).has_value());
  }

  TEST_CASE("MFU, HFU and FLOP/s keep the run's own convention: measured x predicted / measured throughput") {
    // 8 x 1024 = 8192 tokens per step; measured 1000 tokens/s. A predicted step of 10.24 s is
    // 800 tokens/s, 0.8 of measured: MFU 40% -> 32%, HFU 50% -> 40%, 100 -> 80 TFLOP/s; each -20%.
    const std::string text =
        "run,workload,topology,nodes,plan,global_batch,seq_len,precision,tokens_per_s,model_flops_per_gpu,mfu,hfu\n"
        "a,llama2-7b,dgx-a100,1,\"fsdp=full,mbs=1\",8,1024,bf16,1000,100 TFLOP/s,40%,50%\n";
    const auto runs = read("mfu.csv", text);
    REQUIRE(runs[0].expressible());
    const RunValidation r = validate_runs(runs, fixed_engine({{"a", 10.24}}));
    const auto& e = r.runs[0].errors;
    REQUIRE(e.size() == 4);
    CHECK(e[0].metric == RunMetric::kTokensPerS);
    CHECK(e[0].predicted == doctest::Approx(800.0));
    CHECK(e[1].metric == RunMetric::kModelFlopsPerGpu);
    CHECK(e[1].predicted == doctest::Approx(80e12));
    CHECK(e[2].metric == RunMetric::kMfu);
    CHECK(e[2].measured == doctest::Approx(0.40));
    CHECK(e[2].predicted == doctest::Approx(0.32));
    CHECK(e[3].metric == RunMetric::kHfu);
    CHECK(e[3].predicted == doctest::Approx(0.40));
    for (const auto& x : e) CHECK(x.error_pct == doctest::Approx(-20.0));
  }

  TEST_CASE("inexpressible rows are listed with their reason and counted, never dropped") {
    const std::string text =
        "run,workload,topology,nodes,gpus,plan,global_batch,seq_len,precision,step_time\n"
        "ok,mpt-125m,dgx-a100,1,8,\"fsdp=full,mbs=1\",8,2048,bf16,1 s\n"
        "offload,mpt-125m,dgx-a100,1,8,\"fsdp=full,offload=cpu\",8,2048,bf16,1 s\n"
        "tp8,mpt-125m,dgx-a100,1,8,\"tp=8,mbs=1\",8,2048,bf16,1 s\n"
        "noprec,mpt-125m,dgx-a100,1,8,\"fsdp=full,mbs=1\",8,2048,,1 s\n"
        "fp8,mpt-125m,dgx-a100,1,8,\"fsdp=full,mbs=1\",8,2048,fp8,1 s\n";
    const auto runs = read("inexpressible.csv", text);
    REQUIRE(runs.size() == 5);
    CHECK(runs[0].expressible());
    CHECK(runs[1].inexpressible == "plan key \"offload\" not modelled by stepcast");
    // MPT-125M has 12 heads (workloads/mpt-125m.json), which tp = 8 does not divide.
    CHECK(runs[2].inexpressible.starts_with(
        "the model refuses the plan: attention heads (12) must be divisible by tp (8)"));
    CHECK(runs[3].inexpressible == "no precision");
    CHECK(runs[4].inexpressible == "the A100-SXM4-80GB has no fp8 peak rate");
    const RunValidation r =
        validate_runs(runs, [](const TrainingRun& run) { return predict_analytically(run, nullptr); });
    CHECK(r.runs.size() == 5);
    CHECK(r.inexpressible == 4);
    REQUIRE(r.metrics.size() == 1);
    CHECK(r.metrics[0].runs == 1);
    CHECK_FALSE(r.runs[1].compared());
    CHECK(r.runs[1].inexpressible == runs[1].inexpressible);
  }

  TEST_CASE("the JSON form reads as the CSV form does, with JSON pointers for locations") {
    const std::string json =
        "{\"source\": \"vTrain row 2\", \"runs\": [{\"run\": \"vtrain:2\", \"group\": \"g\", \"layers\": 24, "
        "\"hidden\": 1024, "
        "\"heads\": 16, \"vocab\": 50257, \"tied_embeddings\": true, \"biases\": true, \"learned_positions\": true, "
        "\"norm\": "
        "\"layernorm\", \"topology\": \"dgx-a100\", \"nodes\": 1, \"gpus\": 2, \"plan\": "
        "\"tp=1,pp=2,dp=1,mbs=8,recompute=full,schedule=1f1b,flash=off\", \"global_batch\": 16, \"seq_len\": 1024, "
        "\"precision\": \"fp16\", \"step_time\": \"372.160408 ms\"}]}";
    const auto from_json = read("vtrain_row.json", json);
    const auto from_csv = read("vtrain_row_again.csv", kShapeHeader + kVtrainRow);
    REQUIRE(from_json.size() == 1);
    CHECK(from_json[0].where.ends_with("vtrain_row.json:/runs/0"));
    CHECK(from_csv[0].where.ends_with("vtrain_row_again.csv:2"));
    CHECK(plan::to_string(from_json[0].plan) == plan::to_string(from_csv[0].plan));
    CHECK(from_json[0].workload->parameters == from_csv[0].workload->parameters);
    CHECK(from_json[0].measured.step_time->value() == from_csv[0].measured.step_time->value());
    CHECK(test::input_error_text([] {
            (void)read("bad_pointer.json",
                       "{\"runs\": [{\"workload\": \"llama2-7b\", \"topology\": \"dgx-a100\", \"plan\": "
                       "\"tp=8\", \"global_batch\": 8, \"seq_len\": 4096, \"precision\": \"bf16\", "
                       "\"peak_memory_per_gpu\": \"-3 GiB\"}]}");
          }).ends_with("bad_pointer.json:/runs/0/peak_memory_per_gpu: \"-3 GiB\" must be positive"));
  }

  TEST_CASE("a spreadsheet's byte order mark and CRLF line ends are read as plain CSV") {
    std::string text = "\xEF\xBB\xBF" + kShapeHeader + kVtrainRow;
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2))
      text.replace(at, 1, "\r\n");
    const auto runs = read("excel.csv", text);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == "vtrain:2");
    CHECK(runs[0].measured.step_time->value() == doctest::Approx(0.372160408));
  }

  TEST_CASE("a shape's left-out columns take a workload file's defaults, GPT's parameter count follows") {
    // l = 2, h = 64, a = 4, V = 1000, s = 128, LayerNorm (2h), biases, learned positions, tied:
    // per layer 12h^2 + 13h = 49152 + 832 = 49984; x 2 = 99968; embeddings Vh = 64000;
    // positions sh = 8192; final norm 2h = 128: 172288 (Narayanan et al. 2021, section 5.1).
    const std::string text =
        "run,layers,hidden,heads,vocab,biases,learned_positions,tied_embeddings,norm,topology,nodes,plan,global_batch,"
        "seq_len,precision,"
        "step_time\n"
        "tiny,2,64,4,1000,true,true,true,layernorm,dgx-a100,1,\"tp=1,mbs=1\",8,128,bf16,10 ms\n";
    const auto runs = read("tiny.csv", text);
    REQUIRE(runs[0].expressible());
    const auto& shape = *runs[0].workload->shape;
    CHECK(shape.kv_heads == 4);
    CHECK(shape.ffn_hidden == 256);
    CHECK_FALSE(shape.gated_mlp);
    CHECK(runs[0].workload->parameters == 172288.0);
    CHECK(runs[0].gpus == 8);  // all of one node when gpus is left out
    CHECK(runs[0].group == "l=2 h=64 a=4 on dgx-a100, 8 GPUs");
  }

  TEST_CASE("a workload path is relative to the runs file, a name is a shipped workload") {
    const auto folder = write_runs("placeholder", "").parent_path() / "models";
    std::filesystem::create_directories(folder);
    std::filesystem::copy_file(kRoot / "workloads/mpt-125m.json", folder / "mine.json",
                               std::filesystem::copy_options::overwrite_existing);
    const std::string text =
        "run,workload,topology,nodes,plan,global_batch,seq_len,precision,step_time\n"
        "path,models/mine.json,dgx-a100,1,\"fsdp=full\",8,2048,bf16,1 s\n"
        "name,mpt-125m,dgx-a100,1,\"fsdp=full\",8,2048,bf16,1 s\n";
    const auto runs = read("paths.csv", text);
    CHECK(runs[0].workload->name == "mpt-125m");
    CHECK(runs[1].workload->name == "mpt-125m");
    // MPT-125M's NumParams in llm-foundry's benchmarking table at sequence 2048.
    CHECK(runs[1].workload->parameters == 125311488.0);
  }

  // A measured peak is torch.cuda.max_memory_allocated(): the caching allocator's tensors, without
  // the CUDA context and NCCL's buffers that the framework overhead (1 GiB by default) stands for.
  TEST_CASE("peak memory is compared with `stepcast memory`'s total less its framework overhead, reported apart") {
    const std::string text =
        "run,workload,topology,nodes,plan,global_batch,seq_len,precision,step_time,peak_memory_per_gpu\n"
        "m,mpt-1b,dgx-a100,1,\"fsdp=full,mbs=4,flash=on\",32,2048,bf16,2 s,20 GiB\n";
    const auto runs = read("memory.csv", text);
    REQUIRE(runs[0].expressible());
    const cost::MemoryBreakdown expected = cost::estimate_memory(*runs[0].workload, runs[0].plan);
    const RunValidation r =
        validate_runs(runs, [](const TrainingRun& run) { return predict_analytically(run, nullptr); });
    const auto& e = r.runs[0].errors;
    REQUIRE(e.size() == 2);
    CHECK(e[1].metric == RunMetric::kPeakMemory);
    CHECK(e[1].measured == 20.0 * 1024 * 1024 * 1024);
    const double allocated = expected.total.value() - 1024.0 * 1024 * 1024;
    CHECK(e[1].predicted == doctest::Approx(allocated));
    CHECK(e[1].error_pct == doctest::Approx((allocated / (20.0 * 1024 * 1024 * 1024) - 1.0) * 100.0));
    REQUIRE(r.metrics.size() == 2);
    CHECK(r.metrics[1].metric == RunMetric::kPeakMemory);
  }
}

}  // namespace training_runs_test
