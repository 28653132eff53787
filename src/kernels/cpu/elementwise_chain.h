#pragma once
/// \file elementwise_chain.h
/// The loop behind com.edgemm ElementwiseChain (elementwise_chain.cc), also used by kernels
/// that finish their output with an epilogue of steps (FusedConvTranspose).

#include <vector>

#include "edgemm/tensor.h"
#include "ir/elementwise_steps.h"
#include "kernels/cpu/int8_common.h"

namespace edgemm::kernels {

/// out = `steps` applied in order to inputs[0], each binary step reading inputs[step.operand]
/// numpy-broadcast to `out_shape` (which every input must broadcast to; the caller checks).
/// All inputs are float32; `out` holds out_shape's element count and may be inputs[0]'s own
/// data when that has the output's shape (each tile is read before it is written). Parallel
/// over tiles on `threads` OpenMP threads.
void run_elementwise_chain(const std::vector<ir::Step>& steps, const std::vector<const Tensor*>& inputs,
                           const Shape& out_shape, float* out, int threads);

/// Applies unary `steps` (none may be binary) in order to the `n` values at `v`, in place, in
/// L1-sized tiles: for kernels that finish each piece of their output while it is in cache.
void apply_unary_steps(const std::vector<ir::Step>& steps, float* v, int64_t n);

/// As run_elementwise_chain, with each finished value quantized into uint8 `out` (int8::quantize_u8, the
/// com.edgemm ElementwiseChain with y_scale / y_zero_point that passes::chain_int8 sets). `out`
/// must not alias an input.
void run_elementwise_chain(const std::vector<ir::Step>& steps, const std::vector<const Tensor*>& inputs,
                           const Shape& out_shape, const int8::OutputQuantization& quantized, uint8_t* out,
                           int threads);

}  // namespace edgemm::kernels
