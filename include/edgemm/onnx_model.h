#pragma once
/// \file onnx_model.h
/// `OnnxModel`: an ONNX model loaded for editing by the tool-side libraries (convert, quantize,
/// prune, targets: edgemm/tools/*.h), and written back to a file. Reading follows the ONNX IR
/// spec (onnx.proto ModelProto, "External Tensor Data"); what the file holds is kept in edgemm's
/// graph form, which the handle does not expose. To run a model, use edgemm/inferencer.h.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "edgemm/value_info.h"

namespace edgemm {

/// How OnnxModel::load reads a file.
struct OnnxLoadOptions {
  /// Input name → full static shape, pinned before shape inference (symbolic axes become these
  /// extents). load() fails with kInvalidArgument for a name that is not an input, a rank other
  /// than the declared one, an extent below 1 or one that contradicts a declared extent;
  /// edgemm/tools/convert.h validate_fixed_shapes makes the same checks with messages that list
  /// the model's inputs, before anything is loaded twice.
  std::map<std::string, Shape> fixed_input_shapes;
  bool run_checker = true;   ///< run onnx::checker::check_model on the file's ModelProto
  bool infer_shapes = true;  ///< run ONNX shape inference (fills intermediate value shapes)
};

/// How OnnxModel::save lays out the files.
struct OnnxSaveOptions {
  /// Tensors (initializers and tensor attributes such as Constant values, in every graph) of at
  /// least this many bytes go to one external data file beside the model, "<model file
  /// name>.data", at offsets aligned to 64 bytes (ONNX IR spec "External Tensor Data"). 0 = never:
  /// every tensor inline. Negative is an error.
  int64_t external_data_threshold = 0;
};

/// An ONNX model in memory. Movable, not copyable (clone() copies); not thread-safe: one thread
/// at a time may use a handle. A moved-from handle may only be assigned to or destroyed.
class OnnxModel {
 public:
  /// The model's contents; defined for the tool-side libraries only.
  struct Impl;

  /// Reads `path` and the external data files it names (resolved relative to the model's folder;
  /// an absolute location or one that climbs out of that folder with `..` is refused).
  /// Errors: kInvalidArgument for "-" (a model is read by path, with its data beside it); kIo
  /// naming the path for a missing or unreadable model or data file; kInvalidModel for a file
  /// that is not a ModelProto (corrupt, truncated), fails the checker, or has data ranges outside
  /// its data file; kUnsupported for an ai.onnx opset above 21 or string tensors.
  static Expected<OnnxModel> load(const std::string& path, const OnnxLoadOptions& options = {});

  /// Writes the model to `path` (replaced) and, per `options`, its external data to
  /// "<path>.data". Each file is written whole or not at all, and the two are renamed into place
  /// together (edgemm/atomic_file.h): on error the previous files stay as they were.
  /// Errors: kUnsupported naming the node or value that ONNX cannot hold (a node of a domain
  /// only edgemm's runtime knows, an unsupported tensor dtype, a model over protobuf's 2 GiB
  /// limit without external data); kInvalidArgument for a negative threshold; kIo naming the
  /// path that could not be written.
  Status save(const std::string& path, const OnnxSaveOptions& options = {}) const;

  /// An independent copy (tensors are copied).
  OnnxModel clone() const;

  /// The model's ONNX IR version (ModelProto.ir_version).
  int64_t ir_version() const;
  /// ModelProto.producer_name ("" when unset).
  const std::string& producer_name() const;
  /// Opset of `domain` ("" and "ai.onnx" are the same), or 0 when the model does not import it.
  int64_t opset(const std::string& domain = "") const;
  /// Every imported opset: domain ("" = ai.onnx) → version.
  const std::map<std::string, int64_t>& opsets() const;
  /// The main graph's inputs (initializers excluded) and outputs, in file order, with the
  /// declared (and, after load, inferred) dtype and shape.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  /// Nodes of the main graph (not counting subgraph bodies).
  size_t node_count() const;
  /// Main-graph nodes per op: "Conv" for ai.onnx ops, "<domain>.<op>" for others
  /// (e.g. "com.microsoft.MatMulNBits").
  std::map<std::string, int> op_histogram() const;
  /// Files the tensors' external data was read from at load (canonical paths, each once; empty
  /// for a self-contained model), so that tools writing files can refuse to replace them.
  const std::vector<std::string>& external_data_files() const;

  /// Wraps contents made by a tool-side library (src/ir/onnx_model_access.h).
  explicit OnnxModel(std::unique_ptr<Impl> impl);
  OnnxModel(OnnxModel&& other) noexcept;
  OnnxModel& operator=(OnnxModel&& other) noexcept;
  ~OnnxModel();

  /// The contents, for the tool-side libraries (src/ir/onnx_model_access.h).
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgemm
