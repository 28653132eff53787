#pragma once
/// \file layout.h
/// The activation layouts the layout pass (src/passes/layout.cc) gives convolution chains, from
/// oneDNN's "Understanding Memory Formats" (v2.6): blocked nChw8c, stored as a plain row-major
/// tensor of physical shape [N, C/8, H, W, 8], and channels-last NHWC, stored [N, H, W, C], so
/// that buffers, planning and elementwise broadcasting need no layout awareness. Only channel
/// counts that are a multiple of kChannelBlock are blocked, so there is never padding.

#include <cstdint>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/activation_layout.h"
#include "ir/graph.h"

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

/// The activation layouts of the IR (ir/activation_layout.h), as the kernels name them.
using ir::ActivationLayout;
using ir::layout_name;
using ir::read_layout;

/// Physical shape of logical [N, C, H, W] stored in `layout` (kNChw8c: C a multiple of 8).
Shape physical_shape(const Shape& logical, ActivationLayout layout);

/// Whether `physical` is the shape of a 4-D activation stored in `layout` (rank 4, or rank 5
/// with 8 last for kNChw8c).
bool is_physical(const Shape& physical, ActivationLayout layout);

/// Logical [N, C, H, W] of a shape for which is_physical(physical, layout) holds.
Shape logical_of(const Shape& physical, ActivationLayout layout);

/// Checks that input 0 of `node`, of shape `physical`, is stored as `layout` says. Errors:
/// kInvalidArgument naming the input, its shape and the shape `layout` expects.
Status check_src_layout(const ir::Node& node, const Shape& physical, ActivationLayout layout);

/// Checks that an output of logical shape `logical` can be stored in `layout` (other than NCHW:
/// 2-D, and for nChw8c a multiple of 8 channels). Errors: kInvalidArgument saying which.
Status check_dst_layout(const ir::Node& node, const Shape& logical, ActivationLayout layout);

/// Copies logical NCHW `src` [N, C, H, W] into `dst` stored in `layout` (float32).
void to_layout(const float* src, float* dst, const Shape& logical, ActivationLayout layout, int threads);

/// Copies `src` stored in `layout` into logical NCHW `dst` [N, C, H, W] (float32).
void from_layout(const float* src, float* dst, const Shape& logical, ActivationLayout layout, int threads);

}  // namespace edgemm::kernels
