#include "convert/onnx_checks.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <string>

#include "ir/libonnx_view.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

namespace edgemm::convert {

namespace {

Expected<onnx::ModelProto> to_proto(const ir::Model& model) {
  EDGEMM_ASSIGN_OR_RETURN(std::string bytes, ir::export_onnx_bytes(model));
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) {
    return make_error(StatusCode::kInternal, "the exported model does not parse back as an ONNX ModelProto");
  }
  return proto;
}

/// Imports `proto` back into `model`, without running inference again.
Status from_proto(const onnx::ModelProto& proto, ir::Model& model) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return make_error(StatusCode::kInternal, "protobuf could not serialize the converted ModelProto");
  }
  ir::ImportOptions options;
  options.infer_shapes = false;
  EDGEMM_ASSIGN_OR_RETURN(model, ir::import_onnx_bytes(bytes, "", options));
  return Status::ok();
}

}  // namespace

int64_t ir_version_for_opset(int64_t opset) {
  if (opset >= 15) return 8;
  if (opset >= 12) return 7;
  if (opset >= 9) return opset - 5;
  return 3;
}

Status reinfer_shapes(ir::Model& model) {
  model.graph.value_infos.clear();
  EDGEMM_ASSIGN_OR_RETURN(onnx::ModelProto proto, to_proto(model));
  EDGEMM_RETURN_IF_ERROR(ir::with_libonnx_view(proto, [&proto](const std::map<std::string, int64_t>&) {
    EDGEMM_RETURN_IF_ERROR(ir::run_onnx_checker(proto, "ONNX checks after a rewrite failed: "));
    try {
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
      return make_error(StatusCode::kInvalidModel, std::string("ONNX checks after a rewrite failed: ") + e.what());
    }
    return Status::ok();
  }));
  return from_proto(proto, model);
}

Status check_strict(const ir::Model& model) {
  EDGEMM_ASSIGN_OR_RETURN(onnx::ModelProto proto, to_proto(model));
  return ir::with_libonnx_view(proto, [&proto](const std::map<std::string, int64_t>&) {
    EDGEMM_RETURN_IF_ERROR(ir::run_onnx_checker(proto, "the ONNX checker rejects the result: "));
    try {
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(true, 1, false));
    } catch (const std::exception& e) {
      return make_error(StatusCode::kInvalidModel,
                        std::string("strict ONNX shape inference rejects the result: ") + e.what());
    }
    return Status::ok();
  });
}

Status upgrade_opset(ir::Model& model, int64_t target) {
  const int64_t source = model.opset("");
  EDGEMM_ASSIGN_OR_RETURN(onnx::ModelProto proto, to_proto(model));
  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(proto, static_cast<int>(target));
  } catch (const std::exception& e) {
    return make_error(StatusCode::kUnsupported, "libonnx's version converter could not convert opset " +
                                                    std::to_string(source) + " to " + std::to_string(target) + ": " +
                                                    e.what() +
                                                    " (its adapters need inferred shapes: static input shapes from "
                                                    "--fix-shape usually provide them)");
  }
  converted.set_ir_version(std::max<int64_t>(converted.ir_version(), ir_version_for_opset(target)));
  return from_proto(converted, model);
}

}  // namespace edgemm::convert
