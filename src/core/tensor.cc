#include "edgemm/tensor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace edgemm {

size_t dtype_size(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUInt32:
      return 4;
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kBool:
      return 1;
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt64:
    case DataType::kFloat64:
    case DataType::kUInt64:
      return 8;
    case DataType::kUndefined:
    case DataType::kString:
      return 0;
  }
  return 0;
}

const char* dtype_name(DataType dtype) {
  switch (dtype) {
    case DataType::kUndefined:
      return "undefined";
    case DataType::kFloat32:
      return "float32";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kInt8:
      return "int8";
    case DataType::kUInt16:
      return "uint16";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kString:
      return "string";
    case DataType::kBool:
      return "bool";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat64:
      return "float64";
    case DataType::kUInt32:
      return "uint32";
    case DataType::kUInt64:
      return "uint64";
    case DataType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

bool dtype_supported(DataType dtype) { return dtype_size(dtype) != 0; }

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Expected<int64_t> shape_element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return make_error(StatusCode::kInvalidArgument, "shape " + shape_to_string(shape) + " has a negative extent");
    }
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      return make_error(StatusCode::kOutOfMemory,
                        "shape " + shape_to_string(shape) + " has more elements than int64 can count");
    }
    count *= d;
  }
  return count;
}

Expected<Tensor> Tensor::create(DataType dtype, Shape shape) {
  if (!dtype_supported(dtype)) {
    return make_error(StatusCode::kInvalidArgument,
                      std::string("tensors of dtype ") + dtype_name(dtype) + " are not supported");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t count, shape_element_count(shape));
  const int64_t elem = static_cast<int64_t>(dtype_size(dtype));
  if (count > kMaxTensorBytes / elem) {
    return make_error(StatusCode::kOutOfMemory, "a " + std::string(dtype_name(dtype)) + " tensor of shape " +
                                                    shape_to_string(shape) + " would need more than the " +
                                                    std::to_string(kMaxTensorBytes >> 30) +
                                                    " GiB limit per tensor; refused before allocating");
  }
  size_t bytes = static_cast<size_t>(count * elem);
  size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    return make_error(StatusCode::kOutOfMemory, "could not allocate " + std::to_string(bytes) +
                                                    " bytes for a tensor of shape " + shape_to_string(shape));
  }
  std::memset(p, 0, rounded == 0 ? 64 : rounded);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.element_count_ = count;
  t.storage_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  t.data_ = p;
  return t;
}

Tensor Tensor::borrow(DataType dtype, Shape shape, void* data) {
  return from_storage(dtype, std::move(shape), nullptr, data);
}

Tensor Tensor::from_storage(DataType dtype, Shape shape, std::shared_ptr<void> storage, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  auto count = shape_element_count(shape);
  t.element_count_ = count.has_value() ? *count : 0;
  t.shape_ = std::move(shape);
  t.storage_ = std::move(storage);
  t.data_ = data;
  return t;
}

Tensor Tensor::from_floats(Shape shape, const std::vector<float>& values) {
  Tensor t = std::move(create(DataType::kFloat32, std::move(shape)).value());
  const size_t bytes = std::min(values.size() * 4, t.byte_size());
  if (bytes > 0) std::memcpy(t.data_, values.data(), bytes);
  return t;
}

Tensor Tensor::from_int64s(Shape shape, const std::vector<int64_t>& values) {
  Tensor t = std::move(create(DataType::kInt64, std::move(shape)).value());
  const size_t bytes = std::min(values.size() * 8, t.byte_size());
  if (bytes > 0) std::memcpy(t.data_, values.data(), bytes);
  return t;
}

int64_t Tensor::dim(int64_t axis) const {
  if (axis < 0) axis += rank();
  return shape_.at(static_cast<size_t>(axis));
}

Expected<Tensor> Tensor::clone() const {
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, create(dtype_, shape_));
  if (byte_size() > 0) std::memcpy(t.data_, data_, byte_size());
  return t;
}

Expected<Tensor> Tensor::reshaped(Shape shape) const {
  EDGEMM_ASSIGN_OR_RETURN(int64_t count, shape_element_count(shape));
  if (count != element_count_) {
    return make_error(StatusCode::kInvalidArgument, "cannot reshape " + shape_to_string(shape_) + " to " +
                                                        shape_to_string(shape) + ": element counts differ");
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 | ((abs >> 13) & 0x3ff) : 0));
  }
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to inf
  if (abs < 0x38800000) {                                              // subnormal or zero in half
    if (abs < 0x33000000) return static_cast<uint16_t>(sign);
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exp;  // 14 - (exp - 127) + 13 - 13 ... half subnormal = mant >> (shift)
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t mant = abs & 0x7fffff;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

void Tensor::element_type_mismatch(DataType dtype, const char* type) {
  std::fprintf(stderr, "edgemm: Tensor::data<T>() with T = %s on a %s tensor (tensor.h lists the matching types)\n",
               type, dtype_name(dtype));
  std::abort();
}

}  // namespace edgemm
