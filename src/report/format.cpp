// Report formats by name, and the one dispatch from a format to its writer.
#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/writers.hpp"

namespace stepcast::report {

Format parse_format(std::string_view name, std::string_view option) {
  if (name == "text") return Format::kText;
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  if (name == "html") return Format::kHtml;
  throw InputError(fmt::format("{}: unknown format \"{}\" (accepted: text, markdown, csv, json, html)", option, name));
}

std::string_view to_string(Format format) {
  switch (format) {
    case Format::kText:
      return "text";
    case Format::kMarkdown:
      return "markdown";
    case Format::kCsv:
      return "csv";
    case Format::kJson:
      return "json";
    case Format::kHtml:
      return "html";
  }
  STEPCAST_UNREACHABLE("every format is handled");
}

std::string render(const Report& report, Format format) {
  switch (format) {
    case Format::kText:
      return render_text(report);
    case Format::kMarkdown:
      return render_markdown(report);
    case Format::kCsv:
      return render_csv(report);
    case Format::kJson:
      return render_json(report);
    case Format::kHtml:
      return render_html(report);
  }
  STEPCAST_UNREACHABLE("every format is handled");
}

}  // namespace stepcast::report
