#pragma once
/// \file onnx_next_schemas.h
/// Schemas of the ai.onnx ops that changed or appeared in opsets 18–21 (ONNX 1.13–1.16,
/// Operators.md and Changelog.md), for libonnx 1.12, which knows opsets up to 17 only and
/// refuses to register a later version in ai.onnx (DomainToVersionRange caps it at 17). edgemm
/// registers them under a domain of its own, kNextDomain, with ONNX's own since-versions; the
/// checker and shape inference see a model at opset 18–21 through libonnx_view.h, which files
/// each such node under that domain while they run. An op whose change after 17 touched only
/// its types (Reshape-19/21, Transpose-21, Identity-21, ...) needs no schema here: libonnx's
/// opset-17 schema of it describes the same signature.

#include <onnx/defs/schema.h>

#include <cstdint>
#include <string>
#include <vector>

namespace edgemm::ir {

/// The domain under which the opset 18–21 schemas are registered (never written to a file).
inline constexpr const char* kNextDomain = "edgemm.ai.onnx.next";
/// Highest ai.onnx opset edgemm imports.
inline constexpr int kMaxImportOpset = 21;
/// Highest ai.onnx opset libonnx 1.12 has schemas for; later versions are this file's.
inline constexpr int64_t kLastLibOnnxOpset = 17;

/// Registers every schema of this file's two .cc files once (thread-safe); later calls return.
void register_onnx_next_schemas();

namespace next_schemas {

/// A copy of libonnx's schema of ai.onnx `base` at `base_version` (inputs, outputs, attributes,
/// type constraints, inference and data propagation), named `name`, in kNextDomain at `since`;
/// `extra_types` are added to the allowed types of the type constraint `type_param`. Not yet
/// finalized: callers add attributes or inputs, then register().
onnx::OpSchema clone(const std::string& base, int base_version, const std::string& name, int since,
                     const std::string& type_param = "", const std::vector<std::string>& extra_types = {});
/// A new, empty schema `name` in kNextDomain at `since`.
onnx::OpSchema fresh(const std::string& name, int since);
/// Finalizes and registers `schema` with libonnx.
void add(onnx::OpSchema schema);

/// The int64 values of a constant input (initializer or Constant), or false when not constant.
bool constant_ints(onnx::InferenceContext& ctx, size_t input, std::vector<int64_t>& values);
/// Float types ONNX's float ops accept: float16, float, double, bfloat16.
const std::vector<std::string>& float_types();
/// Integer types: int8..int64 and uint8..uint64.
const std::vector<std::string>& integer_types();

/// Registers the ops new in opsets 18–20 (onnx_next_new_ops.cc).
void register_new_ops();

}  // namespace next_schemas

}  // namespace edgemm::ir
