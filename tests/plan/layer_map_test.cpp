// The layer map against Megatron-Core's placement, derived by hand from get_num_layers_to_build
// (transformer_block.py: layers per rank, divided into vp chunks; the first chunk of the model one
// fewer with the embedding counted, the last one fewer with the loss) and from the layouts
// Megatron-Bridge's DeepSeek-V3 recipe writes (set_deepseek_v3_pipeline_model_parallel_layout).
// Model order: chunk 0 of every stage, then chunk 1 of every stage (Megatron-Core's docstring:
// 8 layers, pp=2, vp=2 put layers [0, 1] and [4, 5] on stage 0).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/plan/layer_map.hpp"
#include "stepcast/plan/plan.hpp"

namespace layer_map_test {

using namespace stepcast;

namespace {

plan::LayerMap map_of(const std::string& text, int layers, int mtp = 0) {
  return plan::layer_map(plan::parse_plan(text), layers, mtp);
}

plan::ChunkContent chunk(int decoders, bool embedding = false, bool loss = false, int mtp = 0) {
  plan::ChunkContent c;
  c.decoders = decoders;
  c.embedding = embedding;
  c.loss = loss;
  c.mtp = mtp;
  return c;
}

}  // namespace

TEST_SUITE("plan.layer_map") {
  TEST_CASE("Megatron-Core's docstring: 8 layers, pp=2, vp=2 put [0, 1] and [4, 5] on stage 0") {
    const auto m = map_of("pp=2,vp=2,schedule=interleaved", 8);
    CHECK(m.at(0, 0) == chunk(2, true));
    CHECK(m.at(1, 1) == chunk(2, false, true));
    CHECK(m.first_decoder(0, 1) == 4);
    CHECK(m.first_decoder(1, 0) == 2);
    CHECK(m.first_decoder(1, 1) == 6);
  }

  TEST_CASE("Llama 3.1 405B, 126 layers, pp=8 vp=8, embedding and loss as layers: 128 = 8 x 8 x 2") {
    // 128 / 8 = 16 per stage, 2 per chunk; the model's first chunk E + 1, its last 1 + L.
    const auto m = map_of("pp=8,vp=8,schedule=interleaved,pp-embedding-loss-layers=on", 126);
    CHECK(m.at(0, 0) == chunk(1, true));
    CHECK(m.at(0, 1) == chunk(2));
    CHECK(m.at(7, 7) == chunk(1, false, true));
    CHECK(m.at(7, 6) == chunk(2));
    CHECK(m.stage_decoders(0) == 15);
    CHECK(m.stage_decoders(3) == 16);
    CHECK(m.stage_decoders(7) == 15);
    // Stage 0's second chunk follows the eight first chunks: 1 + 7 x 2 = 15 layers before it.
    CHECK(m.first_decoder(0, 1) == 15);
    CHECK(plan::stage_layers(plan::parse_plan("pp=8,vp=8,schedule=interleaved,pp-embedding-loss-layers=on"), 126) ==
          std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15});
  }

  TEST_CASE("Llama 3.1 405B at pp=16 vp=8: one layer a chunk, the first holds only the embedding") {
    // 128 / 16 = 8 per stage, 1 per chunk: (0, 0) builds 1 - 1 = 0 layers, as does (15, 7).
    const auto m = map_of("pp=16,vp=8,schedule=interleaved,pp-embedding-loss-layers=on", 126);
    CHECK(m.at(0, 0) == chunk(0, true));
    CHECK(m.at(15, 7) == chunk(0, false, true));
    CHECK(m.at(8, 3) == chunk(1));
    CHECK(m.stage_decoders(0) == 7);
    CHECK(m.stage_decoders(15) == 7);
    CHECK(m.stage_decoders(5) == 8);
  }

  TEST_CASE("DeepSeek-V3, 61 layers and an MTP module, at pp=16 with Megatron-Bridge's layout") {
    // (16, 1): [E + 4], 14 x [4], [1 + mtp + loss]: 4 + 56 + 1 = 61.
    const auto m = map_of("pp=16,pp-layout=Et*4|(t*4|)*14tmL", 61, 1);
    CHECK(m.at(0, 0) == chunk(4, true));
    CHECK(m.at(7, 0) == chunk(4));
    CHECK(m.at(15, 0) == chunk(1, false, true, 1));
    CHECK(m.first_decoder(15, 0) == 60);
  }

