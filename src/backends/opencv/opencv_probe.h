#pragma once
/// \file opencv_probe.h
/// The opencv backend's capability: one verdict per node, found by asking OpenCV DNN 4.6 itself
/// rather than from a table. Each node becomes a one-node ONNX model (its constant inputs as
/// initializers, its other inputs as graph inputs with the dtypes and shapes shape inference
/// gave them) that OpenCV must import and run forward on seeded inputs in [-1, 1), producing the
/// output shapes ONNX shape inference declares and, where edgemm's native kernels run the node,
/// their values within kProbeTolerance (probe_process.h runs each probe in a child process).
/// Seeded inputs rather than zeros: zeros would let a node whose values OpenCV gets wrong pass.
///
/// Refused without a probe, because OpenCV 4.6 cannot run them at all:
/// - runtime inputs or outputs that are not float32 (OpenCV 4.6 blobs are float32; its importer
///   reads integer tensors only as constants);
/// - runtime inputs or outputs without a static shape ("dynamic input shape [?,3,?,?] ...");
/// - nodes with subgraphs (If, Loop, Scan) and nodes outside the standard ONNX domains.
///
/// Probes are cached for the life of the process by (domain, op, opset, attributes, per input:
/// absent / runtime dtype and shape / constant dtype and shape, per output: dtype and shape),
/// plus the values of constants of at most kKeyedConstantElements elements (the shapes, axes,
/// scales, pads and bounds OpenCV's importer decides on). Larger constants (weights) are keyed
/// by dtype and shape only: the first node of a key is probed with its own weights.

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"

namespace edgemm::backends::opencv {

/// Constants with at most this many elements are part of the probe key by value.
inline constexpr int64_t kKeyedConstantElements = 64;

/// What one capability() call did, for the verbose log and docs/backends.md.
struct ProbeStats {
  int nodes = 0;       ///< nodes judged
  int prechecked = 0;  ///< refused without a probe (dtype, dynamic shape, subgraph, domain)
  int cached = 0;      ///< answered from the process-wide cache or an identical node
  int probed = 0;      ///< one-node models OpenCV imported and ran in this call
  double elapsed_ms = 0;
};

/// One verdict per node of model.graph.nodes, in order. A refusal's reason starts with what it
/// is about (the op and its input dtypes and shapes, constants marked, the attributes OpenCV's
/// message names) and ends with OpenCV's essential error line, e.g. "Clip(float32[1,3,4,4],
/// constant float32[], constant float32[]): OpenCV DNN 4.6 cannot import it: (expected:
/// 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3 (in parseClip)".
/// Thread-safe. `stats` (optional) receives the counts and time.
std::vector<NodeSupport> probe_capability(const ir::Model& model, ProbeStats* stats = nullptr);

}  // namespace edgemm::backends::opencv
