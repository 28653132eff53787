#include "common.h"

#include <array>
#include <bit>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace edgemm::python {
namespace {

/// The exception class of each StatusCode, indexed by its value (kOk's entry is the base class).
std::array<PyObject*, 7> g_errors{};

/// A new exception class edgemm.<name> with `bases` (a class or a tuple of classes).
PyObject* new_error(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = "edgemm." + std::string(name);
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

}  // namespace

void register_errors(py::module_& m) {
  PyObject* base = new_error(m, "Error", PyExc_RuntimeError,
                             "Base class of edgemm's errors; `code` names the category (edgemm/status.h).");
  auto with = [base](PyObject* builtin) { return py::make_tuple(py::handle(base), py::handle(builtin)); };
  g_errors[0] = base;
  g_errors[static_cast<int>(StatusCode::kInvalidArgument)] =
      new_error(m, "InvalidArgument", with(PyExc_ValueError).ptr(),
                "A bad value from the caller: input name, shape, dtype, option (also a ValueError).");
  g_errors[static_cast<int>(StatusCode::kInvalidModel)] =
      new_error(m, "InvalidModel", base, "A model file that is malformed, inconsistent or fails the ONNX checker.");
  g_errors[static_cast<int>(StatusCode::kUnsupported)] =
      new_error(m, "Unsupported", with(PyExc_NotImplementedError).ptr(),
                "Valid ONNX that edgemm does not implement: op, attribute, dtype (also a NotImplementedError).");
  g_errors[static_cast<int>(StatusCode::kOutOfMemory)] =
      new_error(m, "OutOfMemory", with(PyExc_MemoryError).ptr(),
                "An allocation was refused or a size exceeds the limit (also a MemoryError).");
  g_errors[static_cast<int>(StatusCode::kIo)] =
      new_error(m, "IoError", base, "A file could not be read or written (missing file, missing external data).");
  g_errors[static_cast<int>(StatusCode::kInternal)] = new_error(m, "InternalError", base, "A bug in edgemm.");
}

void throw_status(const Status& status) {
  const int code = static_cast<int>(status.code());
  PyObject* cls = code > 0 && code < static_cast<int>(g_errors.size()) ? g_errors[code] : g_errors[0];
  py::object error = py::reinterpret_borrow<py::object>(cls)(status.message());
  error.attr("code") = status_code_name(status.code());
  PyErr_SetObject(cls, error.ptr());
  throw py::error_already_set();
}

namespace {

/// The edgemm dtype of a numpy dtype; kUndefined when edgemm has none.
DataType dtype_of(const py::dtype& d) {
  if (d.kind() == 'O' || d.kind() == 'U' || d.kind() == 'S' || d.kind() == 'V') {
    return DataType::kUndefined;
  }
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'f') {
    if (size == 2) return DataType::kFloat16;
    if (size == 4) return DataType::kFloat32;
    if (size == 8) return DataType::kFloat64;
  } else if (kind == 'i') {
    if (size == 1) return DataType::kInt8;
    if (size == 2) return DataType::kInt16;
    if (size == 4) return DataType::kInt32;
    if (size == 8) return DataType::kInt64;
  } else if (kind == 'u') {
    if (size == 1) return DataType::kUInt8;
    if (size == 2) return DataType::kUInt16;
    if (size == 4) return DataType::kUInt32;
    if (size == 8) return DataType::kUInt64;
  } else if (kind == 'b') {
    return DataType::kBool;
  }
  return DataType::kUndefined;
}

/// The numpy dtype of an edgemm dtype (bfloat16 has none: callers convert it).
py::dtype numpy_dtype(DataType d) {
  switch (d) {
    case DataType::kFloat32:
      return py::dtype::of<float>();
    case DataType::kFloat64:
      return py::dtype::of<double>();
    case DataType::kFloat16:
      return py::dtype("float16");
    case DataType::kInt8:
      return py::dtype::of<int8_t>();
    case DataType::kInt16:
      return py::dtype::of<int16_t>();
    case DataType::kInt32:
      return py::dtype::of<int32_t>();
    case DataType::kInt64:
      return py::dtype::of<int64_t>();
    case DataType::kUInt8:
      return py::dtype::of<uint8_t>();
    case DataType::kUInt16:
      return py::dtype::of<uint16_t>();
    case DataType::kUInt32:
      return py::dtype::of<uint32_t>();
    case DataType::kUInt64:
      return py::dtype::of<uint64_t>();
    case DataType::kBool:
      return py::dtype::of<bool>();
    default:
      break;
  }
  throw_status(make_error(StatusCode::kUnsupported,
                          std::string("edgemm cannot return a ") + dtype_name(d) + " tensor as a numpy array"));
}

bool native_order(const py::dtype& d) {
  const char order = d.byteorder();
  return order == '=' || order == '|' || (order == '<') == (std::endian::native == std::endian::little);
}

/// True when [p, p + bytes) lies inside `input`'s buffer.
bool inside(const void* p, size_t bytes, const InputTensor& input) {
  const auto* begin = static_cast<const char*>(input.tensor.raw_data());
  const auto* q = static_cast<const char*>(p);
  return begin != nullptr && q >= begin && q + bytes <= begin + input.tensor.byte_size() && bytes > 0;
}

/// A file decoded with its alpha channel kept (decode_image), as CLIP and the VLM read files.
Expected<Image> decode_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) {
    return make_error(StatusCode::kIo, "cannot read image file '" + path + "'");
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "image file '" + path + "'", true);
}

}  // namespace

