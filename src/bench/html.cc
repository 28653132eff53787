#include "bench/html.h"

#include "bench/svg.h"

namespace edgemm::bench {

namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #222;
       background: #fff; max-width: 940px; margin: 24px auto; padding: 0 16px; line-height: 1.45; font-size: 14px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 3px; margin-top: 28px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.muted { color: #666; }
ul { padding-left: 20px; }
pre, code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f5f5f5; border: 1px solid #e3e3e3; padding: 6px 8px; white-space: pre-wrap;
      overflow-wrap: anywhere; margin: 4px 0; }
code { overflow-wrap: anywhere; }
.error { color: #b00020; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 11px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: 2px 4px; text-align: right; }
th { background: #f0f0f0; vertical-align: bottom; }
td.name, th.name { text-align: left; }
td.name, tr.failed td { white-space: nowrap; }
tr.failed td { color: #b00020; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: baseline; }
figure { margin: 12px 0 20px; break-inside: avoid; page-break-inside: avoid; }
svg.chart { max-width: 100%; height: auto; display: block; }
@media print {
  body { max-width: none; margin: 0; font-size: 11px; }
  .wide { overflow: visible; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
}
)";

}  // namespace

std::string html_element(const std::string& tag, const std::string& text, const std::string& attrs) {
  return "<" + tag + (attrs.empty() ? "" : " " + attrs) + ">" + text + "</" + tag + ">";
}

std::string html_page(const std::string& title, const std::string& body) {
  const std::string escaped = svg::xml_escape(title);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += html_element("title", escaped) + "\n" + html_element("style", kStyle) + "\n</head>\n<body>\n";
  out += html_element("h1", escaped) + "\n" + body;
  return out + "</body>\n</html>\n";
}

std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<std::string>& row_classes, size_t name_column,
                       const std::function<std::string(const std::string&)>& decorate) {
  std::string out = "<div class=\"wide\"><table>\n<tr>";
  for (size_t i = 0; i < header.size(); ++i) {
    out += html_element("th", svg::xml_escape(header[i]), i == name_column ? "class=\"name\"" : "");
  }
  out += "</tr>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += row_classes[r].empty() ? "<tr>" : "<tr class=\"" + row_classes[r] + "\">";
    for (size_t i = 0; i < rows[r].size(); ++i) {
      const std::string cell = svg::xml_escape(rows[r][i]);
      const bool name = i == name_column;
      out += html_element("td", name && decorate ? decorate(rows[r][i]) + cell : cell, name ? "class=\"name\"" : "");
    }
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string html_figure(const std::string& svg_text) { return "<figure>\n" + svg_text + "</figure>\n"; }

}  // namespace edgemm::bench
