#include "bench/format.h"

#include <cstdio>

namespace edgemm::bench {

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

}  // namespace edgemm::bench
