// Finding the files users name: shipped topologies/ and workloads/ from any working directory, by
// path or by name, a model folder holding config.json, and a Hugging Face model id in the local
// Hugging Face cache.
#pragma once

#include <filesystem>
#include <string>

namespace stepcast::report {

/// `path` as given when it exists; otherwise, for a relative path, the same path under the
/// stepcast source tree this executable was built from (so `--topology topologies/p4d-24xlarge.json`
/// works from any folder). Falls back to `path` unchanged, whose loader then reports it missing.
std::filesystem::path data_path(const std::string& path);

/// The workload file `--workload NAME` means: a file (data_path), a folder's config.json, a
/// shipped workload by name ("llama3-8b"), or a Hugging Face model id ("mistralai/Mistral-7B-v0.1")
/// whose config.json the local Hugging Face cache holds ($HF_HUB_CACHE, $HF_HOME/hub or
/// ~/.cache/huggingface/hub). Anything else is an InputError that says where it looked, the
/// nearest shipped name, and how to download a config.
std::filesystem::path workload_path(const std::string& name);

/// The topology file `--topology NAME` means: a file (data_path) or a shipped topology by name
/// ("dgx-h100"); otherwise an InputError listing the shipped ones.
std::filesystem::path topology_path(const std::string& name);

}  // namespace stepcast::report
