#pragma once
/// Helpers shared by the MatMulNBits kernel tests (float32 and int8-activation paths).

#include <vector>

#include "kernels/cpu/matmul_nbits.h"

namespace edgemm::nbits_test {

/// Where a test weight's zero points come from: none (the default 2^(bits - 1)), packed uint8
/// codes, or float32.
enum class ZpKind { kNone, kPacked, kFloat };

/// The MatMulNBits variants this CPU can run, the reference first.
inline std::vector<kernels::MatMulNBitsVariant> available_variants() {
  using kernels::MatMulNBitsVariant;
  std::vector<MatMulNBitsVariant> v;
  for (MatMulNBitsVariant x : {MatMulNBitsVariant::kReference, MatMulNBitsVariant::kPortable, MatMulNBitsVariant::kAvx2,
                               MatMulNBitsVariant::kAvx512, MatMulNBitsVariant::kNeon}) {
    if (kernels::matmul_nbits_available(x)) v.push_back(x);
  }
  return v;
}

}  // namespace edgemm::nbits_test
