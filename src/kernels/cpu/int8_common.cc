/// \file int8_common.cc
/// Attributes and oneDNN-exactness checks shared by Int8Conv and Int8MatMul (int8_common.h).

#include "kernels/cpu/int8_common.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "kernels/cpu_features.h"

namespace edgemm::kernels::int8 {
namespace {

/// Largest weight magnitude whose uint8 × int8 pair sums fit vpmaddubsw's int16 (255·64·2).
constexpr int kMaxWeightWithoutVnni = 64;

Status invalid(const ir::Node& node, const std::string& message) {
  return ir::node_error(node, StatusCode::kInvalidModel, message);
}

}  // namespace

Expected<QdqScales> read_qdq_scales(const ir::Node& node, int64_t channels) {
  if (!node.has_attr("x_scale") || !node.has_attr("x_zero_point") || !node.has_attr("w_scales")) {
    return invalid(node, "attributes x_scale, x_zero_point and w_scales are required");
  }
  QdqScales s;
  EDGEMM_ASSIGN_OR_RETURN(s.x_scale, node.attr_float("x_scale", 0));
  EDGEMM_ASSIGN_OR_RETURN(const int64_t zp, node.attr_int("x_zero_point", 0));
  EDGEMM_ASSIGN_OR_RETURN(s.w_scales, node.attr_floats("w_scales"));
  if (!(s.x_scale > 0) || !std::isfinite(s.x_scale)) {
    return invalid(node, "attribute x_scale must be finite and > 0, got " + std::to_string(s.x_scale));
  }
  if (zp < 0 || zp > 255) return invalid(node, "attribute x_zero_point must be in [0, 255], got " + std::to_string(zp));
  s.x_zero_point = static_cast<int32_t>(zp);
  if (static_cast<int64_t>(s.w_scales.size()) != channels) {
    return invalid(node, "attribute w_scales has " + std::to_string(s.w_scales.size()) + " values for " +
                             std::to_string(channels) + " output channels");
  }
  for (float w : s.w_scales) {
    if (!(w > 0) || !std::isfinite(w))
      return invalid(node, "attribute w_scales has " + std::to_string(w) + " (must be > 0)");
  }
  return s;
}

bool fits_pair_sums(const Tensor& weights) {
  if (cpu_features().avx512_vnni) return true;
  const int8_t* v = weights.data<int8_t>();
  for (int64_t i = 0; i < weights.element_count(); ++i) {
    if (std::abs(static_cast<int>(v[i])) > kMaxWeightWithoutVnni) return false;
  }
  return true;
}

bool scales_representable(const QdqScales& scales, const Tensor& bias) {
  for (size_t c = 0; c < scales.w_scales.size(); ++c) {
    const float s = scales.x_scale * scales.w_scales[c];
    if (!std::isnormal(s)) return false;
    if (bias.defined() && !std::isfinite(bias.data<float>()[c] / s)) return false;
  }
  return true;
}

void warn_reference_path(const ir::Node& node) {
  std::cerr << "edgemm: warning: " << node.describe()
            << ": int8 weights beyond [-64, 64] would saturate oneDNN's u8s8 kernels on this CPU (no AVX-512 VNNI); "
               "running the slow reference path (edgemm quantize writes 7-bit weights unless --full-range)"
            << std::endl;
}

}  // namespace edgemm::kernels::int8
