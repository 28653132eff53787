#pragma once
/// \file tensor.h
/// `Tensor`: a dense, row-major (C order) n-dimensional array with a dtype, a shape and an
/// owning or borrowed buffer. Layout is whatever the producing op defines (NCHW for ONNX
/// vision ops). Element types follow ONNX TensorProto.DataType (onnx.proto, "DataType").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "edgemm/status.h"

namespace edgemm {

/// Element types; numeric values equal ONNX TensorProto.DataType so they convert 1:1.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  ///< not supported by Tensor; named so errors can say so
  kBool = 9,    ///< one byte per element, 0 or 1
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Size in bytes of one element; 0 for kUndefined and kString.
size_t dtype_size(DataType dtype);
/// ONNX-style lower-case name ("float32", "int64", "float16", ...).
const char* dtype_name(DataType dtype);
/// True for every dtype a Tensor can hold (all above except kUndefined and kString).
bool dtype_supported(DataType dtype);

/// Shape of a tensor: one non-negative extent per axis; rank 0 is a scalar.
using Shape = std::vector<int64_t>;

/// "[1,3,640,640]".
std::string shape_to_string(const Shape& shape);

/// Product of the extents. Errors: kInvalidArgument when an extent is negative, kOutOfMemory
/// when the product overflows int64.
Expected<int64_t> shape_element_count(const Shape& shape);

/// Upper bound on one tensor's size, in bytes, checked before any allocation
/// (default 16 GiB; larger requests are refused with kOutOfMemory, never attempted).
inline constexpr int64_t kMaxTensorBytes = int64_t{16} << 30;

/// A typed n-d array. Copying a Tensor shares its buffer (shallow, like a shared_ptr);
/// use clone() for a deep copy. An owning tensor keeps its buffer alive through a
/// shared_ptr; a borrowed tensor points at caller memory that must outlive it.
/// Thread safety: distinct Tensors may be used concurrently; writing one buffer from two
/// threads is a data race as with any array.
class Tensor {
 public:
  /// Empty tensor: kUndefined dtype, no data.
  Tensor() = default;

  /// Allocates an owning, zero-initialised tensor (64-byte aligned).
  /// Errors: kInvalidArgument for an unsupported dtype or negative extent; kOutOfMemory when
  /// the byte size overflows or exceeds kMaxTensorBytes, or allocation fails.
  static Expected<Tensor> create(DataType dtype, Shape shape);

  /// Wraps caller memory without copying; `data` must hold element_count × dtype_size bytes
  /// and outlive the tensor and its copies.
  static Tensor borrow(DataType dtype, Shape shape, void* data);

  /// Shares `storage` (any owner) as the buffer; `data` points inside it.
  static Tensor from_storage(DataType dtype, Shape shape, std::shared_ptr<void> storage,
                             void* data);

  /// Owning scalar/vector helpers for tests and examples.
  static Tensor from_floats(Shape shape, const std::vector<float>& values);
  static Tensor from_int64s(Shape shape, const std::vector<int64_t>& values);

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Extent of `axis`; negative axes count from the end.
  int64_t dim(int64_t axis) const;
  /// Number of elements (1 for a scalar). The shape was validated at creation.
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return static_cast<size_t>(element_count_) * dtype_size(dtype_); }
  bool defined() const { return dtype_ != DataType::kUndefined; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  /// The elements as T. T must match the dtype: float (kFloat32), double (kFloat64), bool
  /// (kBool), int8_t, int16_t, int32_t, int64_t (kInt*); an unsigned integer (uint8_t, uint16_t,
  /// uint32_t, uint64_t) matches its kUInt* and, as the elements' bits, any dtype of its width
  /// (kFloat16 / kBFloat16 as uint16_t; kernels that move elements without reading them); char /
  /// std::byte give the bytes of any dtype; a type that declares `static constexpr DataType
  /// kDataType` (a kernel's storage type for float16 bits) matches that dtype; raw_data() for
  /// untyped access. An undefined
  /// tensor gives nullptr for any T. Debug builds (no NDEBUG) and sanitizer builds
  /// (EDGEMM_CHECK_DTYPES) abort with a message naming both types on a mismatch; release builds
  /// do not check.
  template <typename T>
  T* data() {
    check_element_type<T>();
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    check_element_type<T>();
    return static_cast<const T*>(data_);
  }

  /// Deep copy into a new owning tensor.
  Expected<Tensor> clone() const;
  /// Same buffer, new shape with the same element count (no copy).
  Expected<Tensor> reshaped(Shape shape) const;

 private:
  template <typename T>
  void check_element_type() const {
#if !defined(NDEBUG) || defined(EDGEMM_CHECK_DTYPES)
    if (dtype_ != DataType::kUndefined && !element_type_matches<std::remove_cv_t<T>>(dtype_)) {
      element_type_mismatch(dtype_, element_type_name<std::remove_cv_t<T>>());
    }
#endif
  }
  template <typename T>
  static bool element_type_matches(DataType d) {
    if constexpr (std::is_same_v<T, char> || std::is_same_v<T, std::byte>)
      return true;
    else if constexpr (std::is_same_v<T, float>)
      return d == DataType::kFloat32;
    else if constexpr (std::is_same_v<T, double>)
      return d == DataType::kFloat64;
    else if constexpr (std::is_same_v<T, bool>)
      return d == DataType::kBool;
    else if constexpr (std::is_same_v<T, int8_t>)
      return d == DataType::kInt8;
    else if constexpr (std::is_same_v<T, int16_t>)
      return d == DataType::kInt16;
    else if constexpr (std::is_same_v<T, int32_t>)
      return d == DataType::kInt32;
    else if constexpr (std::is_same_v<T, int64_t>)
      return d == DataType::kInt64;
    else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> ||
                       std::is_same_v<T, uint64_t>)
      return dtype_size(d) == sizeof(T);
    else if constexpr (requires { T::kDataType; })
      return d == T::kDataType;
    else
      return false;
  }
  template <typename T>
  static constexpr const char* element_type_name() {
    if constexpr (std::is_same_v<T, float>)
      return "float";
    else if constexpr (std::is_same_v<T, double>)
      return "double";
    else if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_same_v<T, uint8_t>)
      return "uint8_t";
    else if constexpr (std::is_same_v<T, int8_t>)
      return "int8_t";
    else if constexpr (std::is_same_v<T, uint16_t>)
      return "uint16_t";
    else if constexpr (std::is_same_v<T, int16_t>)
      return "int16_t";
    else if constexpr (std::is_same_v<T, int32_t>)
      return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>)
      return "uint32_t";
    else if constexpr (std::is_same_v<T, int64_t>)
      return "int64_t";
    else if constexpr (std::is_same_v<T, uint64_t>)
      return "uint64_t";
    else
      return "an unsupported element type";
  }
  /// Prints "Tensor::data<T>() with T = <type> on a <dtype> tensor" to stderr and aborts.
  static void element_type_mismatch(DataType dtype, const char* type);

  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t element_count_ = 0;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

/// IEEE binary16 <-> binary32 conversions (round to nearest even), used by Cast and fp16
/// weight storage.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
/// bfloat16 <-> binary32 (round to nearest even).
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

}  // namespace edgemm
