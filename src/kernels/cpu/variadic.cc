/// \file variadic.cc
/// Variadic elementwise kernels of the default ONNX domain (Operators.md, opsets 7–17):
/// Sum, Mean, Max, Min, and the three-way selection Where.
///
/// Versions and type constraints follow the ONNX 1.12 schemas:
/// - Sum-6, Mean-6, Max-6, Min-6: all inputs must have the same shape (no broadcasting);
///   float16/float/double.
/// - Sum-8, Mean-8, Max-8, Min-8: multidirectional (numpy) broadcasting across all inputs.
/// - Max-12, Min-12 add all integer types; Sum-13, Mean-13, Max-13, Min-13 add bfloat16.
///   One input is allowed (the output is a copy). Mean is the sum divided by the input
///   count. Max/Min propagate NaN (numpy.maximum/minimum). Integer sums wrap.
/// - Where-9: condition (bool) selects X where true, Y where false; the three inputs
///   broadcast together. X and Y share any numeric or bool type (strings unsupported);
///   Where-16 adds bfloat16. Where copies bits, so every element size works natively.
/// float16/bfloat16 Sum/Mean/Max/Min accumulate in float32 and round once at the end.

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
namespace {

using namespace elementwise;  // NOLINT: kernel-internal helpers

struct SumOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return (a > b || std::isnan(a)) ? a : b;
    else
      return a > b ? a : b;
  }
};
struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return (a < b || std::isnan(a)) ? a : b;
    else
      return a < b ? a : b;
  }
};

struct VariadicConfig {
  DTypeSet allowed;
  bool broadcast;  // opset >= 8
  bool mean;
};

/// Accumulates inputs (already of type T, one by one through `get`) into `acc`.
template <typename T, typename Op, typename Get>
Status accumulate(const std::vector<const Tensor*>& inputs, const Shape& shape, T* acc, int threads, const Op& op,
                  Get get) {
  const int n = static_cast<int>(inputs.size());
  EDGEMM_ASSIGN_OR_RETURN(Tensor first, get(0));
  if (n == 1) {
    const T* src = first.template data<T>();
    unary_loop(src, acc, first.element_count(), threads, 1, [](T v) { return v; });
    return Status::ok();
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor second, get(1));
  const BroadcastPlan plan0 = make_broadcast_plan(shape, {&first.shape(), &second.shape()});
  binary_loop(plan0, first.template data<T>(), second.template data<T>(), acc, threads, 1, op);
  for (int i = 2; i < n; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor next, get(i));
    const BroadcastPlan plan = make_broadcast_plan(shape, {&shape, &next.shape()});
    binary_loop(plan, static_cast<const T*>(acc), next.template data<T>(), acc, threads, 1, op);
  }
  return Status::ok();
}

template <typename Op>
Status run_variadic(KernelContext& ctx, const VariadicConfig& cfg, const Op& op) {
  const ir::Node& node = ctx.node();
  const int n = ctx.input_count();
  if (n < 1) {
    return ir::node_error(node, StatusCode::kInvalidModel, "needs at least one input");
  }
  std::vector<const Tensor*> inputs;
  for (int i = 0; i < n; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* t, need_input(ctx, i));
    if (i == 0 && !dtype_in(cfg.allowed, t->dtype())) return unsupported_dtype(node, 0, t->dtype());
    if (i > 0) EDGEMM_RETURN_IF_ERROR(check_same_dtype(node, *inputs[0], 0, *t, i));
    if (!cfg.broadcast && i > 0 && t->shape() != inputs[0]->shape()) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input '" + input_name(node, i) + "' has shape " + shape_to_string(t->shape()) +
                                " but input '" + input_name(node, 0) + "' has " + shape_to_string(inputs[0]->shape()) +
                                "; this opset (< 8) does not broadcast");
    }
    inputs.push_back(t);
  }
  EDGEMM_ASSIGN_OR_RETURN(Shape shape, broadcast_all(node, inputs));
  const DataType dt = inputs[0]->dtype();
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, shape));
  const int threads = ctx.threads();
  const int64_t count = y->element_count();

  if (is_half(dt)) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor acc, Tensor::create(DataType::kFloat32, shape));
    float* pa = acc.data<float>();
    EDGEMM_RETURN_IF_ERROR(accumulate<float>(inputs, shape, pa, threads, op,
                                             [&](int i) { return to_float32(node, *inputs[i], threads); }));
    if (cfg.mean) {
      const float div = static_cast<float>(n);
      unary_loop(pa, pa, count, threads, 1, [div](float v) { return v / div; });
    }
    return convert_tensor(node, acc, *y, threads);
  }
  Status status = unsupported_dtype(node, 0, dt);
  dispatch(NumericTypes{}, dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* acc = y->data<T>();
    status = accumulate<T>(inputs, shape, acc, threads, op, [&](int i) -> Expected<Tensor> { return *inputs[i]; });
    if (status.is_ok() && cfg.mean) {
      if constexpr (std::is_floating_point_v<T>) {
        const T div = static_cast<T>(n);
        unary_loop(acc, acc, count, threads, 1, [div](T v) { return v / div; });
      }
    }
  });
  return status;
}

