// Output files written whole or not at all: a command's files staged together (staged_files.cpp).
#include "stepcast/core/output_file.hpp"

#include "stepcast/core/staged_files.hpp"

namespace stepcast {

void write_files_atomically(const std::vector<OutputContent>& files) {
  std::vector<std::filesystem::path> targets;
  for (const OutputContent& file : files) targets.push_back(file.path);
  StagedFiles staged(targets);
  for (std::size_t i = 0; i < files.size(); ++i) staged.write(i, files[i].content);
  staged.commit();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_files_atomically({{path, std::string(content)}});
}

}  // namespace stepcast
