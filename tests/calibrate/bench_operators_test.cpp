// The operator list as stepcast-kernel-bench times it: each memory-bound operator's stand-in
// kernel must move exactly the bytes the compute model prices (else a fitted HBM efficiency
// would mean something else), with the pattern of what the operator does. Expected figures are
// derived below from the operator definitions they stand for (Korthikanti et al. 2022 section
// 4.1, ZeRO section 3.1, Megatron-LM's vocabulary-parallel cross-entropy).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "stepcast/calibrate/bench_operators.hpp"
#include "stepcast/core/input_file.hpp"
#include "support/run_stepcast.hpp"

namespace bench_operators_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

std::string root(const std::string& rel) { return std::string(STEPCAST_SOURCE_DIR) + "/" + rel; }

std::vector<BenchOperator> list_for(const std::string& workload_file, const std::string& plan_text, int gpus) {
  const workload::Workload w = workload::load_workload(root(workload_file));
  const plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, gpus);
  plan::validate(p, w, gpus);
  return bench_operators(w, p, false);
}

const BenchOperator& find(const std::vector<BenchOperator>& ops, std::string_view name, cost::OpPass pass) {
  for (const auto& b : ops) {
    if (b.op.name == name && b.op.pass == pass) return b;
  }
  FAIL("no operator " << name);
  return ops.front();
}

}  // namespace

