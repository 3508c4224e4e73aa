// A Hugging Face config names its workload as the model names itself (_name_or_path, else
// model_type), never by the folder it sits in; its max_position_embeddings is the model's longest
// context, not a training length. The configs are the models' own files from the Hub.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/workload/workload.hpp"

namespace workload_naming_test {

using namespace stepcast;
using namespace stepcast::workload;

namespace {
const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

// A config copied into a folder named "in", as users keep them, with and without its hub id.
std::filesystem::path copy_into_in(const std::filesystem::path& from, const std::string& file_name, bool keep_hub_id) {
  std::ifstream in(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!keep_hub_id) {
    const std::size_t at = text.find("\"_name_or_path\"");
    if (at != std::string::npos) text.replace(at, std::string("\"_name_or_path\"").size(), "\"_comment_\"");
  }
  const auto dir = std::filesystem::temp_directory_path() / "stepcast_workload_naming" / "in";
  std::filesystem::create_directories(dir);
  const auto path = dir / file_name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_SUITE("workload.naming") {
  TEST_CASE("_name_or_path names the workload, wherever the file sits") {
    const auto w =
        load_workload(copy_into_in(kSource / "tests/workload/data/llama-2-7b/config.json", "config.json", true));
    CHECK(w.name == "meta-llama/Llama-2-7b-hf");
  }

  TEST_CASE("without _name_or_path, model_type names it, never the folder \"in\"") {
    const auto w =
        load_workload(copy_into_in(kSource / "tests/workload/data/llama-2-7b/config.json", "config.json", false));
    CHECK(w.name == "llama");
    // Pythia's config (EleutherAI/pythia-160m) has no _name_or_path: GPT-NeoX is its architecture.
    CHECK(load_workload(kSource / "tests/workload/data/pythia-160m/config.json").name == "gpt_neox");
  }

  TEST_CASE("a config states no training length, only its longest context, a workload states its seq_len") {
    // Llama-2-7b-hf's config: "max_position_embeddings": 4096, the context it supports.
    const auto hf = load_workload(kSource / "tests/workload/data/llama-2-7b/config.json");
    CHECK(hf.shape->seq_len == 0);
    CHECK(hf.max_positions == 4096);
    CHECK(hf.seq_len_origin.empty());
    const auto own = load_workload(kSource / "workloads/llama2-7b.json");
    CHECK(own.shape->seq_len == 4096);
    CHECK(own.seq_len_origin == "\"seq_len\" of workload llama2-7b");
  }
}

}  // namespace workload_naming_test
