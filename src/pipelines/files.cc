#include "pipelines/files.h"

#include <fstream>
#include <sstream>

namespace edgemm::pipelines {

Expected<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(StatusCode::kIo, "cannot read '" + path.string() + "': " +
                                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Status(StatusCode::kIo, "cannot read '" + path.string() + "'");
  return text.str();
}

}  // namespace edgemm::pipelines
