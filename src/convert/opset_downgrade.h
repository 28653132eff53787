#pragma once
/// \file opset_downgrade.h
/// Down-conversion of the ai.onnx opset by edgemm's own rewrites (libonnx 1.12's version
/// converter cannot go down from 13+). For every node, the op's versions between the target
/// and the model's opset (onnx::OpSchemaRegistry, i.e. the ONNX operator changelog) are looked
/// up in a table of changes (opset_changes.cc):
/// - types only (e.g. Add-14, Relu-14, Cast-13 bfloat16): the node is relabelled when its input
///   dtypes are allowed by the target version's type constraints;
/// - an attribute or input added with a default (Reshape-14 allowzero, Shape-15 start/end,
///   BatchNormalization-14 training_mode, ScatterND-16 reduction, ...): relabelled when the
///   node leaves it at the default;
/// - negative axes (accepted from opset 11): normalized with the input's known rank;
/// - a real change: the op family's rewrite (layer_norm_downgrade.cc, axes_downgrade.cc,
///   softmax_downgrade.cc, clip_downgrade.cc, resize_downgrade.cc, slice_downgrade.cc).
/// An op that does not exist at the target, or a change without a rule, is an error naming
/// the node, op, version and target opset; the model is then left unchanged.

#include <cstdint>
#include <map>
#include <string>

#include "edgemm/status.h"
#include "ir/graph.h"

namespace edgemm::convert {

/// Rewrites `model` (ai.onnx opset > target) to ai.onnx opset `target` (≥ 7) and sets its
/// opset import, lowering the IR version to the one `target` came with when the model's is newer
/// (ir_version_for_opset). Subgraphs (If/Loop/Scan bodies) are refused. Counts the rewrites in
/// `counts`.
/// Errors: kUnsupported naming the node, op, version and target opset.
Status downgrade_opset(ir::Model& model, int64_t target, std::map<std::string, int>& counts);

}  // namespace edgemm::convert
