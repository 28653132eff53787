#pragma once
/// \file copy_util.h
/// Helpers for the tensor-manipulation kernels (shape, transpose, concat/split, slice,
/// gather/scatter, pad/tile/expand, generate, trilu/cumsum, nonzero/unique): dtype-agnostic
/// strided copies (the element size is all they need), dtype dispatch, scalar conversion,
/// index reading with range errors, and validation of output sizes computed from data.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// Factory for kernels whose behaviour depends on the model opset (attributes that became
/// inputs, new attributes): `fn(KernelContext&, int64_t opset) -> Status`.
template <typename Fn>
KernelFactory versioned_kernel(Fn fn, const char* name = "reference") {
  struct Impl : Kernel {
    Fn fn;
    int64_t opset;
    const char* kernel_name;
    Impl(Fn f, int64_t o, const char* n) : fn(std::move(f)), opset(o), kernel_name(n) {}
    Status run(KernelContext& ctx) const override { return fn(ctx, opset); }
    const char* name() const override { return kernel_name; }
  };
  return [fn, name](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<Impl>(fn, info.opset, name));
  };
}

/// Calls `fn.template operator()<U>()` with U the unsigned integer type of `size` bytes
/// (1, 2, 4 or 8: every dtype a Tensor holds). Copying through U preserves all bit patterns.
template <typename Fn>
void dispatch_by_size(size_t size, Fn&& fn) {
  switch (size) {
    case 1:
      fn.template operator()<uint8_t>();
      break;
    case 2:
      fn.template operator()<uint16_t>();
      break;
    case 4:
      fn.template operator()<uint32_t>();
      break;
    default:
      fn.template operator()<uint64_t>();
      break;
  }
}

/// Storage tags for the 16-bit float types in numeric dispatch (Tensor::data<Half>() is checked
/// against kDataType).
struct Half {
  static constexpr DataType kDataType = DataType::kFloat16;
  uint16_t bits;
};
struct BFloat16 {
  static constexpr DataType kDataType = DataType::kBFloat16;
  uint16_t bits;
};

/// Arithmetic view of a storage type: `Compute` is what sums and products run in.
template <typename T>
struct NumTraits {
  using Compute = T;
  static Compute load(T v) { return v; }
  static T store(Compute v) { return static_cast<T>(v); }
};
template <>
struct NumTraits<Half> {
  using Compute = float;
  static float load(Half v) { return half_to_float(v.bits); }
  static Half store(float v) { return Half{float_to_half(v)}; }
};
template <>
struct NumTraits<BFloat16> {
  using Compute = float;
  static float load(BFloat16 v) { return bfloat16_to_float(v.bits); }
  static BFloat16 store(float v) { return BFloat16{float_to_bfloat16(v)}; }
};
template <>
struct NumTraits<bool> {
  using Compute = bool;
  static bool load(bool v) { return v; }
  static bool store(bool v) { return v; }
};

/// Calls `fn.template operator()<T>()` with the storage type of a numeric dtype (float,
/// double, int8..int64, uint8..uint64, Half, BFloat16; bool when `with_bool`). Returns false
/// (without calling) for other dtypes.
template <typename Fn>
bool dispatch_numeric(DataType dtype, Fn&& fn, bool with_bool = false) {
  switch (dtype) {
    case DataType::kFloat32:
      fn.template operator()<float>();
      return true;
    case DataType::kFloat64:
      fn.template operator()<double>();
      return true;
    case DataType::kInt8:
      fn.template operator()<int8_t>();
      return true;
    case DataType::kInt16:
      fn.template operator()<int16_t>();
      return true;
    case DataType::kInt32:
      fn.template operator()<int32_t>();
      return true;
    case DataType::kInt64:
      fn.template operator()<int64_t>();
      return true;
    case DataType::kUInt8:
      fn.template operator()<uint8_t>();
      return true;
    case DataType::kUInt16:
      fn.template operator()<uint16_t>();
      return true;
    case DataType::kUInt32:
      fn.template operator()<uint32_t>();
      return true;
    case DataType::kUInt64:
      fn.template operator()<uint64_t>();
      return true;
    case DataType::kFloat16:
      fn.template operator()<Half>();
      return true;
    case DataType::kBFloat16:
      fn.template operator()<BFloat16>();
      return true;
    case DataType::kBool:
      if (!with_bool) return false;
      fn.template operator()<bool>();
      return true;
    default:
      return false;
  }
}

