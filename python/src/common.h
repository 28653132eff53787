#pragma once
/// \file common.h
/// What every part of the Python module (`edgemm._edgemm`) shares: edgemm Status → Python
/// exception, numpy arrays ↔ edgemm Tensors (zero-copy where the layout allows), and image
/// arguments (a path, encoded bytes, or an H×W[×C] uint8 array) → ImageView.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgemm/image_view.h"
#include "edgemm/pipelines/image_file.h"
#include "edgemm/runtime_options.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::python {

namespace py = pybind11;

/// Creates the exception classes (edgemm.Error and one subclass per StatusCode) in `m`.
void register_errors(py::module_& m);

/// Raises the Python exception of `status` (edgemm.InvalidArgument, ...) with its message.
/// Never returns. `status` must be an error.
[[noreturn]] void throw_status(const Status& status);

/// The value of `result`, or raises its error.
template <typename T>
T take(Expected<T>&& result) {
  if (!result) throw_status(result.status());
  return std::move(result).value();
}

/// Raises when `status` is an error.
inline void check(const Status& status) {
  if (!status.is_ok()) throw_status(status);
}

/// A numpy array turned into a Tensor for one call. The Tensor borrows the array's memory when the
/// array is C-contiguous, aligned, of a dtype edgemm holds and in native byte order (see
/// to_tensor). `array` keeps the memory alive while `tensor` is used.
struct InputTensor {
  py::array array;
  Tensor tensor;
};

/// Wraps `value` (a numpy array or numpy scalar) as a Tensor without copying. Errors
/// (edgemm.InvalidArgument naming `what`): not a numpy array; a dtype that is not a tensor type
/// (object, string, structured, complex); non-native byte order; not C-contiguous. A misaligned
/// array (e.g. from np.frombuffer at an odd offset) is copied into an aligned one.
InputTensor to_tensor(const py::handle& value, const std::string& what);

/// A numpy array over `tensor`'s memory (no copy: the array keeps the tensor's buffer alive).
/// A bfloat16 tensor becomes float32 (exact). A tensor whose memory lies inside one of
/// `borrowed` (an input the caller still owns, returned as is by an Identity) is copied, so
/// that every returned array owns its memory.
py::array to_array(const Tensor& tensor, const std::vector<InputTensor>& borrowed = {});

/// An image argument of a pipeline call, decoded or viewed: `view` is valid while this lives.
struct ImageArg {
  std::optional<Image> decoded;  ///< set for paths and encoded bytes
  py::array array;               ///< set for numpy images
  ImageView view;
};

/// Reads an image argument: a str / os.PathLike path or encoded bytes (PNG, JPEG, ... decoded as
/// read_image() decodes files, or with `keep_alpha` as decode_image() with its alpha kept, which
/// CLIP and the VLM drop as they do reading a file), or a uint8 numpy array H×W (gray),
/// H×W×3 or H×W×4 in `order` ("bgr" or "rgb"). Must be called with the GIL held. Errors:
/// edgemm.InvalidArgument / IoError naming `what`.
ImageArg to_image(const py::handle& value, const std::string& order, bool keep_alpha, const std::string& what);

/// True for a str or os.PathLike argument.
bool is_path(const py::handle& value);
/// os.fspath(value) as UTF-8 (value a str or os.PathLike). Errors: TypeError for a bytes path,
/// ValueError for an embedded NUL (as open() refuses it) or text that is not UTF-8.
std::string path_string(const py::handle& value);

/// `value` as T for the keyword argument `name`. Errors: TypeError "NAME must be TYPE, got ...";
/// ValueError for an int out of T's range or a str that is not UTF-8 (lone surrogates).
template <typename T>
T option_cast(const py::handle& value, const std::string& name, const char* type) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    const std::string got = py::str(value.get_type().attr("__name__"));
    if constexpr (std::is_arithmetic_v<T>) {
      if (got == "int") throw py::value_error(name + " is out of range: " + std::string(py::str(value)));
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (got == "str") throw py::value_error(name + " is not valid UTF-8 text (a lone surrogate?)");
    }
    throw py::type_error(name + " must be " + type + ", got " + got);
  }
}

/// Sets a RuntimeOptions field (threads, optimize, backend, plugin_path, device, precision) from a
/// keyword argument; false when `name` is none of them. Errors: TypeError for a wrong value type.
bool set_runtime_option(RuntimeOptions& options, const std::string& name, const py::handle& value);

/// Parses "bgr" / "rgb". Errors: edgemm.InvalidArgument.
ChannelOrder parse_order(const std::string& order);

}  // namespace edgemm::python
