// Reading a whole input file as text.
#include "stepcast/core/input_file.hpp"

#include <fstream>
#include <sstream>

#include "stepcast/core/errors.hpp"

namespace stepcast {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), {}, "cannot open file (does it exist?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace stepcast
