#pragma once
/// \file onnx_export.h
/// edgemm IR → ONNX through libonnx's protobuf classes (onnx.proto ModelProto, ONNX IR spec
/// "External Tensor Data"): the inverse of onnx_import.h. A model that import_onnx_file read
/// exports to a file that imports back to an equal ir::Model (see the notes below for what the
/// IR does not keep).
///
/// What is written:
/// - ModelProto: ir_version (the model's, or 8 when it is 0), producer_name "edgemm", one
///   opset_import per standard domain of Model::opsets ("" = ai.onnx, "ai.onnx.ml",
///   "ai.onnx.preview.training") and for ONNX Runtime's "com.microsoft" (MatMulNBits, written
///   by edgemm quantize), and "com.edgemm" when the graph holds TokenPrune (written by
///   passes::prune_visual_tokens, run only by edgemm); other domains are left out.
/// - GraphProto (main graph and If/Loop/Scan bodies, recursively): nodes in IR order, inputs,
///   outputs and value_info with their element type and shape (dim_value for static extents,
///   dim_param for symbols, an empty dim for unknown ones, no shape when the rank is unknown,
///   no type when neither dtype nor rank is known), initializers in name order. Initializers
///   are not listed as graph inputs (the importer drops inputs that are initializers, so the IR
///   cannot tell which were), except for IR versions up to 3, where the spec requires it.
///   An empty graph name becomes "main" or "<node name>_<attribute>" (the checker needs one).
/// - Tensors (initializers, tensor attributes): dims, data_type and raw_data, little-endian.
///
/// Refused with kUnsupported (the message names the node): nodes outside those domains, such as
/// the com.edgemm ops of the fusion passes (passes.h), which exist only inside edgemm's runtime.

#include <cstdint>
#include <string>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::ir {

/// How export_onnx_file lays out the files: the public OnnxSaveOptions (edgemm/onnx_model.h).
using ExportOptions = OnnxSaveOptions;

/// Serializes `model` as an ONNX ModelProto with every tensor inline.
/// Errors: kUnsupported naming the node or value that cannot be written (non-standard domain,
/// a tensor of an unsupported dtype, IR version 1–2, a model over protobuf's 2 GiB limit: use
/// export_onnx_file with external data); kInternal for an inconsistent IR (a graph attribute
/// without a graph) or a protobuf serialization failure.
Expected<std::string> export_onnx_bytes(const Model& model);

/// Writes `model` to `path` (replaced) and, per `options`, its external data to "<path>.data"
/// (replaced when at least one tensor goes there; not touched otherwise). Each file is written
/// whole or not at all and the two are renamed into place together (edgemm/atomic_file.h).
/// The files read back with import_onnx_file and pass onnx::checker::check_model(path).
/// Errors: those of export_onnx_bytes; kInvalidArgument for a negative threshold; kIo naming
/// the path that could not be written.
Status export_onnx_file(const Model& model, const std::string& path, const ExportOptions& options = {});

}  // namespace edgemm::ir
