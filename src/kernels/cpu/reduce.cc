/// \file reduce.cc
/// Reductions and arg-reductions of the default ONNX domain.
///
/// Follows the ONNX operator spec (Operators.md / Changelog.md):
/// - ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
///   ReduceLogSum, ReduceLogSumExp, ReduceSumSquare: versions 1, 11 (negative axes), 12 (Max/Min
///   on int8/uint8), 13 (ReduceSum takes `axes` as an optional int64 input and gains
///   `noop_with_empty_axes`), 18 (every other Reduce* does the same), 20 (ReduceMax and
///   ReduceMin on bool: any / all). `keepdims` (default 1)
///   keeps reduced axes as extent 1; absent or empty `axes` reduces every axis unless
///   `noop_with_empty_axes` is 1, in which case no axis is reduced (each element on its own:
///   |x|, x², log x or x, as ONNX's reference computes it). The reduction
///   of an empty set is the identity of the operation (Sum 0, Prod 1, Max the lowest value,
///   Min the highest, LogSum and LogSumExp -inf, Mean NaN for floats).
/// - ArgMax, ArgMin: versions 1, 11 (negative axis), 12 (`select_last_index`), 13. Output is
///   int64; ties pick the first index unless `select_last_index` is 1.
///
/// dtypes: float32, float64, int32, int64 (plus int8/uint8 for ReduceMax/ReduceMin and the
/// arg-reductions). Float32 sums accumulate in float64.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// ---------------------------------------------------------------------------------------------
// Per-operation semantics: map an element into the accumulator, combine, finish.

template <typename T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T, typename A>
T to_output(A value) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(value);
  } else {
    if constexpr (std::is_floating_point_v<A>) {
      if (!std::isfinite(value)) return value > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    }
    return static_cast<T>(value);
  }
}

template <ReduceOp kOp, typename T>
struct ReduceTraits {
  static constexpr bool kMinMax = kOp == ReduceOp::kMax || kOp == ReduceOp::kMin;
  using Acc = std::conditional_t<kMinMax, T, AccOf<T>>;

  static Acc init() {
    if constexpr (kOp == ReduceOp::kMax) {
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest();
    } else if constexpr (kOp == ReduceOp::kMin) {
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    } else if constexpr (kOp == ReduceOp::kProd) {
      return Acc(1);
    } else {
      return Acc(0);
    }
  }
  static Acc map(T x) {
    if constexpr (kOp == ReduceOp::kL1) {
      return x < T(0) ? -Acc(x) : Acc(x);
    } else if constexpr (kOp == ReduceOp::kL2 || kOp == ReduceOp::kSumSquare) {
      return Acc(x) * Acc(x);
    } else {
      return Acc(x);
    }
  }
  static Acc combine(Acc a, Acc b) {
    if constexpr (kOp == ReduceOp::kMax) {
      return b > a ? b : a;
    } else if constexpr (kOp == ReduceOp::kMin) {
      return b < a ? b : a;
    } else if constexpr (kOp == ReduceOp::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  static T finish(Acc a, int64_t count) {
    if constexpr (kOp == ReduceOp::kMean) {
      if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(a / static_cast<double>(count));
      } else {
        return count == 0 ? T(0) : static_cast<T>(a / count);
      }
    } else if constexpr (kOp == ReduceOp::kL2) {
      return to_output<T>(std::sqrt(static_cast<double>(a)));
    } else if constexpr (kOp == ReduceOp::kLogSum) {
      return to_output<T>(std::log(static_cast<double>(a)));
    } else {
      return static_cast<T>(a);
    }
  }
};

// Reduces `n` contiguous elements.
template <ReduceOp kOp, typename T>
T reduce_contiguous(const T* p, int64_t n) {
  using Tr = ReduceTraits<kOp, T>;
  using Acc = typename Tr::Acc;
  if constexpr (kOp == ReduceOp::kLogSumExp) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(p[i]));
    if (!std::isfinite(m)) return to_output<T>(m);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(p[i]) - m);
    return to_output<T>(m + std::log(s));
  } else {
    // Eight independent accumulators let the compiler vectorize without reassociation.
    constexpr int kLanes = 8;
    Acc acc[kLanes];
    for (auto& a : acc) a = Tr::init();
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) acc[j] = Tr::combine(acc[j], Tr::map(p[i + j]));
    }
    for (; i < n; ++i) acc[0] = Tr::combine(acc[0], Tr::map(p[i]));
    Acc total = acc[0];
    for (int j = 1; j < kLanes; ++j) total = Tr::combine(total, acc[j]);
    return Tr::finish(total, n);
  }
}

// Reduces x viewed as [outer, n] over its last axis into y[outer].
template <ReduceOp kOp, typename T>
void reduce_inner(const T* x, T* y, int64_t outer, int64_t n, int threads) {
  parallel_for(threads, outer, n, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) y[o] = reduce_contiguous<kOp, T>(x + o * n, n);
  });
}

// Reduces x viewed as [outer, n, inner] over its middle axis into y[outer, inner]. Columns are
// processed in blocks so that accumulators live on the stack and rows are read contiguously.
template <ReduceOp kOp, typename T>
void reduce_middle(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int threads) {
  using Tr = ReduceTraits<kOp, T>;
  using Acc = typename Tr::Acc;
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallel_for(threads, outer * blocks, n * kBlock, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks;
      const int64_t b0 = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, inner - b0);
      const T* base = x + o * n * inner + b0;
      T* out = y + o * inner + b0;
      if constexpr (kOp == ReduceOp::kLogSumExp) {
        double m[kBlock], s[kBlock];
        for (int64_t j = 0; j < width; ++j) {
          m[j] = -std::numeric_limits<double>::infinity();
          s[j] = 0;
        }
        for (int64_t r = 0; r < n; ++r) {
          const T* row = base + r * inner;
          for (int64_t j = 0; j < width; ++j) m[j] = std::max(m[j], static_cast<double>(row[j]));
        }
        for (int64_t r = 0; r < n; ++r) {
          const T* row = base + r * inner;
          for (int64_t j = 0; j < width; ++j) {
            if (std::isfinite(m[j])) s[j] += std::exp(static_cast<double>(row[j]) - m[j]);
          }
        }
        for (int64_t j = 0; j < width; ++j) {
          out[j] = to_output<T>(std::isfinite(m[j]) ? m[j] + std::log(s[j]) : m[j]);
        }
      } else {
        Acc acc[kBlock];
        for (int64_t j = 0; j < width; ++j) acc[j] = Tr::init();
        for (int64_t r = 0; r < n; ++r) {
          const T* row = base + r * inner;
          for (int64_t j = 0; j < width; ++j) acc[j] = Tr::combine(acc[j], Tr::map(row[j]));
        }
        for (int64_t j = 0; j < width; ++j) out[j] = Tr::finish(acc[j], n);
      }
    }
  });
}

// Copies x (shape `dims`) into `out` with its axes permuted by `perm` (out axis i = x axis
// perm[i]).
template <typename T>
void permute_copy(const T* x, const Shape& dims, const std::vector<int64_t>& perm, T* out) {
  const size_t rank = dims.size();
  const auto in_strides = contiguous_strides(dims);
  Shape out_dims(rank);
  std::vector<int64_t> strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  const int64_t last = out_dims.back(), last_stride = strides.back();
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t done = 0; done < total; done += last) {
    const T* src = x + offset;
    for (int64_t k = 0; k < last; ++k) *out++ = src[k * last_stride];
    for (int64_t axis = static_cast<int64_t>(rank) - 2; axis >= 0; --axis) {
      if (++index[axis] < out_dims[axis]) {
        offset += strides[axis];
        break;
      }
      offset -= strides[axis] * (out_dims[axis] - 1);
      index[axis] = 0;
    }
  }
}

// Runs one reduction of x over the axes flagged in `reduced` into y.
template <ReduceOp kOp, typename T>
void reduce_tensor(const Tensor& x, const std::vector<bool>& reduced, Tensor& y, int threads) {
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const int64_t out_count = y.element_count();
  if (out_count == 0) return;
  if (x.element_count() == 0) {  // empty reduced set: the operation's identity
    const T value = kOp == ReduceOp::kLogSumExp ? to_output<T>(-std::numeric_limits<double>::infinity())
                                                : ReduceTraits<kOp, T>::finish(ReduceTraits<kOp, T>::init(), 0);
    std::fill(dst, dst + out_count, value);
    return;
  }
  // Merge neighbouring axes of the same kind; extent-1 axes do not matter.
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < reduced.size(); ++i) {
    const int64_t d = x.shape()[i];
    if (d == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduced[i]) {
      groups.back().size *= d;
    } else {
      groups.push_back({d, reduced[i]});
    }
  }
  int reduced_groups = 0;
  for (const auto& g : groups) reduced_groups += g.reduced ? 1 : 0;
  if (reduced_groups == 0) {
    reduce_inner<kOp, T>(src, dst, out_count, 1, threads);
    return;
  }
  if (reduced_groups == 1 && groups.back().reduced) {
    const int64_t n = groups.back().size;
    reduce_inner<kOp, T>(src, dst, out_count, n, threads);
    return;
  }
  if (reduced_groups == 1 && groups.size() <= 3) {
    const size_t r = groups[0].reduced ? 0 : 1;
    const int64_t outer = r == 0 ? 1 : groups[0].size;
    reduce_middle<kOp, T>(src, dst, outer, groups[r].size, groups[r + 1].size, threads);
    return;
  }
  // General case: move the reduced axes last, then reduce contiguous rows.
  Shape dims;
  std::vector<int64_t> perm;
  for (const auto& g : groups) dims.push_back(g.size);
  int64_t n = 1;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!groups[i].reduced) perm.push_back(static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].reduced) {
      perm.push_back(static_cast<int64_t>(i));
      n *= groups[i].size;
    }
  }
  std::vector<T> moved(static_cast<size_t>(x.element_count()));
  permute_copy(src, dims, perm, moved.data());
  reduce_inner<kOp, T>(moved.data(), dst, out_count, n, threads);
}

template <ReduceOp kOp>
Status reduce_dispatch(const ir::Node& node, const Tensor& x, const std::vector<bool>& reduced, Tensor& y,
                       int threads) {
  switch (x.dtype()) {
    case DataType::kFloat32:
      reduce_tensor<kOp, float>(x, reduced, y, threads);
      return Status::ok();
    case DataType::kFloat64:
      reduce_tensor<kOp, double>(x, reduced, y, threads);
      return Status::ok();
    case DataType::kInt32:
      reduce_tensor<kOp, int32_t>(x, reduced, y, threads);
      return Status::ok();
    case DataType::kInt64:
      reduce_tensor<kOp, int64_t>(x, reduced, y, threads);
      return Status::ok();
    case DataType::kInt8:
      if constexpr (kOp == ReduceOp::kMax || kOp == ReduceOp::kMin) {
        reduce_tensor<kOp, int8_t>(x, reduced, y, threads);
        return Status::ok();
      }
      break;
    case DataType::kUInt8:
      if constexpr (kOp == ReduceOp::kMax || kOp == ReduceOp::kMin) {
        reduce_tensor<kOp, uint8_t>(x, reduced, y, threads);
        return Status::ok();
      }
      break;
    case DataType::kBool:  // ReduceMax-20 / ReduceMin-20: any / all, as bytes 0 / 1
      if constexpr (kOp == ReduceOp::kMax || kOp == ReduceOp::kMin) {
        EDGEMM_ASSIGN_OR_RETURN(Tensor bytes_in, Tensor::create(DataType::kUInt8, x.shape()));
        EDGEMM_ASSIGN_OR_RETURN(Tensor bytes_out, Tensor::create(DataType::kUInt8, y.shape()));
        if (x.byte_size() != 0) std::memcpy(bytes_in.raw_data(), x.raw_data(), x.byte_size());
        reduce_tensor<kOp, uint8_t>(bytes_in, reduced, bytes_out, threads);
        if (y.byte_size() != 0) std::memcpy(y.raw_data(), bytes_out.raw_data(), y.byte_size());
        return Status::ok();
      }
      break;
    default:
      break;
  }
  return unsupported_dtype(node, 0, x.dtype());
}

