#pragma once
/// \file files.h
/// Reading the small text files of model packages (config.json, preprocessor_config.json, ...),
/// shared by the pipelines.

#include <filesystem>
#include <string>

#include "edgemm/status.h"

namespace edgemm::pipelines {

/// The whole file as bytes. Errors: kIo naming the path ("no such file", "not a regular file",
/// or a read failure).
Expected<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace edgemm::pipelines
