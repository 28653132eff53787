#pragma once
/// \file bindings.h
/// The parts of the module `edgemm._edgemm`, one function per file, called by module.cc.

#include <pybind11/pybind11.h>

namespace edgemm::python {

void bind_session(pybind11::module_& m);  ///< session.cc: _Session
void bind_ocr(pybind11::module_& m);      ///< ocr.cc: OcrPipeline
void bind_clip(pybind11::module_& m);     ///< clip.cc: ClipModel
void bind_vlm(pybind11::module_& m);      ///< vlm.cc: VlmModel and its token stream
void bind_tools(pybind11::module_& m);    ///< tools.cc: quantize, convert

}  // namespace edgemm::python
