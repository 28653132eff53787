#pragma once
/// \file value_info.h
/// Declared metadata of a graph input or output (ONNX ValueInfoProto: name, element type and
/// shape with fixed or symbolic axes), as Inferencer::inputs()/outputs() report it.

#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"

namespace edgemm {

/// One axis of a declared shape: a fixed extent (value >= 0), or symbolic (value -1, with the
/// ONNX dim_param in `symbol`, possibly empty when the model leaves the axis unnamed).
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool is_static() const { return value >= 0; }
};

/// Declared metadata of a graph input or output.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<Dim> shape;  ///< empty with `rank_known == false` when the model omits it
  bool rank_known = false;
};

/// "[1,3,N,640]": static dims as numbers, symbolic ones by name ("?" when unnamed), for messages.
std::string dims_to_string(const std::vector<Dim>& dims);

}  // namespace edgemm
