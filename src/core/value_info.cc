#include "edgemm/value_info.h"

namespace edgemm {

std::string dims_to_string(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i].is_static() ? std::to_string(dims[i].value) : (dims[i].symbol.empty() ? "?" : dims[i].symbol);
  }
  return s + "]";
}

}  // namespace edgemm
