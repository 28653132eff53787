#pragma once
/// \file opset_changes.h
/// What changed in each ai.onnx operator version from opset 8 to 21 (ONNX docs/Changelog.md),
/// as far as going down to an older version is concerned. opset_downgrade.cc consults it for
/// every version of a node's op that lies above the target opset.

#include <string>

namespace edgemm::convert {

/// How an op version differs from the one before it.
enum class ChangeKind {
  kTypes,          ///< new input/output types only: relabel when the node's dtypes are allowed
  kDefaultAttrs,   ///< attributes added: relabel when each of `detail` ("a=v;b=") is absent or
                   ///< equal to its default (an empty default: must be absent; "ones": a list of
                   ///< 1s); they are dropped
  kSingleInput,    ///< optional inputs added: relabel when only input 0 is given
  kNegativeAxes,   ///< negative `axis`/`axes` allowed from here: normalize with the input's rank
  kGatherIndices,  ///< negative axis and indices allowed (Gather-11): normalize the axis, and the
                   ///< indices must be non-negative constants
  kAttrValues,     ///< attribute values added: each of `detail` ("a=v1|v2") must be absent or one
                   ///< of the listed values; it is kept
  kRewrite,        ///< a real change: the op family's rewrite in downgrade_rewrites.h
};

/// One row of the table: `op` at `version` differs from its previous version by `kind`.
struct OpChange {
  const char* op;
  int version;
  ChangeKind kind;
  const char* detail;  ///< attributes for kDefaultAttrs / kAttrValues, else a note from the changelog
};

/// The row for `op` version `version`, or nullptr when edgemm has no rule for it (then a node
/// of that op cannot go below that version).
const OpChange* find_op_change(const std::string& op, int version);

}  // namespace edgemm::convert