template <typename Op>
void add_variadic(KernelRegistry& registry, const char* op_type, int since, DTypeSet allowed, bool mean = false) {
  const VariadicConfig cfg{allowed, since >= 8, mean};
  registry.add("", op_type, since, [cfg](const KernelInfo&) {
    return make_fn_kernel([cfg](KernelContext& ctx) { return run_variadic(ctx, cfg, Op{}); });
  });
}

// ---------------------------------------------------------------------------------------
// Where

Status run_where(KernelContext& ctx, DTypeSet allowed) {
  const ir::Node& node = ctx.node();
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* cond, need_input(ctx, 0));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 1));
  EDGEMM_ASSIGN_OR_RETURN(const Tensor* y, need_input(ctx, 2));
  if (cond->dtype() != DataType::kBool) return unsupported_dtype(node, 0, cond->dtype());
  if (!dtype_in(allowed, x->dtype())) return unsupported_dtype(node, 1, x->dtype());
  EDGEMM_RETURN_IF_ERROR(check_same_dtype(node, *x, 1, *y, 2));
  EDGEMM_ASSIGN_OR_RETURN(Shape shape, broadcast_all(node, {cond, x, y}));
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), shape));
  const BroadcastPlan plan = make_broadcast_plan(shape, {&cond->shape(), &x->shape(), &y->shape()});
  const uint8_t* c = cond->data<uint8_t>();
  auto select = [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* px = x->data<U>();
    const U* py = y->data<U>();
    U* po = out->data<U>();
    const int64_t sc = plan.inner_stride[0], sx = plan.inner_stride[1], sy = plan.inner_stride[2];
    for_each_run<3>(plan, ctx.threads(), 1, [&](int64_t o, const int64_t* in, int64_t len) {
      const uint8_t* rc = c + in[0];
      const U* rx = px + in[1];
      const U* ry = py + in[2];
      U* ro = po + o;
      if (sc && sx && sy) {
        for (int64_t i = 0; i < len; ++i) ro[i] = rc[i] ? rx[i] : ry[i];
      } else {
        for (int64_t i = 0; i < len; ++i) ro[i] = rc[i * sc] ? rx[i * sx] : ry[i * sy];
      }
    });
  };
  switch (dtype_size(x->dtype())) {
    case 1:
      select(Tag<uint8_t>{});
      break;
    case 2:
      select(Tag<uint16_t>{});
      break;
    case 4:
      select(Tag<uint32_t>{});
      break;
    case 8:
      select(Tag<uint64_t>{});
      break;
    default:
      return unsupported_dtype(node, 1, x->dtype());
  }
  return Status::ok();
}

void add_where(KernelRegistry& registry, int since, DTypeSet allowed) {
  registry.add("", "Where", since, [allowed](const KernelInfo&) {
    return make_fn_kernel([allowed](KernelContext& ctx) { return run_where(ctx, allowed); });
  });
}

}  // namespace

void register_variadic_kernels(KernelRegistry& registry) {
  constexpr DTypeSet kF = kFloatSet;
  constexpr DTypeSet kF13 = kFloatSet | kBFloat16Set;
  for (int since : {6, 8}) {
    add_variadic<SumOp>(registry, "Sum", since, kF);
    add_variadic<SumOp>(registry, "Mean", since, kF, true);
    add_variadic<MaxOp>(registry, "Max", since, kF);
    add_variadic<MinOp>(registry, "Min", since, kF);
  }
  add_variadic<MaxOp>(registry, "Max", 12, kNumericSet);
  add_variadic<MinOp>(registry, "Min", 12, kNumericSet);
  add_variadic<SumOp>(registry, "Sum", 13, kF13);
  add_variadic<SumOp>(registry, "Mean", 13, kF13, true);
  add_variadic<MaxOp>(registry, "Max", 13, kNumericSet | kBFloat16Set);
  add_variadic<MinOp>(registry, "Min", 13, kNumericSet | kBFloat16Set);

  add_where(registry, 9, kNumericSet | kBoolSet);
  add_where(registry, 16, kNumericSet | kBoolSet | kBFloat16Set);
}

}  // namespace edgemm::kernels
