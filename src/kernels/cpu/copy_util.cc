#include "kernels/cpu/copy_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/common.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace edgemm::kernels {

namespace {

template <typename T>
T saturate_from_double(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v)) return T{0};
    // Compare in double against the type's range; the bounds are exact powers of two.
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

}  // namespace

bool is_numeric_or_bool(DataType dtype) {
  return dispatch_numeric(
      dtype, []<typename T>() {}, /*with_bool=*/true);
}

double load_as_double(DataType dtype, const void* data, int64_t i) {
  double out = 0;
  dispatch_numeric(
      dtype, [&]<typename T>() { out = static_cast<double>(NumTraits<T>::load(static_cast<const T*>(data)[i])); },
      true);
  return out;
}

int64_t load_as_int64(DataType dtype, const void* data, int64_t i) {
  if (dtype == DataType::kInt64) return static_cast<const int64_t*>(data)[i];
  if (dtype == DataType::kUInt64) {
    const uint64_t v = static_cast<const uint64_t*>(data)[i];
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(v);
  }
  return saturate_from_double<int64_t>(std::trunc(load_as_double(dtype, data, i)));
}

void store_from_double(DataType dtype, void* data, int64_t i, double v) {
  dispatch_numeric(
      dtype,
      [&]<typename T>() {
        T* p = static_cast<T*>(data) + i;
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          *p = NumTraits<T>::store(static_cast<float>(v));
        } else {
          *p = saturate_from_double<T>(v);
        }
      },
      true);
}

std::string input_value_name(const ir::Node& node, int i) {
  return i >= 0 && i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : std::string();
}

Expected<const Tensor*> required_input(const KernelContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || !t->defined()) {
    return ir::node_error(ctx.node(), StatusCode::kInvalidModel,
                          "required input '" + std::string(what) + "' (#" + std::to_string(i) + ") is missing");
  }
  return t;
}

Status check_index_dtype(const ir::Node& node, const Tensor& t, const char* what) {
  if (t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64) return Status::ok();
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "input '" + std::string(what) + "' must be int32 or int64, got " + dtype_name(t.dtype()));
}

Status index_out_of_range(const ir::Node& node, int64_t value, int64_t axis, int64_t size, const char* what) {
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        "index " + std::to_string(value) + " is out of range for axis " + std::to_string(axis) +
                            " of size " + std::to_string(size) + " (input '" + what + "')");
}

Status check_output_shape(const ir::Node& node, const Shape& shape, DataType dtype, const std::string& what) {
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          what + " has negative extent " + std::to_string(shape[k]) + " at axis " + std::to_string(k));
    }
  }
  int64_t count = 1;
  bool zero = false;
  for (int64_t d : shape) zero = zero || d == 0;
  if (zero) return Status::ok();
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(count, d, &count)) {
      return ir::node_error(node, StatusCode::kOutOfMemory,
                            what + " " + shape_to_string(shape) + " has more elements than int64 can count");
    }
  }
  int64_t bytes = 0;
  const auto elem = static_cast<int64_t>(std::max<size_t>(dtype_size(dtype), 1));
  if (__builtin_mul_overflow(count, elem, &bytes) || bytes > kMaxTensorBytes) {
    return ir::node_error(node, StatusCode::kOutOfMemory,
                          what + " " + shape_to_string(shape) + " of " + dtype_name(dtype) +
                              " exceeds the tensor size limit of " + std::to_string(kMaxTensorBytes) + " bytes");
  }
  return Status::ok();
}

Expected<std::vector<int64_t>> read_int_list(const ir::Node& node, const Tensor& t, const char* what) {
  EDGEMM_RETURN_IF_ERROR(check_index_dtype(node, t, what));
  if (t.rank() > 1) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input '" + std::string(what) + "' must be 1-D, got shape " + shape_to_string(t.shape()));
  }
  std::vector<int64_t> values(static_cast<size_t>(t.element_count()));
  IndexView view(t);
  for (size_t i = 0; i < values.size(); ++i) values[i] = view[static_cast<int64_t>(i)];
  return values;
}

