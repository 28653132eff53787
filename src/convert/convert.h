#pragma once
/// \file convert.h
/// `edgemm convert`: rewrites an ONNX model so that stricter runtimes (OpenCV DNN, vendor
/// converters) accept it, using standard ONNX ops only (the com.edgemm fusions of
/// passes::optimize are never used here). Three independent steps, in this order:
/// 1. fixed input shapes (ImportOptions-style pinning, then constant folding and ONNX shape
///    inference repeated until nothing changes, so Shape → Gather → Concat → Reshape chains and
///    bounds computed from shapes become constants);
/// 2. simplification (passes::simplify plus the runtime-neutral rewrites of simplify_extra.h,
///    repeated with shape inference until nothing changes);
/// 3. opset conversion: up through libonnx's version converter, down through edgemm's own
///    per-op rewrites (opset_downgrade.h).
/// The result passes onnx::checker and strict ONNX shape inference at its opset (check_strict).
/// docs/convert.md describes the options, rewrites and measured results.

#include <map>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/tools/convert.h"
#include "ir/graph.h"

namespace edgemm::convert {

/// validate_fixed_shapes of edgemm/tools/convert.h on a graph: the same checks and errors.
Status validate_fixed_shapes(const ir::Graph& graph, const std::map<std::string, Shape>& fixed,
                             const std::string& option = "--fix-shape");

/// convert_model of edgemm/tools/convert.h on `model` (imported by ir::import_onnx_file): the
/// same steps and errors, the report filled as it goes.
Status convert_model(ir::Model& model, const ConvertOptions& options, ConvertReport& report);

/// Op histogram of a graph ("Conv": 62, ...); nodes of other domains as "domain:Op".
std::map<std::string, int> op_histogram(const ir::Graph& graph);

}  // namespace edgemm::convert
