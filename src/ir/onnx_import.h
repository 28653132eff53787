#pragma once
/// \file onnx_import.h
/// ONNX → edgemm IR through libonnx's protobuf classes (onnx.proto, ONNX IR spec
/// "External Tensor Data"), with the ONNX checker and shape inference.

#include <map>
#include <string>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace onnx {
class TensorProto;
}

namespace edgemm::ir {

/// Import options: the public OnnxLoadOptions (edgemm/onnx_model.h).
using ImportOptions = OnnxLoadOptions;

/// Reads and converts a model file. External data is resolved relative to the model's folder;
/// a `location` that is absolute or climbs out of that folder (`..`) is refused.
/// Errors: kInvalidArgument for "-" (standard input: a model is read by path, with its external
/// data beside it), kIo (unreadable model or data file), kInvalidModel (not a ModelProto, checker
/// failure, data ranges outside the file, inconsistent tensors), kUnsupported (opset outside
/// 7–21 for the default domain (18–21 through libonnx_view.h), string tensors).
Expected<Model> import_onnx_file(const std::string& path, const ImportOptions& options = {});

/// import_onnx_file for sizes and shapes only (memory estimates): the same checks and shape
/// inference, but the main graph's initializers are tensors of their dtype and shape with null
/// data, so none of the weights is copied. Never run or pass on what it returns. Errors as
/// import_onnx_file.
Expected<Model> import_onnx_file_shapes_only(const std::string& path, const ImportOptions& options = {});

/// Same, from bytes in memory (no external data allowed; `base_dir` "" means none).
Expected<Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                                  const ImportOptions& options = {});

/// Converts one TensorProto (raw_data or typed fields; external data relative to base_dir).
/// Errors: kInvalidModel when the data size disagrees with dims and dtype.
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir);

/// Reads a serialized TensorProto file (the ONNX backend test data `input_0.pb` format).
Expected<Tensor> read_tensor_proto_file(const std::string& path);

}  // namespace edgemm::ir
