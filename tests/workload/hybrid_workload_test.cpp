// A hybrid Mamba-2 / attention / MoE stack (Nemotron 3 Nano) against its model card, and the
// reader's refusals of a pattern that contradicts the rest of the shape.
//
// Nemotron 3 Nano (workloads/nemotron-3-nano.json, from its Hugging Face config.json): h = 2688,
// 52 layers by pattern: 23 Mamba-2 (M), 23 MoE (E), 6 attention (*); RMSNorm (a gain of h).
//   Mamba-2 layer: in_proj h x (2 x 4096 + 2 x 8 x 128 + 64 = 10,304) = 27,697,152; conv1d over
//     4096 + 2048 = 6144 channels, 4 taps and a bias: 30,720; dt bias, A, D: 3 x 64 = 192; the
//     gated norm 4096; out_proj 4096 x 2688 = 11,010,048; the layer's norm 2688: 38,744,896.
//   attention layer: q and o 2 x 2688 x 4096, k and v 2 x 2688 x 256, norm 2688: 23,399,040.
//   MoE layer: router 2688 x 128 = 344,064; 128 squared-ReLU experts of 2 x 2688 x 1856 =
//     9,977,856 each; one shared expert 2 x 2688 x 3712 = 19,955,712; norm 2688: 1,297,468,032;
//     one token's share (6 experts): 80,169,600.
//   embedding and untied output head 2 x 131,072 x 2688, final norm 2688: 704,645,760.
//   total 23 x 38,744,896 + 6 x 23,399,040 + 23 x 1,297,468,032 + 704,645,760 = 31,577,937,344;
//   active 23 x 38,744,896 + 6 x 23,399,040 + 23 x 80,169,600 + 704,645,760 = 3,580,073,408.
// The model card: 31.6B parameters, about 3.2B active (3.6B including embeddings).
//
// Nemotron 3 Super (workloads/nemotron-3-super.json): h = 4096, 88 layers: 40 Mamba-2, 40 MoE,
// 8 attention; LatentMoE experts on a 1024 latent.
//   Mamba-2 layer: in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128 = 18,560) = 76,021,760; conv1d
//     over 8192 + 2048 = 10,240 channels, 4 taps and a bias: 51,200; dt bias, A, D: 384; the gated
//     norm 8192; out_proj 8192 x 4096 = 33,554,432; the layer's norm 4096: 109,640,064.
//   attention layer: q and o 2 x 4096 x 4096, k and v 2 x 4096 x 256, norm 4096: 35,655,680.
//   MoE layer: router 4096 x 512 = 2,097,152; latent projections 2 x 4096 x 1024 = 8,388,608;
//     512 squared-ReLU experts of 2 x 1024 x 2688 = 5,505,024 each; one shared expert
//     2 x 4096 x 5376 = 44,040,192; norm 4096: 2,873,102,336; one token's share (22 experts):
//     175,640,576.
//   embedding and untied output head 2 x 131,072 x 4096, final norm 4096: 1,073,745,920.
//   main model 40 x 109,640,064 + 8 x 35,655,680 + 40 x 2,873,102,336 + 1,073,745,920 =
//   120,668,687,360 (its page: 120.6B); active 40 x 175,640,576 in place of the MoE layers:
//   12,770,216,960.
//   The MTP module, held once for its two depths: attention 35,651,584, the MoE MLP
//   2,097,152 + 8,388,608 + 512 x 5,505,024 + 44,040,192, two block norms 8192, its projection
//   2 x 4096 x 4096 and two norms 8192: 2,942,320,640.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/workload/workload.hpp"
#include "support/input_error_text.hpp"
#include "support/run_stepcast.hpp"
#include "support/scratch_folder.hpp"

