/// \file opencv_dnn.cc
/// DnnNet and the OpenCV exception helpers (see opencv_dnn.h).

#include "backends/opencv/opencv_dnn.h"

#include <cstring>
#include <opencv2/core/utility.hpp>
#include <sstream>

namespace edgemm::backends::opencv {
namespace {

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

/// "parseClip" from "void cv::dnn::ONNXImporter::parseClip(cv::dnn::LayerParams&, ...)".
std::string short_function_name(const std::string& signature) {
  std::string name = signature.substr(0, signature.find('('));
  if (const size_t colon = name.rfind(':'); colon != std::string::npos) name = name.substr(colon + 1);
  if (const size_t space = name.rfind(' '); space != std::string::npos) name = name.substr(space + 1);
  return name;
}

/// The detail lines OpenCV's CV_Check macros print under an error ("> >  (expected: ...)"), up to
/// "must be ..." or the closing "]", joined into one line.
std::string detail_lines(const std::string& text) {
  std::istringstream in(text);
  std::string joined;
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of("> \t");
    if (start == std::string::npos) continue;
    line = trim(line.substr(start));
    if (line == "]" || line.rfind("must be", 0) == 0) break;
    if (line == ":") continue;
    joined += (joined.empty() ? "" : " ") + line;
  }
  return joined;
}

std::string dims_text(const cv::Mat& blob) {
  Shape shape;
  for (int d = 0; d < blob.dims; ++d) shape.push_back(blob.size[d]);
  return shape_to_string(shape);
}

/// A cv::Mat header over `t`'s float32 data, without a copy (rank 0 and 1 become OpenCV's 2-D
/// [1,n], as a cv::Mat has at least 2 axes).
cv::Mat blob_view(const Tensor& t) {
  std::vector<int> dims(t.shape().begin(), t.shape().end());
  while (dims.size() < 2) dims.insert(dims.begin(), 1);
  return cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F, const_cast<void*>(t.raw_data()));
}

}  // namespace

std::string essential_error(const std::string& what) {
  const size_t at = what.rfind("error: (");
  if (at == std::string::npos) return trim(what.substr(0, what.find('\n')));
  const size_t colon = what.find(':', at + 8);
  const size_t close = what.find(')', at);
  if (colon == std::string::npos || close == std::string::npos || colon > close) {
    return trim(what.substr(at + 7, what.find('\n', at) - at - 7));
  }
  const std::string kind = what.substr(colon + 1, close - colon - 1);
  std::string rest = what.substr(close + 1);
  std::string function;
  const size_t in_function = rest.find("in function '");
  std::string message = trim(rest.substr(0, in_function));
  if (in_function != std::string::npos) {
    const size_t name_start = in_function + 13;
    const size_t name_end = rest.find('\'', name_start);
    function = short_function_name(rest.substr(name_start, name_end - name_start));
    rest = name_end == std::string::npos ? "" : rest.substr(name_end + 1);
  } else {
    rest.clear();
  }
  const std::string detail = detail_lines(rest);
  if (!detail.empty()) message += (message.empty() ? "" : " ") + detail;
  std::string text = kind == "Unspecified error" ? message : kind + ": " + message;
  if (!function.empty()) text += " (in " + function + ")";
  return text;
}

std::string failing_node(const std::string& what) {
  const size_t at = what.find("Node [");
  if (at == std::string::npos) return "";
  const size_t op_end = what.find_first_of("@]", at + 6);
  const size_t open = what.find("]:(", at);
  const size_t close = open == std::string::npos ? std::string::npos : what.find(')', open);
  if (op_end == std::string::npos || close == std::string::npos) return "";
  std::string output = what.substr(open + 3, close - open - 3);
  if (const size_t bang = output.find('!'); bang != std::string::npos) output = output.substr(bang + 1);
  return what.substr(at + 6, op_end - at - 6) + " '" + output + "'";
}

void use_threads(int threads) {
  if (cv::getNumThreads() != threads) cv::setNumThreads(threads);
}

