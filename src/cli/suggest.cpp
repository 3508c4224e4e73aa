#include "suggest.hpp"

#include <fmt/format.h>

namespace stepcast::cli {

namespace {

std::string with_suggestion(const std::string& what, std::string_view word, const std::vector<std::string>& known,
                            const std::string& where_listed) {
  const auto near = closest(word, known);
  return near ? fmt::format("{}; did you mean \"{}\"? ({})", what, *near, where_listed)
              : fmt::format("{} ({})", what, where_listed);
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

}  // namespace

std::string unexpected_argument_message(const CLI::App& app, int argc, const char* const* argv,
                                        const std::string& fallback) {
  const auto chosen = app.get_subcommands();
  if (chosen.empty()) {
    if (argc < 2 || argv[1][0] == '-') return fallback;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    return with_suggestion(fmt::format("unknown subcommand \"{}\"", argv[1]), argv[1], names,
                           "stepcast --help lists them");
  }
  const CLI::App& sub = *chosen.front();
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (sub.get_option_no_throw(name) != nullptr || app.get_option_no_throw(name) != nullptr) continue;
    return with_suggestion(fmt::format("{}: unknown option \"{}\"", sub.get_name(), name), name, option_names(sub),
                           fmt::format("stepcast {} --help lists them", sub.get_name()));
  }
  return fallback;
}

}  // namespace stepcast::cli
