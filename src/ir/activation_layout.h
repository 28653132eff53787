#pragma once
/// \file activation_layout.h
/// The physical layouts a float32 activation of logical shape [N, C, H, W] can be stored in, as
/// the layout pass (src/passes/layout.cc) writes them into the src_layout and dst_layout
/// attributes of com.edgemm convolution nodes, and the kernels (src/kernels/cpu/layout.h) read
/// them back. Layout names follow oneDNN's "Understanding Memory Formats" (v2.6).

#include <string>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::ir {

/// Physical layout of a float32 activation whose logical shape is [N, C, H, W] (the src_layout
/// and dst_layout attributes of FusedConv, FusedConvTranspose and Int8Conv): kNchw as is,
/// kNChw8c stored [N, C/8, H, W, 8], kNhwc stored [N, H, W, C] (the layout oneDNN 2.6's AVX-512
/// convolutions work in).
enum class ActivationLayout { kNchw, kNChw8c, kNhwc };

/// The attribute value naming `layout`: "NCHW", "nChw8c" or "NHWC".
const char* layout_name(ActivationLayout layout);

/// The layout named by string attribute `attr` of `node` ("NCHW" when absent). Errors:
/// kInvalidModel naming the attribute and the accepted values.
Expected<ActivationLayout> read_layout(const Node& node, const std::string& attr);

}  // namespace edgemm::ir
