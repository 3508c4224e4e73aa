// Writers that render a Report as terminal text, Markdown, CSV (RFC 4180), JSON or a
// self-contained HTML page with inline SVG charts.
#pragma once

#include <string>
#include <string_view>

#include "stepcast/report/table.hpp"

namespace stepcast::report {

enum class Format { kText, kMarkdown, kCsv, kJson, kHtml };

/// "text", "markdown" (or "md"), "csv", "json", "html"; anything else throws InputError that
/// names `option` and lists the accepted names.
Format parse_format(std::string_view name, std::string_view option);
std::string_view to_string(Format format);

/// Title, notes, then each table with its caption, columns aligned (numbers to the right).
std::string render_text(const Report& report);
/// "# title", notes as a list, each table as a GitHub-flavoured pipe table.
std::string render_markdown(const Report& report);
/// The first table only (RFC 4180 has no comments and no notion of several tables): a header of
/// column keys, then one record per row; CRLF line ends; fields quoted when they hold a comma,
/// a quote, CR or LF, with quotes doubled.
std::string render_csv(const Report& report);
/// {"title", "notes", "tables": [{"name", "caption", "columns": [{"key","title","unit"}],
/// "rows": [{key: value}]}]}, two-space indented, keys of each row in column order.
std::string render_json(const Report& report);
/// A standalone HTML5 page: tables, then one inline <svg> per chart; no scripts or links.
std::string render_html(const Report& report);

/// Dispatches on `format`.
std::string render(const Report& report, Format format);

}  // namespace stepcast::report