  TEST_CASE("DeepSeek-V3 at pp=8 vp=4: 32 virtual stages, E + 1, thirty of 2, MTP and loss alone") {
    // Megatron-Bridge's H100 preset (DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1): pp_layout Et|(tt|)*30mL.
    // Virtual stage i is chunk i / 8 of stage i % 8: stage 0 holds virtual stages 0, 8, 16, 24
    // (1 + 2 + 2 + 2 = 7 layers), stage 7 holds 7, 15, 23, 31 (2 + 2 + 2 + 0, and the MTP module).
    const auto m = map_of("pp=8,vp=4,schedule=interleaved,pp-layout=Et|(tt|)*30mL", 61, 1);
    CHECK(m.stage_decoders(0) == 7);
    CHECK(m.stage_decoders(7) == 6);
    CHECK(m.at(7, 3) == chunk(0, false, true, 1));
    CHECK(m.at(0, 1) == chunk(2));
    // Virtual stage 8 (stage 0, chunk 1) follows 1 + 7 x 2 = 15 layers.
    CHECK(m.first_decoder(0, 1) == 15);
  }

  TEST_CASE("Qwen3-235B, 94 layers, pp=8 vp=4 with the embedding and loss as layers: 96 = 8 x 4 x 3") {
    const auto m = map_of("pp=8,vp=4,schedule=interleaved,pp-embedding-loss-layers=on", 94);
    CHECK(m.at(0, 0) == chunk(2, true));
    CHECK(m.at(7, 3) == chunk(2, false, true));
    CHECK(m.at(4, 2) == chunk(3));
    CHECK(m.stage_decoders(0) == 11);
    CHECK(m.stage_decoders(1) == 12);
  }

  TEST_CASE("first and last stage counts with vp: each stage's count over vp chunks") {
    // 32 layers, pp=4, vp=2, first 6, last 6: the middle two hold 10 each, 5 a chunk.
    const auto m = map_of("pp=4,vp=2,schedule=interleaved,pp-first-layers=6,pp-last-layers=6", 32);
    CHECK(m.at(0, 1) == chunk(3));
    CHECK(m.at(1, 0) == chunk(5));
    CHECK(m.at(3, 1) == chunk(3, false, true));
  }

  TEST_CASE("Megatron-Core's own layout example parses as it says: Ettt|(tt|)*29,m|L") {
    // parse_str_to_list's docstring: [[E, t, t, t]] + [[t, t]] * 29 + [[m], [L]] (commas cosmetic).
    std::string why;
    const auto stages = plan::parse_pp_layout("Ettt|(tt|)*29,m|L", why);
    REQUIRE(stages.has_value());
    REQUIRE(stages->size() == 32);
    CHECK(stages->front() == chunk(3, true));
    CHECK((*stages)[29] == chunk(2));
    CHECK((*stages)[30] == chunk(0, false, false, 1));
    CHECK(stages->back() == chunk(0, false, true));
  }

  TEST_CASE("layouts that are not one say why") {
    std::string why;
    CHECK_FALSE(plan::parse_pp_layout("Et*4|(t*4", why));
    CHECK(why == "a '(' is not closed");
    CHECK_FALSE(plan::parse_pp_layout("Et|tt)L", why));
    CHECK(why == "the ')' at position 6 closes no '('");
    CHECK_FALSE(plan::parse_pp_layout("Ex|L", why));
    CHECK(why.starts_with("'x' at position 2 is not a layer"));
    CHECK_FALSE(plan::parse_pp_layout("Et*0|L", why));
    CHECK(why == "'*' at position 3 needs a whole number >= 1 after it");
    CHECK_FALSE(plan::parse_pp_layout("EtE|tL", why));
    CHECK(why == "it names the embedding (E) 2 times and the loss (L) 1 times; each must appear once");
  }

  TEST_CASE("--explain's rows: a column per chunk, alike stages in one row") {
    // (10 + 2) / 3 = 4 per stage, 2 per chunk; the model's first chunk E + 1, its last 1 + L.
    const auto rows = plan::layer_map_rows(map_of("pp=3,vp=2,schedule=interleaved,pp-embedding-loss-layers=on", 10));
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].stages == "stage 0");
    CHECK(rows[0].chunks == "E+1 | 2");
    CHECK(rows[0].layers == 3);
    CHECK(rows[1].chunks == "2 | 2");
    CHECK(rows[2].chunks == "2 | 1+L");
    const auto even = plan::layer_map_rows(map_of("pp=4", 32));
    REQUIRE(even.size() == 3);
    CHECK(even[1].stages == "stages 1-2");
    CHECK(even[1].chunks == "8");
  }
}

}  // namespace layer_map_test
