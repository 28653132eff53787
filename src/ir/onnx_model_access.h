#pragma once
/// \file onnx_model_access.h
/// The contents of an edgemm::OnnxModel (edgemm/onnx_model.h) for the tool-side libraries: the
/// public functions of edgemm/tools/*.h take an OnnxModel and run the internal ones on its
/// ir::Model. Not installed; never included by programs outside src/.

#include <memory>
#include <utility>

#include "edgemm/onnx_model.h"
#include "ir/graph.h"

namespace edgemm {

struct OnnxModel::Impl {
  ir::Model model;
};

namespace ir {

/// The model inside `handle`.
inline Model& model_of(OnnxModel& handle) { return handle.impl().model; }
inline const Model& model_of(const OnnxModel& handle) { return handle.impl().model; }

/// A handle owning `model`.
inline OnnxModel wrap_model(Model model) {
  return OnnxModel(std::make_unique<OnnxModel::Impl>(OnnxModel::Impl{std::move(model)}));
}

}  // namespace ir
}  // namespace edgemm
