#pragma once
/// \file convert.h
/// Rewriting an ONNX model so that stricter runtimes (OpenCV DNN, vendor NPU converters) accept
/// it, with standard ONNX ops only, as `edgemm convert` does (docs/convert.md). Three independent
/// steps, in this order:
/// 1. fixed input shapes (pinned, then constant folding and ONNX shape inference repeated until
///    nothing changes, so Shape → Gather → Concat → Reshape chains become constants);
/// 2. simplification (constant folding, dead nodes, Transpose/Reshape clean-up, BatchNormalization
///    and affine folding into Conv, and forms stricter runtimes read), repeated with shape
///    inference until nothing changes;
/// 3. opset conversion: up through libonnx's version converter, down through edgemm's per-op
///    rewrites.
/// The result passes onnx::checker and strict ONNX shape inference at its opset. Library
/// edgemm::convert.

#include <cstdint>
#include <map>
#include <string>

#include "edgemm/onnx_model.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::convert {

/// Lowest and highest ai.onnx opset edgemm reads, writes and converts between.
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 17;

/// What to do with a model.
struct ConvertOptions {
  /// Input name → static shape (every extent ≥ 1). See validate_fixed_shapes for the checks.
  std::map<std::string, Shape> fixed_shapes;
  bool simplify = false;
  /// With `simplify`, also the rewrites made for runtimes stricter than the ONNX spec (OpenCV
  /// DNN 4.6: HardSwish, Clip bounds, broadcast constants; docs/convert.md). `convert --target`
  /// turns them off: they trade ops an NPU profile lists (Clip) for others it may not
  /// (HardSigmoid).
  bool strict_runtime_rewrites = true;
  /// Target ai.onnx opset; 0 keeps the model's.
  int64_t target_opset = 0;
  /// Input shapes that only help an opset upgrade: libonnx's adapters need the rank of some
  /// values (e.g. Softmax 12→13) that shape inference of a model with symbolic input shapes can
  /// leave unknown. A copy pinned to these shapes is inferred, and the ranks it finds are added to
  /// the model (dims stay unknown; the model keeps its symbolic inputs). Empty: none.
  std::map<std::string, Shape> rank_probe_shapes;
};

/// What the conversion did, for reports (`edgemm convert --json`).
struct ConvertReport {
  int64_t source_opset = 0;
  int64_t target_opset = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  int folded_nodes = 0;   ///< nodes replaced by constants (all rounds)
  int removed_nodes = 0;  ///< dead nodes dropped (all rounds)
  int rounds = 0;         ///< fold/simplify + shape inference rounds until nothing changed
  /// Rewrites applied, by name (e.g. "LayerNormalization-17 decomposed": 2, "Clip bounds to
  /// attributes": 1, "relabelled": 40), from the simplification and opset steps.
  std::map<std::string, int> rewrites;
  std::map<std::string, int> ops_before;  ///< op histogram of the input model ("domain:Op" outside ai.onnx)
  std::map<std::string, int> ops_after;   ///< op histogram of the result
};

/// Checks `fixed` against the model's declared inputs before anything is changed; messages
/// name the shapes as given with `option` (e.g. "--fix-shape x=[1,0,8]").
/// Errors (kInvalidArgument, each naming the input): a name the model does not have (the
/// message lists the model's inputs), a rank different from the declared one (the message
/// gives the declared rank and dims), an extent below 1, an extent that contradicts a fixed
/// declared dim, a shape whose element count overflows int64.
Status validate_fixed_shapes(const OnnxModel& model, const std::map<std::string, Shape>& fixed,
                             const std::string& option = "--fix-shape");

/// Errors: kUnsupported (naming the range) for a target opset outside [kMinOpset, kMaxOpset].
Status check_target_opset(int64_t target);

/// Runs the steps `options` asks for on `model` in place and says what they did. Errors: those
/// of validate_fixed_shapes; kUnsupported for a target opset outside [kMinOpset, kMaxOpset] or a
/// node that cannot be expressed at it (the message names the node, op and target opset);
/// kInvalidModel when the checker or shape inference rejects the result, kInvalidArgument
/// instead when shapes were fixed (the extents may not suit the model). On error the model may
/// be partly rewritten.
Expected<ConvertReport> convert_model(OnnxModel& model, const ConvertOptions& options);

}  // namespace edgemm::convert
