/// \file libonnx_view.cc
/// with_libonnx_view (libonnx_view.h).

#include "ir/libonnx_view.h"

#include <onnx/checker.h>

#include <utility>
#include <vector>

#include "ir/onnx_next_schemas.h"

namespace edgemm::ir {

namespace {

/// libonnx 1.12's IR version (onnx/common/constants: IR_VERSION of ONNX 1.12).
constexpr int64_t kLibOnnxIrVersion = 8;

/// Domain under which the ai.onnx ops of opsets 18–21 that edgemm has no schema for
/// (unregistered_op) pass the checker: it checks only ONNX's own domains against schemas, and
/// shape inference leaves their outputs unknown. They then load as ops without a kernel (a
/// clear Unsupported error at run time; inspect lists them). Any other op without a schema
/// fails the checker, as at opset 17.
constexpr const char* kUnregisteredDomain = "edgemm.ai.onnx.unregistered";

/// ONNX ops new in opsets 18–21 outside what edgemm runs (docs/opsets.md): image decoding and
/// string tensors.
bool unregistered_op(const std::string& op) {
  return op == "ImageDecoder" || op == "RegexFullMatch" || op == "StringConcat" || op == "StringSplit";
}

/// Files the nodes of `graph` (and its subgraphs) that have a kNextDomain schema at `opset`
/// under that domain, and the unregistered_op ones under kUnregisteredDomain, collecting them with
/// their original domain in `moved`.
void refile_nodes(onnx::GraphProto& graph, int64_t opset,
                  std::vector<std::pair<onnx::NodeProto*, std::string>>& moved) {
  for (auto& node : *graph.mutable_node()) {
    const bool onnx_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const int version = static_cast<int>(opset);
    if (onnx_domain && onnx::OpSchemaRegistry::Schema(node.op_type(), version, kNextDomain)) {
      moved.emplace_back(&node, node.domain());
      node.set_domain(kNextDomain);
    } else if (onnx_domain && unregistered_op(node.op_type())) {
      moved.emplace_back(&node, node.domain());
      node.set_domain(kUnregisteredDomain);
    }
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) refile_nodes(*attr.mutable_g(), opset, moved);
      for (auto& g : *attr.mutable_graphs()) refile_nodes(g, opset, moved);
    }
  }
}

}  // namespace

Status with_libonnx_view(onnx::ModelProto& proto,
                         const std::function<Status(const std::map<std::string, int64_t>& opsets)>& fn) {
  // Registered before any model is checked, whatever its opset: libonnx's registry is not safe to
  // read while another thread adds to it, and every reader comes through here first.
  register_onnx_next_schemas();
  std::map<std::string, int64_t> opsets;
  for (const auto& op : proto.opset_import()) opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  const auto it = opsets.find("");
  if (it == opsets.end() || it->second <= kLastLibOnnxOpset) return fn(opsets);

  std::vector<std::pair<onnx::NodeProto*, std::string>> moved;
  refile_nodes(*proto.mutable_graph(), it->second, moved);
  const int64_t ir_version = proto.ir_version();
  if (ir_version > kLibOnnxIrVersion) proto.set_ir_version(kLibOnnxIrVersion);
  auto* import = proto.add_opset_import();
  import->set_domain(kNextDomain);
  import->set_version(it->second);
  opsets[kNextDomain] = it->second;
  auto* unregistered = proto.add_opset_import();
  unregistered->set_domain(kUnregisteredDomain);
  unregistered->set_version(1);
  opsets[kUnregisteredDomain] = 1;

  const Status status = fn(opsets);

  proto.mutable_opset_import()->RemoveLast();
  proto.mutable_opset_import()->RemoveLast();
  proto.set_ir_version(ir_version);
  for (auto& [node, domain] : moved) node->set_domain(domain);
  return status;
}

Status run_onnx_checker(onnx::ModelProto& proto, const std::string& prefix) {
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (auto* list : {proto.mutable_graph()->mutable_input(), proto.mutable_graph()->mutable_output()}) {
    for (auto& vi : *list) {
      if (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape()) {
        shapeless.push_back(vi.mutable_type()->mutable_tensor_type());
        shapeless.back()->mutable_shape();
      }
    }
  }
  Status status = Status::ok();
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    status = Status(StatusCode::kInvalidModel, prefix + e.what());
  }
  for (auto* tensor_type : shapeless) tensor_type->clear_shape();
  return status;
}

}  // namespace edgemm::ir