/// Element `i` of a numeric or bool buffer of `dtype`, as double.
double load_as_double(DataType dtype, const void* data, int64_t i);
/// Element `i` as int64 (floating values truncate toward zero, saturating; NaN gives 0).
int64_t load_as_int64(DataType dtype, const void* data, int64_t i);
/// Stores `v` into element `i` of a numeric or bool buffer, converting with saturation for
/// integers (NaN becomes 0) and rounding to nearest for float16/bfloat16.
void store_from_double(DataType dtype, void* data, int64_t i, double v);
/// True for dtypes load_as_double/store_from_double handle (numeric and bool).
bool is_numeric_or_bool(DataType dtype);

/// Read-only view of an index tensor (int32 or int64).
class IndexView {
 public:
  IndexView() = default;
  explicit IndexView(const Tensor& t) : data_(t.raw_data()), is64_(t.dtype() == DataType::kInt64) {}
  int64_t operator[](int64_t i) const {
    return is64_ ? static_cast<const int64_t*>(data_)[i] : static_cast<const int32_t*>(data_)[i];
  }

 private:
  const void* data_ = nullptr;
  bool is64_ = true;
};

/// The node's name for input `i`, or "" when absent; used in messages.
std::string input_value_name(const ir::Node& node, int i);

/// Input `i`, or an InvalidModel error "input 'what' (#i) is required" naming the node.
Expected<const Tensor*> required_input(const KernelContext& ctx, int i, const char* what);

/// InvalidArgument unless `t` is int32 or int64: "input 'what' must be int32 or int64, got ...".
Status check_index_dtype(const ir::Node& node, const Tensor& t, const char* what);

/// "<Op> '<name>': index 7 is out of range for axis 0 of size 5 (input 'indices')".
Status index_out_of_range(const ir::Node& node, int64_t value, int64_t axis, int64_t size,
                          const char* what);

/// Wraps a negative index into [0, size); returns false when it is outside [-size, size).
inline bool wrap_index(int64_t& index, int64_t size) {
  if (index < 0) index += size;
  return index >= 0 && index < size;
}

/// Validates an output shape computed from data before allocating: a negative extent is
/// InvalidArgument ("<what> has negative extent -3 at axis 1"); an element count or byte size
/// that overflows int64 or exceeds kMaxTensorBytes is OutOfMemory. Names the node.
Status check_output_shape(const ir::Node& node, const Shape& shape, DataType dtype,
                          const std::string& what);

/// Reads a 1-D (or scalar) int64/int32 tensor that holds a shape, sizes or axes.
Expected<std::vector<int64_t>> read_int_list(const ir::Node& node, const Tensor& t,
                                             const char* what);

/// Multi-dimensional strided copy (dtype-agnostic):
///   dst[sum_k i_k * dst_strides[k]] = src[sum_k i_k * src_strides[k]] for all i < shape.
/// Strides are in elements; source strides may be 0 (broadcast) or negative (reversal).
/// Merges compatible axes, copies contiguous runs with memcpy, transposes moved inner
/// axes in cache tiles, and splits large copies across `threads` OpenMP threads.
void strided_copy(void* dst, const std::vector<int64_t>& dst_strides, const void* src,
                  const std::vector<int64_t>& src_strides, const Shape& shape, size_t elem_size,
                  int threads);

/// Fills `count` elements of `elem_size` bytes with copies of the element at `value`.
void fill_elements(void* dst, int64_t count, size_t elem_size, const void* value);

/// memcpy that tolerates null pointers when `bytes` is 0 (empty tensors have no buffer).
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

/// Copies a whole tensor's bytes into an allocated output of the same byte size.
inline void copy_tensor_bytes(Tensor& dst, const Tensor& src) {
  copy_bytes(dst.raw_data(), src.raw_data(), src.byte_size());
}

}  // namespace edgemm::kernels