TEST_SUITE("calibrate.bench_operators") {
  TEST_CASE("every memory-bound operator of every shipped workload gets a kernel that moves exactly its bytes") {
    const std::vector<std::string> plans = {"tp=1", "tp=8,sp=on,flash=on", "tp=2,recompute=full,precision=fp8",
                                            "tp=4,recompute=selective,precision=fp32,optimizer=sgd-momentum",
                                            "tp=1,precision=fp16,zero=1,mbs=2,flash=on"};
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(root("workloads"))) {
      const workload::Workload w = workload::load_workload(entry.path());
      if (!w.shape) continue;
      for (const std::string& text : plans) {
        const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 8);
        if (!plan::problems(p, w, 8).empty()) continue;  // e.g. heads that tp=8 does not divide
        for (const BenchOperator& b : bench_operators(w, p, false)) {
          if (b.op.kind != cost::OpKind::kMemory) {
            CHECK_FALSE(b.kernel.has_value());
            continue;
          }
          INFO(w.name << " " << text << ": " << b.op.name);
          REQUIRE(b.kernel.has_value());
          CHECK(b.kernel->bytes(b.op.elements) == doctest::Approx(b.op.bytes.value()).epsilon(1e-12));
          CHECK(b.kernel->reads + b.kernel->writes >= 1);
          if (b.kernel->row_length > 0.0) {
            const double rows = b.op.elements / b.kernel->row_length;
            CHECK(rows == std::floor(rows));
          }
          ++checked;
        }
      }
    }
    CHECK(checked > 1000);
  }

  TEST_CASE(
      "Llama-2 7B: norms over rows of h, softmax over rows of s, the loss over the vocabulary, Adam's 14 + 14 bytes") {
    // h = 4096, s = 4096, V = 32000, bf16 activations, Adam with fp32 state (2 + 2 + 12 bytes).
    const auto ops = list_for("workloads/llama2-7b.json", "tp=1,fsdp=8", 8);
    const auto& norm = find(ops, "input norm", cost::OpPass::kForward);
    REQUIRE(norm.kernel);
    CHECK(norm.kernel->pattern == MemoryPattern::kRowNorm);
    CHECK(norm.kernel->row_length == 4096.0);
    // Reads x, writes y: 2 x 4096 x 4096 x 2 bytes.
    CHECK(norm.kernel->reads == 1);
    CHECK(norm.kernel->writes == 1);
    CHECK(norm.op.bytes.value() == 2.0 * 4096 * 4096 * 2);
    // The backward reads x and dy and writes dx.
    CHECK(find(ops, "input norm backward", cost::OpPass::kBackward).kernel->reads == 2);
    // SwiGLU reads gate and up, writes their product.
    const auto& swiglu = find(ops, "swiglu", cost::OpPass::kForward);
    CHECK(swiglu.kernel->pattern == MemoryPattern::kElementwise);
    CHECK(swiglu.kernel->reads == 2);
    // The loss: 16-bit logits read, then four fp32 passes (2 + 16 = 18 bytes a logit), over rows of
    // the whole 32000-token vocabulary at tp=1: nine 2-byte streams, one of them written.
    const auto& loss = find(ops, "cross-entropy", cost::OpPass::kForward);
    CHECK(loss.kernel->pattern == MemoryPattern::kRowSoftmax);
    CHECK(loss.kernel->row_length == 32000.0);
    CHECK(loss.kernel->reads == 8);
    CHECK(loss.kernel->writes == 1);
    CHECK(loss.op.kernels == 4.0);
    // Adam reads the 2-byte gradient and 12 bytes of state and writes the state and the 2-byte
    // weight: 7 + 7 streams of 2 bytes.
    const auto& adam = find(ops, "optimizer update", cost::OpPass::kForward);
    CHECK(adam.kernel->pattern == MemoryPattern::kElementwise);
    CHECK(adam.kernel->reads == 7);
    CHECK(adam.kernel->writes == 7);
    CHECK(adam.kernel->element_bytes == 2);
    CHECK(find(ops, "gradient norm", cost::OpPass::kForward).kernel->pattern == MemoryPattern::kReduction);
    CHECK(find(ops, "gradient norm", cost::OpPass::kForward).kernel->writes == 0);
    CHECK(find(ops, "zero gradients", cost::OpPass::kForward).kernel->pattern == MemoryPattern::kFill);
    CHECK(find(ops, "zero gradients", cost::OpPass::kForward).kernel->reads == 0);
    // Without flash attention the softmax runs over each query's 4096 keys.
    const auto unfused = list_for("workloads/llama2-7b.json", "tp=1,fsdp=8,flash=off", 8);
    const auto& softmax = find(unfused, "softmax", cost::OpPass::kForward);
    CHECK(softmax.kernel->pattern == MemoryPattern::kRowSoftmax);
    CHECK(softmax.kernel->row_length == 4096.0);
    CHECK(softmax.op.elements == 32.0 * 4096 * 4096);
    // GEMMs run in the plan's precision, attention at 16 bits, element-wise kernels on 16-bit activations.
    const auto fp8 = list_for("workloads/llama2-7b.json", "tp=8,flash=on,precision=fp8", 8);
    CHECK(find(fp8, "qkv projection", cost::OpPass::kForward).precision == plan::Precision::kFp8);
    CHECK(find(fp8, "flash attention", cost::OpPass::kForward).precision == plan::Precision::kBf16);
    CHECK(find(fp8, "swiglu", cost::OpPass::kForward).precision == plan::Precision::kBf16);
    // tp=8 gives each rank 4000 of the 32000 vocabulary columns.
    CHECK(find(fp8, "cross-entropy", cost::OpPass::kForward).kernel->row_length == 4000.0);
  }

  TEST_CASE(
      "GPT-3 175B: dropout draws and writes its mask forward and reads it backward, a padded vocabulary runs "
      "element-wise") {
    const auto ops = list_for("workloads/gpt3-175b.json", "tp=8", 8);
    const auto& fwd = find(ops, "dropout + residual (attention)", cost::OpPass::kForward);
    REQUIRE(fwd.kernel);
    CHECK(fwd.kernel->pattern == MemoryPattern::kDropout);
    CHECK(fwd.kernel->mask == MaskAccess::kWrite);
    // Reads the block output and the residual, writes the sum (2 bytes each) and a 1-byte mask.
    CHECK(fwd.kernel->reads == 2);
    CHECK(fwd.kernel->writes == 1);
    const auto& bwd = find(ops, "dropout backward (attention)", cost::OpPass::kBackward);
    CHECK(bwd.kernel->mask == MaskAccess::kRead);
    CHECK(bwd.kernel->reads == 1);
    // 50257 / 8 is not whole (Megatron pads the vocabulary): no whole rows, so element-wise.
    const auto& loss = find(ops, "cross-entropy", cost::OpPass::kForward);
    CHECK(loss.kernel->pattern == MemoryPattern::kElementwise);
    CHECK(loss.kernel->row_length == 0.0);
    CHECK(find(ops, "bias gradients", cost::OpPass::kWeightGrad).kernel->pattern == MemoryPattern::kReduction);
  }

  // Mixtral 8x7B (workloads/mixtral-8x7b.json: 8 experts of ffn 14,336, top-2, hidden 4096) at
  // ep=8 on 8 GPUs: each GPU holds one expert, and under balanced routing receives a share 1/8
  // of every rank's 4,096 x 2 routed rows: 8 x 8,192 / 8 = 8,192 rows; gate and up together
  // are 2 x 14,336 = 28,672 columns. Every layer of the model has routed experts, so no dense MLP.
  TEST_CASE("an MoE model's list is its MoE layer: Mixtral 8x7B's one expert a GPU over 8,192 rows, no dense MLP") {
    const auto ops = list_for("workloads/mixtral-8x7b.json", "ep=8,mbs=1,gbs=64,seq=4096", 8);
    const auto& gate_up = find(ops, "expert gate+up (grouped)", cost::OpPass::kForward);
    CHECK(gate_up.op.gemm.batch == 1.0);
    CHECK(gate_up.op.gemm.m == 8192.0);
    CHECK(gate_up.op.gemm.n == 28'672.0);
    CHECK(gate_up.op.gemm.k == 4096.0);
    CHECK(find(ops, "router", cost::OpPass::kForward).op.gemm.n == 8.0);
    for (const auto& b : ops) {
      CHECK(b.op.name != "mlp gate+up projection");
      if (b.op.part == cost::OpPart::kLayer) CHECK(b.layer->moe);
    }
  }

  // Nemotron 3 Nano's stack (tests/workload/hybrid_workload_test.cpp): 23 Mamba-2 layers, 6
  // attention layers without an MLP, 23 layers of routed experts; the list holds each once.
  TEST_CASE("a hybrid's list holds one layer of each kind: Nemotron 3 Nano's Mamba-2, attention and MoE layers") {
    const auto ops = list_for("workloads/nemotron-3-nano.json", "ep=8,mbs=1,gbs=64,seq=8192,flash=on", 8);
    const auto kind_of = [&](std::string_view name) {
      return find(ops, name, cost::OpPass::kForward).layer.value_or(cost::LayerKind{});
    };
    CHECK(kind_of("ssd chunk scores").block == workload::Block::kMamba);
    CHECK(kind_of("flash attention").block == workload::Block::kAttention);
    CHECK(kind_of("router").block == workload::Block::kMlp);
    CHECK(kind_of("router").moe);
    std::set<std::pair<workload::Block, bool>> kinds;
    for (const auto& b : ops) {
      CHECK(b.op.name != "mlp up projection");
      if (b.layer) kinds.emplace(b.layer->block, b.layer->moe);
    }
    CHECK(kinds.size() == 3);
    CHECK_FALSE(find(ops, "embedding lookup", cost::OpPass::kForward).layer.has_value());
  }

  TEST_CASE("stepcast operators --format json: the rows the bench reads, integers where it needs exact shapes") {
    const std::string out = test::run_stepcast(
        "operators --workload workloads/llama2-7b.json --topology topologies/dgx-h200.json --nodes 1 "
        "--plan tp=8,flash=on --format json");
    const auto j = nlohmann::json::parse(out);
    const auto& table = j.at("tables").at(0);
    CHECK(table.at("name") == "operators");
    bool seen_qkv = false;
    for (const auto& row : table.at("rows")) {
      if (row.at("operator") == "qkv projection" && row.at("pass") == "forward") {
        // Q, K and V of 32 heads of 128 over 8 ranks: 3 x 4096 / 8 = 1536 columns, 4096 tokens.
        CHECK(row.at("m").get<std::int64_t>() == 4096);
        CHECK(row.at("n").get<std::int64_t>() == 1536);
        CHECK(row.at("k").get<std::int64_t>() == 4096);
        CHECK(row.at("kind") == "gemm");
        CHECK(row.at("elements").is_null());
        seen_qkv = true;
      }
      if (row.at("operator") == "flash attention") {
        // 32 / 8 = 4 heads, 4096 / 128 = 32 query blocks each.
        CHECK(row.at("batch").get<std::int64_t>() == 4);
        CHECK(row.at("elements").get<std::int64_t>() == 128);
      }
    }
    CHECK(seen_qkv);
    const auto bad = test::run_stepcast_with_status(
        "operators --workload workloads/llama2-7b.json --topology topologies/dgx-h200.json "
        "--nodes 1 --calibration x.json");
    CHECK(bad.exit_code != 0);
  }
}

}  // namespace bench_operators_test
