#pragma once
/// \file libonnx_view.h
/// Lets libonnx 1.12's checker and shape inference read a model of ai.onnx opset 18–21: while
/// `fn` runs, every node whose op changed or appeared after opset 17 is filed under
/// kNextDomain (onnx_next_schemas.h), whose schemas describe it at the model's opset (an op
/// libonnx and edgemm have no schema for passes unchecked, its outputs uninferred), and an IR
/// version above libonnx's 8 reads as 8 (IR 9 and 10 add float8 and 4-bit types, which the
/// schemas then refuse). Both are restored afterwards, whatever `fn` returns. Subgraphs (If,
/// Loop, Scan bodies) are included. Models at opset 17 and below pass through unchanged.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "edgemm/status.h"

namespace edgemm::ir {

/// Runs `fn(opsets)` on `proto` as described above; `opsets` maps each imported domain ("" for
/// ai.onnx) to its version, kNextDomain included when nodes were refiled.
Status with_libonnx_view(onnx::ModelProto& proto,
                         const std::function<Status(const std::map<std::string, int64_t>& opsets)>& fn);

/// onnx::checker::check_model, except that main-graph inputs and outputs may omit their shape
/// (libonnx 1.12's checker requires one; later ONNX versions and ONNX Runtime accept unknown
/// shapes, which shape inference then fills in). Such values get an empty shape only while the
/// checker runs. Errors: kInvalidModel, `prefix` followed by the checker's message.
Status run_onnx_checker(onnx::ModelProto& proto, const std::string& prefix);

}  // namespace edgemm::ir
