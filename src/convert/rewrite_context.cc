#include "convert/rewrite_context.h"

#include "passes/pattern_util.h"

namespace edgemm::convert {

RewriteContext::RewriteContext(ir::Graph& graph, int64_t source_opset, int64_t target_opset)
    : graph_(graph), source_(source_opset), target_(target_opset) {
  for (const auto& node : graph.nodes) {
    used_names_.insert(node.name);
    used_names_.insert(node.inputs.begin(), node.inputs.end());
    used_names_.insert(node.outputs.begin(), node.outputs.end());
  }
  for (const auto& [name, tensor] : graph.initializers) used_names_.insert(name);
  for (const auto& in : graph.inputs) used_names_.insert(in.name);
  for (const auto& out : graph.outputs) used_names_.insert(out.name);
}

void RewriteContext::emit(ir::Node node) { out_.push_back(std::move(node)); }

ir::Node& RewriteContext::emit(const std::string& op_type, const std::string& base, std::vector<std::string> inputs,
                               std::vector<std::string> outputs) {
  ir::Node node;
  node.name = fresh_name(base + "/" + op_type);
  node.op_type = op_type;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  out_.push_back(std::move(node));
  return out_.back();
}

std::string RewriteContext::fresh_name(const std::string& hint) {
  std::string name = hint;
  for (int k = 1; used_names_.count(name) != 0; ++k) name = hint + "_" + std::to_string(k);
  used_names_.insert(name);
  return name;
}

std::string RewriteContext::add_constant(const std::string& hint, Tensor value) {
  const std::string name = fresh_name(hint);
  graph_.initializers[name] = std::move(value);
  return name;
}

std::string RewriteContext::add_int64s(const std::string& hint, const std::vector<int64_t>& values) {
  return add_constant(hint, Tensor::from_int64s({static_cast<int64_t>(values.size())}, values));
}

Expected<std::string> RewriteContext::add_float_scalar(const std::string& hint, double value, DataType dtype) {
  if (dtype == DataType::kFloat32) return add_constant(hint, Tensor::from_floats({}, {static_cast<float>(value)}));
  if (dtype != DataType::kFloat64) {
    return make_error(StatusCode::kUnsupported, "cannot make a " + std::string(dtype_name(dtype)) + " constant");
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat64, {}));
  *t.data<double>() = value;
  return add_constant(hint, std::move(t));
}

const Tensor* RewriteContext::constant(const std::string& name) const {
  auto it = graph_.initializers.find(name);
  return it == graph_.initializers.end() ? nullptr : &it->second;
}

std::optional<std::vector<int64_t>> RewriteContext::constant_ints(const std::string& name) const {
  const Tensor* t = constant(name);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> values(static_cast<size_t>(t->element_count()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t->dtype() == DataType::kInt64)
      values[i] = t->data<int64_t>()[i];
    else if (t->dtype() == DataType::kInt32)
      values[i] = t->data<int32_t>()[i];
    else
      return std::nullopt;
  }
  return values;
}

std::optional<double> RewriteContext::constant_scalar(const std::string& name) const {
  const Tensor* t = constant(name);
  if (t == nullptr || t->element_count() != 1) return std::nullopt;
  if (t->dtype() == DataType::kFloat32) return *t->data<float>();
  if (t->dtype() == DataType::kFloat64) return *t->data<double>();
  return std::nullopt;
}

int64_t RewriteContext::rank(const std::string& name) const { return passes::known_rank(graph_, name); }

int64_t RewriteContext::dim(const std::string& name, int64_t axis) const {
  if (const Tensor* t = constant(name)) return axis < t->rank() ? t->shape()[axis] : -1;
  const ValueInfo* info = passes::value_info(graph_, name);
  if (info == nullptr || axis >= static_cast<int64_t>(info->shape.size())) return -1;
  const Dim& d = info->shape[axis];
  return d.is_static() ? d.value : -1;
}

DataType RewriteContext::dtype(const std::string& name) const {
  if (const Tensor* t = constant(name)) return t->dtype();
  const ValueInfo* info = passes::value_info(graph_, name);
  return info == nullptr ? DataType::kUndefined : info->dtype;
}

void RewriteContext::finish() { graph_.nodes = std::move(out_); }

ir::Attribute int_attribute(int64_t value) {
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kInt;
  attr.i = value;
  return attr;
}

ir::Attribute ints_attribute(std::vector<int64_t> values) {
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kInts;
  attr.ints = std::move(values);
  return attr;
}

ir::Attribute float_attribute(float value) {
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kFloat;
  attr.f = value;
  return attr;
}

ir::Attribute string_attribute(std::string value) {
  ir::Attribute attr;
  attr.kind = ir::Attribute::Kind::kString;
  attr.s = std::move(value);
  return attr;
}

Status cannot_convert(const ir::Node& node, int64_t target_opset, const std::string& message) {
  return ir::node_error(node, StatusCode::kUnsupported,
                        message + " (converting to opset " + std::to_string(target_opset) + ")");
}

Status make_axes_non_negative(const RewriteContext& ctx, ir::Node& node) {
  for (const char* key : {"axis", "axes"}) {
    auto it = node.attributes.find(key);
    if (it == node.attributes.end()) continue;
    ir::Attribute& attr = it->second;
    std::vector<int64_t*> values;
    if (attr.kind == ir::Attribute::Kind::kInt) values.push_back(&attr.i);
    for (int64_t& v : attr.ints) values.push_back(&v);
    int64_t rank = ctx.rank(node.inputs.empty() ? "" : node.inputs[0]);
    if (rank >= 0 && node.op_type == "Unsqueeze") rank += static_cast<int64_t>(attr.ints.size());
    for (int64_t* v : values) {
      if (*v >= 0) continue;
      if (rank < 0) {
        return cannot_convert(
            node, ctx.target_opset(),
            "negative '" + std::string(key) + "' needs the input's rank, which is unknown (try --fix-shape)");
      }
      *v += rank;
    }
  }
  return Status::ok();
}

}  // namespace edgemm::convert