Expected<DnnNet> DnnNet::read(const std::string& onnx, std::vector<NamedShape> inputs, std::vector<NamedShape> outputs,
                              bool name_node) {
  try {
    cv::dnn::Net net = cv::dnn::readNetFromONNX(onnx.data(), onnx.size());
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    net.enableFusion(false);
    return DnnNet(std::move(net), std::move(inputs), std::move(outputs));
  } catch (const cv::Exception& e) {
    const std::string node = name_node ? failing_node(e.what()) : "";
    return make_error(StatusCode::kUnsupported, "OpenCV DNN 4.6 cannot import it: " + essential_error(e.what()) +
                                                    (node.empty() ? "" : " (node " + node + ")"));
  }
}

Expected<std::vector<cv::Mat>> DnnNet::forward_blobs(const std::vector<Tensor>& inputs) {
  if (inputs.size() != inputs_.size()) {
    return make_error(StatusCode::kInvalidArgument, "the OpenCV net takes " + std::to_string(inputs_.size()) +
                                                        " inputs, got " + std::to_string(inputs.size()));
  }
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const NamedShape& want = inputs_[i];
      if (inputs[i].dtype() != DataType::kFloat32 || inputs[i].shape() != want.shape) {
        return make_error(StatusCode::kInvalidArgument,
                          "input '" + want.name + "' is " + dtype_name(inputs[i].dtype()) +
                              shape_to_string(inputs[i].shape()) + "; the OpenCV net was compiled for float32" +
                              shape_to_string(want.shape));
      }
      net_.setInput(blob_view(inputs[i]), want.name);  // copies into the net's own input blob
    }
    std::vector<cv::String> names;
    for (const NamedShape& out : outputs_) names.push_back(out.name);
    std::vector<cv::Mat> blobs;
    net_.forward(blobs, names);
    EDGEMM_RETURN_IF_ERROR(check_blobs(blobs));
    return blobs;
  } catch (const cv::Exception& e) {
    return make_error(StatusCode::kUnsupported, "OpenCV DNN 4.6 cannot run it: " + essential_error(e.what()));
  }
}

Expected<std::vector<Tensor>> DnnNet::forward(const std::vector<Tensor>& inputs) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<cv::Mat> blobs, forward_blobs(inputs));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < blobs.size(); ++i) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat32, outputs_[i].shape));
    const cv::Mat blob = blobs[i].isContinuous() ? blobs[i] : blobs[i].clone();
    if (t.byte_size() > 0) std::memcpy(t.raw_data(), blob.data, t.byte_size());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Status DnnNet::forward_zeros() {
  std::vector<Tensor> zeros;
  for (const NamedShape& in : inputs_) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat32, in.shape));
    zeros.push_back(std::move(t));
  }
  return forward_blobs(zeros).status();
}

Status DnnNet::check_blobs(const std::vector<cv::Mat>& blobs) const {
  if (blobs.size() != outputs_.size()) {
    return make_error(StatusCode::kUnsupported, "OpenCV DNN 4.6 returned " + std::to_string(blobs.size()) +
                                                    " outputs for " + std::to_string(outputs_.size()) + " names");
  }
  for (size_t i = 0; i < blobs.size(); ++i) {
    const NamedShape& want = outputs_[i];
    Shape got;
    for (int d = 0; d < blobs[i].dims; ++d) got.push_back(blobs[i].size[d]);
    if (blobs[i].type() != CV_32F || got != want.shape) {
      return make_error(StatusCode::kUnsupported, "OpenCV DNN 4.6 gives output '" + want.name + "' as " +
                                                      (blobs[i].type() == CV_32F ? "float32" : "a non-float32 blob ") +
                                                      dims_text(blobs[i]) + "; ONNX shape inference says float32" +
                                                      shape_to_string(want.shape));
    }
  }
  return Status::ok();
}

}  // namespace edgemm::backends::opencv
