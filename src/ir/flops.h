#pragma once
/// \file flops.h
/// FLOPs of nodes from their shapes: 2 × multiply-accumulates of Conv, ConvTranspose, MatMul
/// and Gemm and their integer / quantized forms (the convention of most papers and profilers,
/// counting integer operations too); other ops count one FLOP per
/// element of their first output. One rule, node_flops(), serves both the static estimate
/// from inferred shapes (estimate_flops, `edgemm inspect`) and the runtime profiler (actual
/// shapes, `edgemm profile`).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edgemm/model_estimates.h"
#include "ir/graph.h"

namespace edgemm::ir {

/// Shapes of a node's inputs or outputs in the node's order; std::nullopt where a shape is
/// unknown (not inferred, symbolic, or an omitted optional input / unwanted output).
using NodeShapes = std::vector<std::optional<Shape>>;

/// FLOPs of one execution of `node` given its input and output shapes (index i of `inputs`
/// and `outputs` is node.inputs[i] and node.outputs[i]). Conv: 2 × |Y| × C/group × kernel
/// (W is M×C/group×k...); ConvTranspose: 2 × |X| × M/group × kernel (W is C×M/group×k...);
/// MatMul: 2 × |Y| × K (K = last axis of A); Gemm: 2 × |Y| × K (K from A's shape and transA);
/// ConvInteger and MatMulInteger as Conv and MatMul (integer operations counted alike);
/// QLinearConv (W is input 3) and QLinearMatMul as Conv and MatMul plus |Y| (requantization);
/// com.microsoft MatMulNBits: 2 × |Y| × K (K = last axis of A), plus |Y| with a bias;
/// every other op, or one of these with a needed shape unknown: |first output|.
/// Returns std::nullopt when the first output's shape is unknown. Subgraphs are not counted.
std::optional<int64_t> node_flops(const Node& node, const NodeShapes& inputs, const NodeShapes& outputs);

using FlopsEstimate = edgemm::FlopsEstimate;  ///< edgemm/model_estimates.h

/// Estimates FLOPs of the main graph (subgraphs are not counted) from static shapes:
/// initializers, graph inputs/outputs and ONNX-inferred value_infos (fix symbolic input dims
/// first).
FlopsEstimate estimate_flops(const Graph& graph);

}  // namespace edgemm::ir