Status run_reduce_op(ReduceOp op, const ir::Node& node, const Tensor& x, const std::vector<bool>& reduced, Tensor& y,
                     int threads) {
  switch (op) {
    case ReduceOp::kSum:
      return reduce_dispatch<ReduceOp::kSum>(node, x, reduced, y, threads);
    case ReduceOp::kMean:
      return reduce_dispatch<ReduceOp::kMean>(node, x, reduced, y, threads);
    case ReduceOp::kMax:
      return reduce_dispatch<ReduceOp::kMax>(node, x, reduced, y, threads);
    case ReduceOp::kMin:
      return reduce_dispatch<ReduceOp::kMin>(node, x, reduced, y, threads);
    case ReduceOp::kProd:
      return reduce_dispatch<ReduceOp::kProd>(node, x, reduced, y, threads);
    case ReduceOp::kL1:
      return reduce_dispatch<ReduceOp::kL1>(node, x, reduced, y, threads);
    case ReduceOp::kL2:
      return reduce_dispatch<ReduceOp::kL2>(node, x, reduced, y, threads);
    case ReduceOp::kLogSum:
      return reduce_dispatch<ReduceOp::kLogSum>(node, x, reduced, y, threads);
    case ReduceOp::kLogSumExp:
      return reduce_dispatch<ReduceOp::kLogSumExp>(node, x, reduced, y, threads);
    case ReduceOp::kSumSquare:
      return reduce_dispatch<ReduceOp::kSumSquare>(node, x, reduced, y, threads);
  }
  return ir::node_error(node, StatusCode::kInternal, "unknown reduction");
}