InputTensor to_tensor(const py::handle& value, const std::string& what) {
  if (py::isinstance<py::array>(value) == false) {
    if (py::isinstance(value, py::module_::import("numpy").attr("generic"))) {
      return to_tensor(py::module_::import("numpy").attr("asarray")(value), what);
    }
    throw_status(make_error(StatusCode::kInvalidArgument, what + " must be a numpy array, got " +
                                                              std::string(py::str(value.get_type().attr("__name__")))));
  }
  py::array array = py::reinterpret_borrow<py::array>(value);
  const py::dtype d = array.dtype();
  const DataType dtype = dtype_of(d);
  if (dtype == DataType::kUndefined) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " has numpy dtype " + d.attr("name").cast<std::string>() +
                                ", which is not a tensor type (float16/32/64, int8-64, uint8-64, bool)"));
  }
  if (!native_order(d)) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " is in non-native byte order (" + d.attr("str").cast<std::string>() +
                                "): convert it with .astype(numpy." + d.attr("name").cast<std::string>() + ")"));
  }
  if ((array.flags() & py::array::c_style) == 0) {
    throw_status(
        make_error(StatusCode::kInvalidArgument, what + " is not C-contiguous (a transposed or strided view); pass "
                                                        "numpy.ascontiguousarray(x)"));
  }
  Shape shape(array.shape(), array.shape() + array.ndim());
  if ((array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) == 0) {
    array = py::array(d, array.request().shape, array.request().strides, array.data()).attr("copy")();
  }
  void* data = const_cast<void*>(array.data());
  return InputTensor{array, Tensor::borrow(dtype, std::move(shape), data)};
}

py::array to_array(const Tensor& tensor, const std::vector<InputTensor>& borrowed) {
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.dtype() == DataType::kBFloat16) {
    py::array_t<float> out(shape);
    const auto* bits = tensor.data<uint16_t>();
    float* dst = out.mutable_data();
    for (int64_t i = 0; i < tensor.element_count(); ++i) dst[i] = bfloat16_to_float(bits[i]);
    return out;
  }
  const py::dtype d = numpy_dtype(tensor.dtype());
  for (const InputTensor& input : borrowed) {
    if (inside(tensor.raw_data(), tensor.byte_size(), input)) {
      return py::array(d, shape, tensor.raw_data()).attr("copy")();  // owns its copy
    }
  }
  // The capsule holds a Tensor sharing the buffer; the array frees it when it dies.
  auto* owner = new Tensor(tensor);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(d, shape, tensor.raw_data(), base);
}

