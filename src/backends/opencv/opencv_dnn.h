#pragma once
/// \file opencv_dnn.h
/// What the opencv backend needs from OpenCV DNN 4.6 (cv::dnn, Debian's libopencv-dnn406): a net
/// read from an in-memory ONNX model and run on float32 blobs with its output shapes checked, the
/// process-wide thread count, and the essential line of OpenCV's exception texts. Follows the
/// OpenCV 4.6 dnn documentation (cv::dnn::readNetFromONNX, Net::setInput, Net::forward).

#include <opencv2/dnn.hpp>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::backends::opencv {

/// A graph input or output of a model handed to OpenCV, with its static shape.
struct NamedShape {
  std::string name;
  Shape shape;
};

/// The essential part of an OpenCV exception text (cv::Exception::what()): the innermost
/// "error: (code:kind) message in function 'f'" with the detail lines OpenCV puts under it
/// ("(expected: ...), where ... is 3"), as one line "kind: message detail (in f)". The kind is
/// left out when it is "Unspecified error"; text that is not in OpenCV's format comes back as its
/// first line. E.g. "Assertion failed: step >= 1 (in SliceLayerImpl)".
std::string essential_error(const std::string& what);

/// The node OpenCV's ONNX importer names in an exception text ("Node [Clip@ai.onnx]:(y) parse
/// error"), as "Clip 'y'" (the node's first output), or "" when the text names none.
std::string failing_node(const std::string& what);

/// Sets cv::setNumThreads(threads) when OpenCV's process-wide count differs (OpenCV's
/// parallel framework, TBB in Debian, reads it at every parallel loop).
void use_threads(int threads);

/// A cv::dnn::Net read from ONNX bytes, on DNN_BACKEND_OPENCV / DNN_TARGET_CPU with layer fusion
/// off, with the float32 graph inputs it is fed and the graph outputs it must produce. Fusion is
/// off because capability is probed node by node: OpenCV 4.6 fuses a scalar Div/Mul into the
/// InnerProduct layer of a MatMul of two computed operands and then computes wrong values (off by
/// 7.9 on MatMul → Div by 2.83), though each node alone is right. Not thread-safe (cv::dnn::Net
/// keeps its blobs inside): callers serialize forward() calls.
class DnnNet {
 public:
  /// Reads `onnx` (a serialized ModelProto) with cv::dnn::readNetFromONNX(buffer, size).
  /// Errors: kUnsupported "OpenCV DNN 4.6 cannot import it: <essential_error>", followed by
  /// " (node <failing_node>)" when `name_node` is set and OpenCV names one.
  static Expected<DnnNet> read(const std::string& onnx, std::vector<NamedShape> inputs, std::vector<NamedShape> outputs,
                               bool name_node = false);

  /// Runs the net on `inputs` (float32, in the order and shapes given to read(); Net::setInput
  /// copies them into the net's own blobs) and returns OpenCV's output blobs, in the order given
  /// to read(), after checking that each is float32 of the declared shape. The blobs are the
  /// net's own: valid until the next forward. Errors: kInvalidArgument for an input of another
  /// count, dtype or shape; kUnsupported "OpenCV DNN 4.6 cannot run it: ..." for an OpenCV
  /// exception, and for an output of another type or shape (never returned reshaped).
  Expected<std::vector<cv::Mat>> forward_blobs(const std::vector<Tensor>& inputs);

  /// forward_blobs() with the outputs copied into owning float32 tensors.
  Expected<std::vector<Tensor>> forward(const std::vector<Tensor>& inputs);

  /// forward_blobs() on all-zero inputs: the warm-up after compiling, which makes OpenCV
  /// allocate its blobs and report shape errors at load rather than at the first run.
  Status forward_zeros();

 private:
  DnnNet(cv::dnn::Net net, std::vector<NamedShape> inputs, std::vector<NamedShape> outputs)
      : net_(std::move(net)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  /// kUnsupported unless `blobs` are float32 blobs of the declared output shapes.
  Status check_blobs(const std::vector<cv::Mat>& blobs) const;

  cv::dnn::Net net_;
  std::vector<NamedShape> inputs_;
  std::vector<NamedShape> outputs_;
};

}  // namespace edgemm::backends::opencv
