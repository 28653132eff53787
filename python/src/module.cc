/// The extension module `edgemm._edgemm`: edgemm's public C++ API for Python (docs/python.md).
/// The package `edgemm` (python/edgemm/) builds ONNX Runtime's API and the pipelines' Python
/// surface on it.

#include <pybind11/pybind11.h>

#include "bindings.h"
#include "common.h"

PYBIND11_MODULE(_edgemm, m) {
  m.doc() = "edgemm's C++ engine (use the package `edgemm`, not this module)";
  edgemm::python::register_errors(m);
  edgemm::python::bind_session(m);
  edgemm::python::bind_ocr(m);
  edgemm::python::bind_clip(m);
  edgemm::python::bind_vlm(m);
  edgemm::python::bind_tools(m);
}
