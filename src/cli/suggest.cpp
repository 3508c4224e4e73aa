#include "suggest.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace stepcast::cli {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment (Damerau-Levenshtein without repeated edits of one substring).
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t reach = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 3));
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d <= reach && d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

namespace {

std::string with_suggestion(const std::string& what, std::string_view word, const std::vector<std::string>& known,
                            const std::string& where_listed) {
  const auto near = closest(word, known);
  return near ? fmt::format("{}; did you mean \"{}\"? ({})", what, *near, where_listed) : fmt::format("{} ({})", what, where_listed);
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

}  // namespace

std::string unexpected_argument_message(const CLI::App& app, int argc, const char* const* argv, const std::string& fallback) {
  const auto chosen = app.get_subcommands();
  if (chosen.empty()) {
    if (argc < 2 || argv[1][0] == '-') return fallback;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    return with_suggestion(fmt::format("unknown subcommand \"{}\"", argv[1]), argv[1], names, "stepcast --help lists them");
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
