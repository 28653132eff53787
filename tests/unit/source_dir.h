#pragma once
/// \file source_dir.h
/// Where the unit tests find the repository's files (fixtures, models, data).

namespace edgemm::testing {

/// The repository root: CMake's PROJECT_SOURCE_DIR, an absolute path. Compiled into
/// source_dir.cc alone, so that no other test file's compile command names the checkout and
/// ccache hits across clones (CI builds a fresh clone each time).
const char* source_dir();

}  // namespace edgemm::testing