bool is_path(const py::handle& value) { return py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__"); }

std::string path_string(const py::handle& value) {
  const py::object path = py::module_::import("os").attr("fspath")(value);
  if (!py::isinstance<py::str>(path)) throw py::type_error("a path must be a str, not bytes");
  const std::string text = option_cast<std::string>(path, "the path", "valid UTF-8 text");
  if (text.find('\0') != std::string::npos) throw py::value_error("the path has an embedded null byte: " + text);
  return text;
}

bool set_runtime_option(RuntimeOptions& options, const std::string& name, const py::handle& value) {
  if (name == "threads") {
    options.threads = option_cast<int>(value, name, "int");
  } else if (name == "optimize") {
    options.optimize = option_cast<bool>(value, name, "bool");
  } else if (name == "backend") {
    options.backend = option_cast<std::string>(value, name, "str");
  } else if (name == "plugin_path") {
    options.plugin_path = path_string(value);
  } else if (name == "device") {
    options.device = option_cast<std::string>(value, name, "str");
  } else if (name == "precision") {
    options.precision = option_cast<std::string>(value, name, "str");
  } else {
    return false;
  }
  return true;
}

ChannelOrder parse_order(const std::string& order) {
  if (order == "bgr" || order == "BGR") return ChannelOrder::kBgr;
  if (order == "rgb" || order == "RGB") return ChannelOrder::kRgb;
  throw_status(make_error(StatusCode::kInvalidArgument, "order must be \"bgr\" or \"rgb\", got \"" + order + "\""));
}

ImageArg to_image(const py::handle& value, const std::string& order, bool keep_alpha, const std::string& what) {
  ImageArg arg;
  const ChannelOrder channel_order = parse_order(order);
  if (py::isinstance<py::bytes>(value) || py::isinstance<py::bytearray>(value) ||
      py::isinstance(value, py::module_::import("builtins").attr("memoryview"))) {
    const std::string bytes = py::module_::import("builtins").attr("bytes")(value).cast<std::string>();
    Expected<Image> decoded = make_error(StatusCode::kInternal, "not decoded");
    {
      py::gil_scoped_release release;
      decoded = decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), what, keep_alpha);
    }
    arg.decoded = take(std::move(decoded));
    arg.view = arg.decoded->view();
    return arg;
  }
  if (is_path(value)) {
    const std::string path = path_string(value);
    Expected<Image> decoded = make_error(StatusCode::kInternal, "not decoded");
    {
      py::gil_scoped_release release;
      decoded = keep_alpha ? decode_file(path) : read_image(path);
    }
    arg.decoded = take(std::move(decoded));
    arg.view = arg.decoded->view();
    return arg;
  }
  if (!py::isinstance<py::array>(value)) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " must be a path, encoded image bytes or a uint8 numpy array, got " +
                                std::string(py::str(value.get_type().attr("__name__")))));
  }
  arg.array = py::reinterpret_borrow<py::array>(value);
  const py::array& a = arg.array;
  if (!a.dtype().is(py::dtype::of<uint8_t>())) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " must be a uint8 array, got dtype " + a.dtype().attr("name").cast<std::string>()));
  }
  if (a.ndim() != 2 && a.ndim() != 3) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " must be H×W or H×W×C, got " + std::to_string(a.ndim()) + " dimensions"));
  }
  if (a.shape(0) == 0 || a.shape(1) == 0) {
    throw_status(make_error(StatusCode::kInvalidArgument, what + " is empty (" + std::to_string(a.shape(0)) + "×" +
                                                              std::to_string(a.shape(1)) + " pixels)"));
  }
  const int channels = a.ndim() == 2 ? 1 : static_cast<int>(a.shape(2));
  if (a.ndim() == 3 && (a.strides(2) != 1 || a.strides(1) != channels)) {
    throw_status(
        make_error(StatusCode::kInvalidArgument,
                   what + " must have contiguous pixels (strides [row, C, 1]); pass numpy.ascontiguousarray(image)"));
  }
  if (a.ndim() == 2 && a.strides(1) != 1) {
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " must have contiguous pixels; pass numpy.ascontiguousarray(image)"));
  }
  if (a.shape(0) > (1 << 28) || a.shape(1) > (1 << 28)) {
    throw_status(make_error(StatusCode::kInvalidArgument, what + " is larger than 2^28 pixels a side"));
  }
  if (a.strides(0) < a.shape(1) * channels) {  // flipped (negative), broadcast (0) or overlapping rows
    throw_status(make_error(StatusCode::kInvalidArgument,
                            what + " has a row stride of " + std::to_string(a.strides(0)) + " bytes for rows of " +
                                std::to_string(a.shape(1) * channels) +
                                " (a flipped, broadcast or overlapping view); pass numpy.ascontiguousarray(image)"));
  }
  arg.view.data = static_cast<const uint8_t*>(a.data());
  arg.view.height = static_cast<int>(a.shape(0));
  arg.view.width = static_cast<int>(a.shape(1));
  arg.view.channels = channels;
  arg.view.row_bytes = a.strides(0);
  arg.view.order = channel_order;
  return arg;
}

}  // namespace edgemm::python
