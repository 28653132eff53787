// GET /: the page of tools/cli/serve/web/index.html (docs/serve.md "The page"), built into the
// binary by tools/cli/CMakeLists.txt as kPageHtml (the generated serve_page_html.cc).
#include <cstddef>

#include "endpoints.h"

namespace edgemm::cli::serve {

extern const unsigned char kPageHtml[];
extern const std::size_t kPageHtmlSize;

void handle_page(const httplib::Request&, httplib::Response& res, ServerState&) {
  // The page talks only to this server: no script, style or image from anywhere else.
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
                 "connect-src 'self'");
  res.set_header("Cache-Control", "no-cache");
  res.set_content(reinterpret_cast<const char*>(kPageHtml), kPageHtmlSize, "text/html; charset=utf-8");
}

}  // namespace edgemm::cli::serve