// ---------------------------------------------------------------------------------------------
// Reduce* kernel.

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceOp op, bool keepdims, bool noop_with_empty_axes, bool axes_from_input, std::vector<int64_t> axes)
      : op_(op),
        keepdims_(keepdims),
        noop_with_empty_axes_(noop_with_empty_axes),
        axes_from_input_(axes_from_input),
        axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "input 'data' is missing");
    }
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      if (const Tensor* a = ctx.input(1); a != nullptr) {
        if (a->rank() > 1) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "input 'axes' must be 1-D, got shape " + shape_to_string(a->shape()));
        }
        EDGEMM_ASSIGN_OR_RETURN(axes, read_int_values(node, 1, *a));
      } else {
        axes.clear();
      }
    }
    const int64_t rank = x->rank();
    if (axes.empty() && noop_with_empty_axes_) {
      // No axis is reduced: each element is a set of one (|x| for L1 and L2, x² for SumSquare,
      // log x for LogSum, x for the others), as ONNX's reference and ONNX Runtime compute it.
      EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
      return run_reduce_op(op_, node, *x, std::vector<bool>(static_cast<size_t>(rank), false), *y, ctx.threads());
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    for (int64_t axis : axes) {
      EDGEMM_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axis, rank));
      if (reduced[a]) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "axis " + std::to_string(axis) + " appears twice in 'axes'");
      }
      reduced[a] = true;
    }
    Shape out_shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (!reduced[i]) {
        out_shape.push_back(x->shape()[i]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    return run_reduce_op(op_, node, *x, reduced, *y, ctx.threads());
  }

 private:
  ReduceOp op_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

KernelFactory reduce_factory(ReduceOp op) {
  return [op](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    const ir::Node& node = info.node;
    // ReduceSum takes axes as an input from opset 13, the other reductions from opset 18.
    const bool axes_from_input = info.opset >= (op == ReduceOp::kSum ? 13 : 18);
    EDGEMM_ASSIGN_OR_RETURN(int64_t keepdims, node.attr_int("keepdims", 1));
    int64_t noop = 0;
    std::vector<int64_t> axes;
    if (axes_from_input) {
      EDGEMM_ASSIGN_OR_RETURN(noop, node.attr_int("noop_with_empty_axes", 0));
      if (node.has_attr("axes")) {
        return ir::node_error(node, StatusCode::kInvalidModel,
                              "'axes' is an input, not an attribute, at opset " + std::to_string(info.opset));
      }
    } else {
      EDGEMM_ASSIGN_OR_RETURN(axes, node.attr_ints("axes"));
    }
    return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(op, keepdims != 0, noop != 0, axes_from_input, axes));
  };
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin.

template <typename T, bool kMax>
void arg_reduce(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool select_last, int threads) {
  parallel_for(threads, outer * inner, n, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int64_t o = idx / inner, i = idx % inner;
      const T* p = x + o * n * inner + i;
      T best = p[0];
      int64_t best_index = 0;
      for (int64_t r = 1; r < n; ++r) {
        const T v = p[r * inner];
        const bool better = kMax ? v > best : v < best;
        if (better || (select_last && v == best)) {
          best = v;
          best_index = r;
        }
      }
      y[idx] = best_index;
    }
  });
}

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  ArgReduceKernel(int64_t axis, bool keepdims, bool select_last)
      : axis_(axis), keepdims_(keepdims), select_last_(select_last) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, "input 'data' is missing");
    }
    const int64_t rank = x->rank();
    if (rank == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument, "input 'data' is a scalar; it needs at least one axis");
    }
    EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, axis_, rank));
    const int64_t n = x->shape()[axis];
    if (n == 0) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "axis " + std::to_string(axis_) + " has extent 0, so there is no element to select");
    }
    int64_t outer = 1, inner = 1;
    Shape out_shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= x->shape()[i];
      if (i > axis) inner *= x->shape()[i];
      if (i != axis) {
        out_shape.push_back(x->shape()[i]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    const DataType dtype = x->dtype();
    if (dtype != DataType::kFloat32 && dtype != DataType::kFloat64 && dtype != DataType::kInt32 &&
        dtype != DataType::kInt64 && dtype != DataType::kInt8 && dtype != DataType::kUInt8) {
      return unsupported_dtype(node, 0, dtype);
    }
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, out_shape));
    int64_t* out = y->data<int64_t>();
    const int t = ctx.threads();
    switch (dtype) {
      case DataType::kFloat32:
        arg_reduce<float, kMax>(x->data<float>(), out, outer, n, inner, select_last_, t);
        break;
      case DataType::kFloat64:
        arg_reduce<double, kMax>(x->data<double>(), out, outer, n, inner, select_last_, t);
        break;
      case DataType::kInt32:
        arg_reduce<int32_t, kMax>(x->data<int32_t>(), out, outer, n, inner, select_last_, t);
        break;
      case DataType::kInt64:
        arg_reduce<int64_t, kMax>(x->data<int64_t>(), out, outer, n, inner, select_last_, t);
        break;
      case DataType::kInt8:
        arg_reduce<int8_t, kMax>(x->data<int8_t>(), out, outer, n, inner, select_last_, t);
        break;
      default:
        arg_reduce<uint8_t, kMax>(x->data<uint8_t>(), out, outer, n, inner, select_last_, t);
        break;
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

template <bool kMax>
Expected<std::unique_ptr<Kernel>> make_arg_reduce(const KernelInfo& info) {
  const ir::Node& node = info.node;
  EDGEMM_ASSIGN_OR_RETURN(int64_t axis, node.attr_int("axis", 0));
  EDGEMM_ASSIGN_OR_RETURN(int64_t keepdims, node.attr_int("keepdims", 1));
  int64_t select_last = 0;
  if (info.opset >= 12) {
    EDGEMM_ASSIGN_OR_RETURN(select_last, node.attr_int("select_last_index", 0));
  }
  return std::unique_ptr<Kernel>(std::make_unique<ArgReduceKernel<kMax>>(axis, keepdims != 0, select_last != 0));
}

}  // namespace

void register_reduce_kernels(KernelRegistry& registry) {
  struct Entry {
    const char* op;
    ReduceOp kind;
  };
  const Entry entries[] = {
      {"ReduceSum", ReduceOp::kSum},
      {"ReduceMean", ReduceOp::kMean},
      {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin},
      {"ReduceProd", ReduceOp::kProd},
      {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},
      {"ReduceLogSum", ReduceOp::kLogSum},
      {"ReduceLogSumExp", ReduceOp::kLogSumExp},
      {"ReduceSumSquare", ReduceOp::kSumSquare},
  };
  for (const auto& e : entries) {
    // One factory handles every version; it reads the model opset for the differences.
    for (int since : {1, 11, 13, 18}) registry.add("", e.op, since, reduce_factory(e.kind));
  }
  for (int since : {1, 11, 12, 13}) {
    registry.add("", "ArgMax", since, make_arg_reduce<true>);
    registry.add("", "ArgMin", since, make_arg_reduce<false>);
  }
}

}  // namespace edgemm::kernels
