#pragma once
/// \file passes.h
/// Graph passes run at load, in the order optimize() lists. Passes that only use standard ONNX
/// ops (folding, BatchNormalization and affine folding into Conv, dead-node elimination) give a
/// graph any runtime can run; the fusion passes create kEdgemmDomain ops (see graph_view.h) that
/// only edgemm's kernels run. Every pass keeps the graph's outputs within float rounding of
/// the original (tests/unit/passes_*_test.cc compare both on seeded inputs).

#include <map>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tools/inspect.h"  // PassReport
#include "ir/activation_layout.h"
#include "ir/graph.h"

namespace edgemm::passes {

/// Turns each Conv or MatMul whose activation and weight come through QDQ pairs (QuantizeLinear →
/// DequantizeLinear on X, DequantizeLinear on a constant int8 W) into one com.edgemm Int8Conv or
/// Int8MatMul that runs the integer convolution or product (qdq_fusion.cc,
/// kernels/cpu/conv_int8.h, kernels/cpu/matmul_int8.h). Runs before fold_constants. Patterns:
/// "QDQ Conv→Int8Conv", "QDQ MatMul→Int8MatMul".
void fuse_qdq(ir::Model& model, PassReport& report);

/// Keeps activations in uint8 where int8 convolutions read them (int8_chaining.cc): an Int8Conv
/// (with NHWC output), elementwise op or float32 Concat whose output every reader (all Int8Convs, reading it
/// as X in NHWC) quantizes with the same x_scale and x_zero_point gets those as y_scale and
/// y_zero_point and writes the uint8 value itself. Runs after assign_chain_layouts. Patterns:
/// "Int8Conv→Int8Conv uint8", "ElementwiseChain→Int8Conv uint8", "Concat→Int8Conv uint8".
void chain_int8(ir::Model& model, PassReport& report);

/// Replaces every deterministic node whose inputs are all constant by its outputs (computed
/// with the CPU kernels), and Shape/Size nodes whose input has a fully static inferred shape.
/// Nodes whose kernel fails are left in place (the error surfaces when the model runs).
/// `keep_dequantize` leaves DequantizeLinear nodes alone, so that a QDQ model's weights stay int8.
void fold_constants(ir::Model& model, PassReport& report, bool keep_dequantize = false);

/// Removes nodes none of whose outputs reach a graph output, and unused initializers.
void eliminate_dead_nodes(ir::Graph& graph, PassReport& report);

/// Removes data movement that does nothing (transpose_reshape.cc): Transpose pairs composing
/// to the identity (removed) or not (merged), a Reshape of a Reshape/Flatten/Squeeze/Unsqueeze
/// (reads the first one's input), reshapes between equal static shapes, Identity and inference
/// Dropout. Values that are graph outputs keep their producer. Standard ONNX ops only.
/// Patterns: "Transpose pair", "Reshape pair", "Reshape to same shape", "Identity", "Dropout".
void simplify_transpose_reshape(ir::Model& model, PassReport& report);

/// Fuses layer normalization written as ReduceMean/Sub/Pow (or Mul)/ReduceMean/Add/Sqrt/Div
/// over the last axis, with an optional constant Mul (scale) and Add (bias), into one
/// kEdgemmDomain LayerNormalization (LayerNormalization-17 semantics, axis -1) node
/// (layer_norm_fusion.cc). Pattern: "LayerNormalization".
void fuse_layer_norm(ir::Model& model, PassReport& report);

/// Fuses GELU written with Erf, x · 0.5 · (1 + erf(x / √2)) in its exported forms (Div by √2 or
/// Mul by 1/√2, the 0.5 on either side), or with Tanh, x · 0.5 · (1 + tanh(√(2/π) · (x +
/// 0.044715 · x³))) (x³ as two Muls or Pow), into a kEdgemmDomain ElementwiseChain with one
/// "gelu" or "gelu_tanh" step (gelu_fusion.cc). Pattern: "Gelu".
void fuse_gelu(ir::Model& model, PassReport& report);

/// Rewrites MatMul(A, B constant [K, N]) + constant bias along the last axis as Gemm when A is
/// known to be 2-D, else as kEdgemmDomain FusedMatMul(A, B, bias[N]) (matmul_add_fusion.cc).
/// Patterns: "MatMul+Add→Gemm", "MatMul+Add→FusedMatMul".
void fuse_matmul_add(ir::Model& model, PassReport& report);

/// Fuses softmax attention, MatMul(Q, Kt) → [Mul or Div by a scalar constant] → [Add(mask)] →
/// Softmax(last axis) → MatMul(·, V), into one kEdgemmDomain Attention(Q, Kt, V, mask) node
/// (kernels/cpu/attention.h; attention_fusion.cc) when Q, Kt and V have the same known rank
/// (at least 3) and every intermediate has that chain as its only reader. Pattern: "Attention".
void fuse_attention(ir::Model& model, PassReport& report);

/// Folds what follows a Conv/ConvTranspose with constant float32 weights into its weights and
/// bias when the Conv's output has no other reader: inference BatchNormalization with constant
/// parameters, and Mul/Div/Add/Sub by a constant that is a scalar or per output channel.
/// Repeats until nothing changes (Conv → BN → Mul → Add folds completely). Standard ops only.
void fold_conv_affine(ir::Model& model, PassReport& report);

/// Replaces activations written as several ops (HardSwish as x·Clip(x+3, 0, 6)/6 or
/// x·HardSigmoid(x), Swish as x·Sigmoid(β·x)) by one-step com.edgemm ElementwiseChain nodes.
void recognize_activations(ir::Model& model, PassReport& report);

/// Turns Conv/ConvTranspose followed by single-use elementwise ops (Relu, Clip, Sigmoid, Tanh,
/// HardSigmoid, HardSwish, ElementwiseChain, and Add/Sub/Mul/Div by a scalar constant, a
/// per-channel tensor or a tensor of the output's shape that does not depend on the Conv) into
/// com.edgemm FusedConv / FusedConvTranspose with those ops as its epilogue; a com.edgemm
/// FusedMatMul likewise takes the unary ones (activations, scalar arithmetic).
void fuse_epilogues(ir::Model& model, PassReport& report);

/// Replaces each maximal chain of float32 elementwise nodes (Relu, Clip with constant bounds,
/// Sigmoid, HardSigmoid, HardSwish, Tanh, Exp, Sqrt, Abs, Neg; Add, Sub, Mul, Div, Max, Min, Pow
/// with one input on the chain; com.edgemm ElementwiseChain) by one kEdgemmDomain
/// ElementwiseChain node named and writing like the chain's last node. Intermediate values must
/// have a single use and not be graph outputs; after the first node, the other operand of a
/// binary node must broadcast into the chain value (shapes known from value_infos). Scalar
/// constant operands become unary steps. Counts "elementwise chain" (chains) and
/// "elementwise chain (nodes fused)" in report.patterns. Single nodes are left alone.
void fuse_elementwise_chains(ir::Model& model, PassReport& report);

/// Gives convolution chains `layout` (kNChw8c or kNhwc, kernels/cpu/layout.h: the one oneDNN
/// 2.6's convolutions work in on the CPU, so that they reorder nothing) with a com.edgemm Reorder
/// (nChw8c) or Transpose (NHWC) node only where a value leaves the chain (see layout.cc). Runs
/// last: it changes value shapes that the other passes match on.
void assign_chain_layouts(ir::Model& model, PassReport& report, ir::ActivationLayout layout);

/// Choices the runtime makes for the passes.
struct PassOptions {
  /// The layout convolution chains get: kNChw8c (blocked; AVX2, aarch64) or kNhwc (channels
  /// last; AVX-512), or kNchw for none. Chains are worth it when oneDNN runs the convolutions
  /// (the reference loops would convert at every Conv).
  ir::ActivationLayout chain_layout = ir::ActivationLayout::kNChw8c;
  /// Whether fuse_attention runs: where com.edgemm Attention computes on matmul panels
  /// (kernels::matmul_panels_available(); elsewhere the separate MatMuls run on oneDNN or XNNPACK).
  bool fuse_attention = false;
};

/// The options this process's kernels want: no chain layouts when oneDNN is off
/// (kernels::onednn::enabled()), NHWC where its convolutions work in it
/// (kernels::onednn::prefers_nhwc()), else nChw8c; attention fused where the panels run.
PassOptions kernel_pass_options();

/// The passes whose result any ONNX runtime can run (standard ops only): fold_constants (keeping
/// DequantizeLinear: QDQ models stay quantized), eliminate_dead_nodes, simplify_transpose_reshape,
/// fold_conv_affine. Used before a graph is
/// handed to another backend and by `edgemm convert --simplify`.
void simplify(ir::Model& model, PassReport& report);

/// Runs all load-time passes in order.
void optimize(ir::Model& model, PassReport& report, const PassOptions& options = {});

}  // namespace edgemm::passes
