#pragma once
/// \file html.h
/// The scaffolding of edgemm's self-contained HTML reports (bench and profile): one page with
/// inline CSS and no script, elements, tables and figures. Text passed as `text` is inserted as
/// is (escape user strings with svg::xml_escape first); table cells are escaped here.

#include <functional>
#include <string>
#include <vector>

namespace edgemm::bench {

/// `<tag attrs>text</tag>`.
std::string html_element(const std::string& tag, const std::string& text, const std::string& attrs = "");

/// A whole page: doctype, UTF-8, the shared style sheet, `title` (escaped) as <title> and <h1>,
/// then `body` as is.
std::string html_page(const std::string& title, const std::string& body);

/// A table in a horizontally scrolling box. Cells are escaped; cells of column `name_column`
/// are left-aligned and prefixed with `decorate(cell)` (e.g. a colour swatch; may be empty).
/// `row_classes` has one CSS class per row ("" for none; "failed" colours the row red).
std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<std::string>& row_classes, size_t name_column,
                       const std::function<std::string(const std::string&)>& decorate);

/// A chart in a <figure> that does not break across printed pages.
std::string html_figure(const std::string& svg_text);

}  // namespace edgemm::bench
