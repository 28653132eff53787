#pragma once
/// \file layout.h
/// The blocked activation layout the layout pass (src/passes/layout.cc) gives convolution
/// chains: oneDNN's nChw8c ("Understanding Memory Formats", oneDNN v2.6), stored as a plain
/// row-major tensor of physical shape [N, C/8, H, W, 8] so that buffers, planning and
/// elementwise broadcasting need no layout awareness. Only channel counts that are a multiple
/// of kChannelBlock are blocked, so there is never padding.

#include <cstdint>

#include "edgemm/tensor.h"

namespace edgemm::kernels {

/// Channels per block (8 floats: one AVX2 register; oneDNN's choice for avx2 convolutions).
inline constexpr int64_t kChannelBlock = 8;

/// Physical [N, C/8, H, W, 8] of a logical [N, C, H, W] (C a multiple of kChannelBlock).
Shape blocked_shape(const Shape& logical);

/// Logical [N, C, H, W] of a physical [N, C/8, H, W, 8].
Shape logical_shape(const Shape& blocked);

/// Copies logical NCHW `src` [N, C, H, W] into blocked `dst` [N, C/8, H, W, 8] (float32).
void to_blocked(const float* src, float* dst, const Shape& logical, int threads);

/// Copies blocked `src` [N, C/8, H, W, 8] into logical NCHW `dst` [N, C, H, W] (float32).
void from_blocked(const float* src, float* dst, const Shape& logical, int threads);

}  // namespace edgemm::kernels
