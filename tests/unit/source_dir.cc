#include "source_dir.h"

namespace edgemm::testing {

const char* source_dir() { return EDGEMM_SOURCE_DIR; }

}  // namespace edgemm::testing
