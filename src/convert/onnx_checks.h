#pragma once
/// \file onnx_checks.h
/// The libonnx steps of `edgemm convert`, each a round trip ir::Model → ModelProto → ir::Model
/// (ir/onnx_export.h, ir/onnx_import.h): shape inference after a rewrite, the strict final
/// check, and up-conversion with libonnx's version converter.

#include <cstdint>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::convert {

/// Drops the inferred value_infos of the main graph and runs the ONNX checker and ONNX shape
/// inference (onnx/shape_inference, with data propagation) again, so that shapes that became
/// static after folding or a rewrite are known to the next step. Graph outputs get the inferred
/// shape where the declared one had symbols. Errors: kInvalidModel when the checker or shape
/// inference rejects the model (the message says which), kUnsupported when it cannot be
/// exported (a non-standard node).
Status reinfer_shapes(ir::Model& model);

/// The final check of a converted model at its own opset: onnx::checker::check_model and ONNX
/// shape inference with type checks and strict errors (ShapeInferenceOptions{check_type = true,
/// error_mode = 1}). Errors: kInvalidModel with the checker's or inference's message.
Status check_strict(const ir::Model& model);

/// Converts the default-domain opset up to `target` with libonnx's version converter
/// (onnx/version_converter/convert.h, ConvertVersion; the adapters of ONNX 1.12, e.g. Clip
/// 10→11 attributes to inputs, Split/Squeeze/Unsqueeze/ReduceSum 12→13 axes to inputs,
/// Softmax 12→13 coerced 2-D to one axis, which needs the input's shape). Raises the IR version
/// to the one the target opset came with (ONNX "Versioning": opset 9 IR 4, 10 IR 5, 11 IR 6,
/// 12–14 IR 7, 15–17 IR 8) when the model's is older. Errors: kUnsupported with the converter's
/// message (naming the adapter that failed, e.g. Softmax 12→13 on an input of unknown rank, as in
/// PP-OCRv4 rec without fixed shapes).
Status upgrade_opset(ir::Model& model, int64_t target);

/// The IR version that came with ai.onnx `opset` (onnx/helper.py VERSION_TABLE: 3 up to opset 8,
/// then 4, 5, 6 for 9–11, 7 for 12–14, 8 for 15–17).
int64_t ir_version_for_opset(int64_t opset);

}  // namespace edgemm::convert