namespace hybrid_workload_test {

namespace fs = std::filesystem;
using namespace stepcast;

namespace {

const fs::path kSource = STEPCAST_SOURCE_DIR;

workload::Workload nano() { return workload::load_workload(kSource / "workloads/nemotron-3-nano.json"); }
workload::Workload super() { return workload::load_workload(kSource / "workloads/nemotron-3-super.json"); }

/// Nano's file with one piece of its shape replaced.
std::string error_with(const std::string& from, const std::string& to) {
  std::ifstream in(kSource / "workloads/nemotron-3-nano.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  const test::ScratchFolder folder("stepcast_hybrid_workload_", std::to_string(at));
  const fs::path file = folder.path / "nano.json";
  std::ofstream(file) << text;
  return test::input_error_text([&] { (void)workload::load_workload(file); });
}

}  // namespace

TEST_SUITE("workload.hybrid") {
  TEST_CASE("Nemotron 3 Nano's pattern: 52 layers, 23 Mamba-2, 6 attention, 23 with routed experts") {
    const auto shape = *nano().shape;
    CHECK(shape.layers == 52);
    int mamba = 0;
    int attention = 0;
    for (int i = 0; i < shape.layers; ++i) {
      mamba += shape.block(i) == workload::Block::kMamba ? 1 : 0;
      attention += shape.block(i) == workload::Block::kAttention ? 1 : 0;
    }
    CHECK(mamba == 23);
    CHECK(attention == 6);
    CHECK(shape.moe_layer_count() == 23);
    CHECK(shape.block(0) == workload::Block::kMamba);
    CHECK(shape.block(5) == workload::Block::kAttention);
    CHECK(shape.is_moe_layer(1));
    CHECK_FALSE(shape.is_moe_layer(0));
  }

  TEST_CASE("its parameters, layer by layer and whole, as derived above and within 1% of the model card") {
    const auto w = nano();
    const auto& shape = *w.shape;
    CHECK(workload::block_parameter_count(shape, 0) == 38'744'896.0);
    CHECK(workload::block_parameter_count(shape, 5) == 23'399'040.0);
    CHECK(workload::block_parameter_count(shape, 1) == 1'297'468'032.0);
    CHECK(workload::block_parameter_count(shape, 1, true) == 80'169'600.0);
    CHECK(w.parameters == 31'577'937'344.0);
    CHECK(w.active_parameters == 3'580'073'408.0);
    CHECK(w.parameters == doctest::Approx(31.6e9).epsilon(0.01));
    CHECK(w.active_parameters == doctest::Approx(3.6e9).epsilon(0.01));
  }

  TEST_CASE("the same model read from its Hugging Face config.json (model_type nemotron_h)") {
    // The config's keys as NemotronHConfig names them (tests/workload/data/, from the model's hub page).
    const auto w = workload::load_workload(kSource / "tests/workload/data/nemotron-3-nano-30b-a3b-config.json");
    REQUIRE(w.shape);
    CHECK(w.shape->hybrid->pattern == nano().shape->hybrid->pattern);
    CHECK(w.parameters == 31'577'937'344.0);
    CHECK(w.active_parameters == 3'580'073'408.0);
    CHECK(w.shape->explicit_head_dim == 128);
    CHECK_FALSE(w.shape->rotary);
  }

  TEST_CASE("Nemotron 3 Super: LatentMoE experts and a shared-weight MTP module, as derived above") {
    const auto w = super();
    const auto& shape = *w.shape;
    CHECK(shape.layers == 88);
    CHECK(shape.moe_layer_count() == 40);
    CHECK(shape.expert_width() == 1024);
    CHECK(workload::block_parameter_count(shape, 0) == 109'640'064.0);
    CHECK(workload::block_parameter_count(shape, 7) == 35'655'680.0);
    CHECK(workload::block_parameter_count(shape, 1) == 2'873'102'336.0);
    CHECK(workload::block_parameter_count(shape, 1, true) == 175'640'576.0);
    CHECK(shape.mtp_layers == 2);
    CHECK(shape.mtp_weight_modules() == 1);
    CHECK(workload::mtp_parameter_count(shape) == 2'942'320'640.0);
    CHECK(w.parameters - workload::mtp_parameter_count(shape) == 120'668'687'360.0);
    CHECK(w.parameters == 120'668'687'360.0 + 2'942'320'640.0);
    CHECK(w.parameters - workload::mtp_parameter_count(shape) == doctest::Approx(120.6e9).epsilon(0.01));
  }

  TEST_CASE("Nemotron 3 Super read from a config.json of its keys: the main model and one MTP module") {
    // NemotronHConfig's keys with the values public launch scripts give the model (the file's
    // _name_or_path); num_nextn_predict_layers 1: one module at one depth, counted once.
    const auto w = workload::load_workload(kSource / "tests/workload/data/nemotron-3-super-120b-a12b-config.json");
    REQUIRE(w.shape);
    CHECK(w.shape->hybrid->pattern == super().shape->hybrid->pattern);
    CHECK(w.shape->moe->latent == 1024);
    CHECK(w.shape->mtp_layers == 1);
    CHECK(w.parameters == 120'668'687'360.0 + 2'942'320'640.0);
  }

  TEST_CASE("predict says the MTP module apart on its Parameters line") {
    // 120,668,687,360 + 2,942,320,640 = 123,611,008,000 in all; active: 12,770,216,960 in the main
    // model and the module's 244,858,880 (attention 35,651,584, router, latent and shared expert
    // 54,525,952, 22 experts 121,110,528, norms 16,384, projection 33,554,432) = 13,015,075,840.
    const std::string out = test::run_stepcast(
        "memory --workload workloads/nemotron-3-super.json --plan dp=64,ep=64,zero=1,mbs=1,gbs=512 --topology "
        "gb300-nvl72 "
        "--gpus 64");
    CHECK(out.find("Parameters: 123.6 billion (13.02 billion active per token; 2.942 billion of them in the MTP "
                   "modules)") != std::string::npos);
  }

  TEST_CASE("a pattern that contradicts the shape is refused at its key") {
    CHECK(error_with("\"hybrid_pattern\": \"MEMEM*", "\"hybrid_pattern\": \"MXMEM*")
              .find("letter 'X' at layer 1 is none of M (Mamba-2), * (attention), - (MLP), E (routed experts)") !=
          std::string::npos);
    CHECK(error_with("\"hidden\": 2688,", "\"layers\": 50, \"hidden\": 2688,")
              .find("50 layers, and the hybrid pattern has 52 letters") != std::string::npos);
    CHECK(error_with("\"groups\": 8", "\"groups\": 6").find("64 Mamba heads are not divisible by the 6 groups") !=
          std::string::npos);
    CHECK(error_with("\"hybrid_pattern\": \"MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME\",", "")
              .find("needs \"hybrid_pattern\"") != std::string::npos);
    CHECK(error_with("\"expert_ffn\": 1856,", "\"expert_ffn\": 1856, \"layer_step\": 2,")
              .find("a hybrid pattern places the expert layers itself") != std::string::npos);
    CHECK(error_with("\"norm\": \"rmsnorm\",", "\"norm\": \"rmsnorm\", \"mtp_shared_weights\": true,")
              .find("shares one MTP module's weights between depths: needs mtp_layers >= 2") != std::string::npos);
  }
}

}  // namespace hybrid_workload_test
