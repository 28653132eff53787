/// \file onnx_model.cc
/// edgemm::OnnxModel (edgemm/onnx_model.h) over ir::Model, ONNX import and export.

#include "edgemm/onnx_model.h"

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "ir/onnx_model_access.h"

namespace edgemm {

Expected<OnnxModel> OnnxModel::load(const std::string& path, const OnnxLoadOptions& options) {
  EDGEMM_ASSIGN_OR_RETURN(ir::Model model, ir::import_onnx_file(path, options));
  return ir::wrap_model(std::move(model));
}

Status OnnxModel::save(const std::string& path, const OnnxSaveOptions& options) const {
  return ir::export_onnx_file(impl_->model, path, options);
}

OnnxModel OnnxModel::clone() const { return ir::wrap_model(impl_->model); }

int64_t OnnxModel::ir_version() const { return impl_->model.ir_version; }

const std::string& OnnxModel::producer_name() const { return impl_->model.producer_name; }

int64_t OnnxModel::opset(const std::string& domain) const { return impl_->model.opset(domain); }

const std::map<std::string, int64_t>& OnnxModel::opsets() const { return impl_->model.opsets; }

const std::vector<ValueInfo>& OnnxModel::inputs() const { return impl_->model.graph.inputs; }

const std::vector<ValueInfo>& OnnxModel::outputs() const { return impl_->model.graph.outputs; }

size_t OnnxModel::node_count() const { return impl_->model.graph.nodes.size(); }

std::map<std::string, int> OnnxModel::op_histogram() const {
  std::map<std::string, int> histogram;
  for (const ir::Node& n : impl_->model.graph.nodes) ++histogram[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
  return histogram;
}

const std::vector<std::string>& OnnxModel::external_data_files() const { return impl_->model.external_data_files; }

OnnxModel::OnnxModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnnxModel::OnnxModel(OnnxModel&& other) noexcept = default;
OnnxModel& OnnxModel::operator=(OnnxModel&& other) noexcept = default;
OnnxModel::~OnnxModel() = default;

}  // namespace edgemm
