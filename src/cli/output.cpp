// Command output to stdout or to atomically written files, and the output paths' checks.
#include "output.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "ranks.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/report/data_path.hpp"

namespace stepcast::cli {
namespace {

/// The options that name a file the command writes, by their long names.
constexpr std::string_view kOutputOptions[] = {"--output", "--trace", "--plot"};

/// The options that name a folder the command writes its files into (made when missing).
constexpr std::string_view kFolderOptions[] = {"--chakra"};

/// "-" as a path: standard output.
constexpr std::string_view kStdout = "-";

bool is_one_of(const CLI::Option& option, const auto& names) {
  for (const std::string_view name : names) {
    if (option.check_lname(std::string(name.substr(2)))) return true;
  }
  return false;
}

/// An option's name as a user types it: its short name ("-o"), else its long one.
std::string option_name(const CLI::Option& option) {
  const auto& shorts = option.get_snames();
  if (!shorts.empty()) return "-" + shorts.front();
  const auto& longs = option.get_lnames();
  return longs.empty() ? option.get_name() : "--" + longs.front();
}

}  // namespace

void emit(std::string_view text, const std::string& path, const std::vector<OutputContent>& files,
          const std::function<void(const std::vector<OutputContent>&)>& write_with) {
  if (!ranks::is_root()) return;  // under MPI, rank 0 alone writes what the command made
  const bool to_stdout = path.empty() || path == kStdout;
  std::vector<OutputContent> all = files;
  if (!to_stdout) all.push_back({path, std::string(text)});
  if (write_with) {
    write_with(all);
  } else if (!all.empty()) {
    write_files_atomically(all);
  }
  if (to_stdout) {
    fmt::print("{}", text);
    std::fflush(stdout);
  }
}

void finish(const report::CommandOutput& output, const std::string& path) {
  if (!output.refusal) {
    emit(output.text, path, output.files, output.write_with);
    return;
  }
  // A refused plan's report still says why, on stdout; files exist only for runs that exit 0.
  emit(output.text, {});
  const bool to_files = !output.files.empty() || (!path.empty() && path != kStdout);
  if (!to_files) throw *output.refusal;
  throw InfeasibleError(fmt::format("{} (no output file was written)", output.refusal->what()));
}

void check_outputs(const CLI::App& command) {
  struct Named {
    std::string option;
    std::string path;
    bool required = false;  ///< a file the command exists to write (calibrate's -o), never stdout
  };
  std::vector<Named> outputs;
  std::vector<Named> inputs;
  for (const CLI::Option* option : command.get_options()) {
    const bool output = is_one_of(*option, kOutputOptions);
    for (const std::string& value : option->results()) {
      (output ? outputs : inputs).push_back({option_name(*option), value, option->get_required()});
    }
  }
  for (const CLI::Option* option : command.get_options()) {
    if (!is_one_of(*option, kFolderOptions)) continue;
    for (const std::string& value : option->results()) {
      // Refused before the work rather than when the files are written after it.
      std::error_code ec;
      const auto status = std::filesystem::status(value, ec);
      if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
        throw InputError(value, {},
                         fmt::format("{} names the folder its files go into (made when missing), and this is not a "
                                     "folder: give a folder",
                                     option_name(*option)));
      }
    }
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Named& out = outputs[i];
    if (out.path == kStdout) {
      if (out.option != "-o" || out.required) {
        throw InputError(out.option, {},
                         out.required ? "names the file this command writes; \"-\" (standard output) carries its report"
                                      : "\"-\" (standard output) is for -o only, which carries the report");
      }
      continue;
    }
    check_output_path(out.path, out.option);
    for (std::size_t j = 0; j < i; ++j) {
      if (outputs[j].path != kStdout && same_file(out.path, outputs[j].path)) {
        throw InputError(
            out.path, {},
            fmt::format("{} and {} name the same file: each output needs its own", outputs[j].option, out.option));
      }
    }
    for (const Named& in : inputs) {
      std::error_code ec;
      const std::filesystem::path candidate = report::data_path(in.path);
      if (!std::filesystem::is_regular_file(candidate, ec)) continue;
      if (same_file(out.path, candidate)) {
        throw InputError(out.path, {},
                         fmt::format("{} names the input file of {}: writing it would replace the input; give "
                                     "another output file",
                                     out.option, in.option));
      }
    }
  }
}

}  // namespace stepcast::cli