void fill_elements(void* dst, int64_t count, size_t elem_size, const void* value) {
  if (count <= 0) return;
  dispatch_by_size(elem_size, [&]<typename U>() {
    U v;
    std::memcpy(&v, value, sizeof(U));
    std::fill_n(static_cast<U*>(dst), count, v);
  });
}

// ---------------------------------------------------------------------------------------------
// strided_copy

namespace {

struct Layout {
  std::vector<int64_t> n;  // extents
  std::vector<int64_t> d;  // destination strides
  std::vector<int64_t> s;  // source strides
  size_t rank() const { return n.size(); }
};

// Drops unit axes and merges an axis into its outer neighbour when both strides chain.
Layout simplify(const Shape& shape, const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& src_strides) {
  Layout l;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (!l.n.empty()) {
      const size_t p = l.n.size() - 1;
      if (l.d[p] == dst_strides[k] * shape[k] && l.s[p] == src_strides[k] * shape[k]) {
        l.n[p] *= shape[k];
        l.d[p] = dst_strides[k];
        l.s[p] = src_strides[k];
        continue;
      }
    }
    l.n.push_back(shape[k]);
    l.d.push_back(dst_strides[k]);
    l.s.push_back(src_strides[k]);
  }
  return l;
}

// Copies rows (all axes but the last) in [begin, end); each row is n.back() elements.
template <typename U>
void copy_rows(U* dst, const U* src, const Layout& l, int64_t begin, int64_t end) {
  const size_t r = l.rank();
  const int64_t len = l.n[r - 1], ds = l.d[r - 1], ss = l.s[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t doff = 0, soff = 0;
  int64_t rem = begin;
  for (size_t k = r - 1; k-- > 0;) {
    idx[k] = rem % l.n[k];
    rem /= l.n[k];
    doff += idx[k] * l.d[k];
    soff += idx[k] * l.s[k];
  }
  for (int64_t row = begin; row < end; ++row) {
    U* out = dst + doff;
    const U* in = src + soff;
    if (ds == 1 && ss == 1) {
      std::memcpy(out, in, static_cast<size_t>(len) * sizeof(U));
    } else if (ss == 0) {
      const U v = *in;
      for (int64_t i = 0; i < len; ++i) out[i * ds] = v;
    } else {
      for (int64_t i = 0; i < len; ++i) out[i * ds] = in[i * ss];
    }
    for (size_t k = r - 1; k-- > 0;) {
      doff += l.d[k];
      soff += l.s[k];
      if (++idx[k] < l.n[k]) break;
      doff -= l.d[k] * l.n[k];
      soff -= l.s[k] * l.n[k];
      idx[k] = 0;
    }
  }
}

#if defined(__aarch64__)
// out[a·dj + b] = in[a + b·sl] for a, b < 4: a 4×4 block of 32-bit values transposed in registers.
inline void transpose4x4(uint32_t* out, int64_t dj, const uint32_t* in, int64_t sl) {
  const uint32x4_t r0 = vld1q_u32(in), r1 = vld1q_u32(in + sl), r2 = vld1q_u32(in + 2 * sl),
                   r3 = vld1q_u32(in + 3 * sl);
  const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1)), t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
  const uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3)), t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
  vst1q_u32(out, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
  vst1q_u32(out + dj, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
  vst1q_u32(out + 2 * dj, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
  vst1q_u32(out + 3 * dj, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
}
#endif

// dst[a·dj + b·dl] = src[a·sj + b·sl] for a < na, b < nb. On aarch64, 32-bit values with
// sj == dl == 1 (a transpose) go in 4×4 register blocks where they fill one.
template <typename U>
void copy_block(U* dst, const U* src, int64_t dj, int64_t sj, int64_t dl, int64_t sl, int64_t na, int64_t nb) {
  int64_t a = 0;
#if defined(__aarch64__)
  if constexpr (sizeof(U) == 4) {
    if (sj == 1 && dl == 1) {
      for (; a + 4 <= na; a += 4) {
        int64_t b = 0;
        for (; b + 4 <= nb; b += 4) {
          transpose4x4(reinterpret_cast<uint32_t*>(dst + a * dj + b), dj,
                       reinterpret_cast<const uint32_t*>(src + a + b * sl), sl);
        }
        for (; b < nb; ++b) {
          for (int64_t q = a; q < a + 4; ++q) dst[q * dj + b] = src[q + b * sl];
        }
      }
    }
  }
#endif
  for (; a < na; ++a) {
    for (int64_t b = 0; b < nb; ++b) dst[a * dj + b * dl] = src[a * sj + b * sl];
  }
}

// Transposing copy: axis `j` is contiguous in the source, the last axis is contiguous in the
// destination. Works on kTile x kTile blocks of (j, last) so both sides stay in cache.
template <typename U>
void copy_tiled(U* dst, const U* src, const Layout& l, size_t j, int threads) {
  constexpr int64_t kTile = 32;
  const size_t r = l.rank();
  const size_t last = r - 1;
  std::vector<size_t> outer;
  for (size_t k = 0; k < last; ++k) {
    if (k != j) outer.push_back(k);
  }
  int64_t outer_count = 1;
  for (size_t k : outer) outer_count *= l.n[k];
  const int64_t nj = l.n[j], nl = l.n[last];
  const int64_t tiles_j = (nj + kTile - 1) / kTile;
  const int64_t dj = l.d[j], sj = l.s[j], dl = l.d[last], sl = l.s[last];
  parallel_for(threads, outer_count * tiles_j, kTile * nl, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t o = item / tiles_j;
      const int64_t tj = item % tiles_j;
      int64_t doff = 0, soff = 0;
      for (size_t q = outer.size(); q-- > 0;) {
        const size_t k = outer[q];
        const int64_t i = o % l.n[k];
        o /= l.n[k];
        doff += i * l.d[k];
        soff += i * l.s[k];
      }
      const int64_t a0 = tj * kTile, a1 = std::min(a0 + kTile, nj);
      for (int64_t b0 = 0; b0 < nl; b0 += kTile) {
        const int64_t b1 = std::min(b0 + kTile, nl);
        copy_block(dst + doff + a0 * dj + b0 * dl, src + soff + a0 * sj + b0 * sl, dj, sj, dl, sl, a1 - a0, b1 - b0);
      }
    }
  });
}

}  // namespace

void strided_copy(void* dst, const std::vector<int64_t>& dst_strides, const void* src,
                  const std::vector<int64_t>& src_strides, const Shape& shape, size_t elem_size, int threads) {
  for (int64_t extent : shape) {
    if (extent == 0) return;
  }
  const Layout l = simplify(shape, dst_strides, src_strides);
  dispatch_by_size(elem_size, [&]<typename U>() {
    U* out = static_cast<U*>(dst);
    const U* in = static_cast<const U*>(src);
    const size_t r = l.rank();
    if (r == 0) {
      *out = *in;
      return;
    }
    const size_t last = r - 1;
    if (r >= 2 && l.d[last] == 1 && l.s[last] != 1 && l.s[last] != 0 && l.n[last] >= 8) {
      for (size_t j = 0; j < last; ++j) {
        if (l.s[j] == 1 && l.n[j] >= 8) {
          copy_tiled(out, in, l, j, threads);
          return;
        }
      }
    }
    int64_t rows = 1;
    for (size_t k = 0; k < last; ++k) rows *= l.n[k];
    parallel_for(threads, rows, l.n[last], [&](int64_t begin, int64_t end) { copy_rows(out, in, l, begin, end); });
  });
}

}  // namespace edgemm::kernels
