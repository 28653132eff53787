#include "ir/memory_estimate.h"

#include <set>
#include <unordered_map>

#include "edgemm/memory_check.h"
#include "edgemm/memory_limit.h"
#include "ir/onnx_import.h"

namespace edgemm::ir {

namespace {

/// Bytes of a value with a static shape and a known dtype; 0 otherwise (or on overflow).
int64_t value_bytes(const ValueInfo& info) {
  if (!info.rank_known || dtype_size(info.dtype) == 0) return 0;
  Shape shape;
  for (const Dim& d : info.shape) {
    if (!d.is_static()) return 0;
    shape.push_back(d.value);
  }
  const Expected<int64_t> count = shape_element_count(shape);
  const int64_t element = static_cast<int64_t>(dtype_size(info.dtype));
  if (!count.has_value() || *count > INT64_MAX / element) return 0;
  return *count * element;
}

/// Sizes of every value with a known static shape: inputs, outputs, value_infos.
std::unordered_map<std::string, int64_t> value_sizes(const Graph& graph) {
  std::unordered_map<std::string, int64_t> sizes;
  for (const auto& [name, info] : graph.value_infos) sizes[name] = value_bytes(info);
  for (const ValueInfo& v : graph.outputs) sizes[v.name] = value_bytes(v);
  for (const ValueInfo& v : graph.inputs) sizes[v.name] = value_bytes(v);
  return sizes;
}

int64_t weight_bytes(const Graph& graph) {
  int64_t bytes = 0;
  for (const auto& [name, t] : graph.initializers) bytes += static_cast<int64_t>(t.byte_size());
  for (const Node& n : graph.nodes) {
    if (const Tensor* t = n.op_type == "Constant" ? n.attr_tensor("value") : nullptr) {
      bytes += static_cast<int64_t>(t->byte_size());
    }
  }
  return bytes;
}

std::string shapes_text(const std::map<std::string, Shape>& shapes) {
  std::string text;
  for (const auto& [name, shape] : shapes) text += (text.empty() ? "" : " ") + name + "=" + shape_to_string(shape);
  return text;
}

}  // namespace

MemoryEstimate estimate_memory(const Graph& graph) {
  MemoryEstimate estimate;
  estimate.weight_bytes = weight_bytes(graph);
  const std::unordered_map<std::string, int64_t> sizes = value_sizes(graph);
  const auto size_of = [&sizes](const std::string& name) {
    auto it = sizes.find(name);
    return it == sizes.end() ? int64_t{0} : it->second;
  };
  std::set<std::string> held;  // never freed during the run: inputs, weights, outputs
  for (const ValueInfo& v : graph.inputs) {
    estimate.input_bytes += size_of(v.name);
    held.insert(v.name);
  }
  for (const auto& [name, t] : graph.initializers) held.insert(name);
  std::set<std::string> outputs;
  for (const ValueInfo& v : graph.outputs) outputs.insert(v.name);
  std::unordered_map<std::string, size_t> last_read;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) last_read[in] = i;
  }
  int64_t live = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    for (const std::string& out : node.outputs) {
      if (out.empty() || held.count(out)) continue;
      const int64_t bytes = size_of(out);
      live += bytes;
      if (bytes > estimate.largest_bytes) {
        estimate.largest_bytes = bytes;
        estimate.largest_value = out;
      }
    }
    estimate.activation_bytes = std::max(estimate.activation_bytes, live);
    std::set<std::string> freed;
    for (const std::string& in : node.inputs) {
      if (!in.empty() && !held.count(in) && !outputs.count(in) && last_read[in] == i) freed.insert(in);
    }
    for (const std::string& out : node.outputs) {
      if (!out.empty() && !held.count(out) && !outputs.count(out) && !last_read.count(out)) freed.insert(out);
    }
    for (const std::string& name : freed) live -= size_of(name);
  }
  return estimate;
}

}  // namespace edgemm::ir

namespace edgemm {

Status check_shapes_fit_memory(const std::string& model_path, const std::map<std::string, Shape>& shapes) {
  using namespace ir;  // shapes_text, bytes_text
  if (shapes.empty()) return Status::ok();
  ImportOptions options;
  options.fixed_input_shapes = shapes;
  options.run_checker = false;
  const Expected<Model> model = import_onnx_file_shapes_only(model_path, options);
  if (!model.has_value()) return Status::ok();
  const MemoryEstimate e = estimate_memory(model->graph);
  const MemoryLimit limit = process_memory_limit();
  if (e.total() <= limit.bytes) return Status::ok();
  std::string largest;
  if (!e.largest_value.empty()) largest = ", the largest '" + e.largest_value + "' " + bytes_text(e.largest_bytes);
  return Status(StatusCode::kOutOfMemory, "input shapes " + shapes_text(shapes) + ": one run needs an estimated " +
                                              bytes_text(e.total()) + " (weights " + bytes_text(e.weight_bytes) +
                                              ", inputs " + bytes_text(e.input_bytes) + ", intermediate tensors " +
                                              bytes_text(e.activation_bytes) + " at their peak" + largest +
                                              "), more than the " + bytes_text(limit.bytes) +
                                              " this process may use (" + limit.source + "); give smaller shapes");
}

}  // namespace edgemm
