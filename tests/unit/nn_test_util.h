#pragma once
// Helpers shared by the NN kernel tests (kernels_conv_test.cc, kernels_matmul_test.cc,
// kernels_pool_test.cc, kernels_resize_test.cc, kernels_nn_conformance_test.cc): building
// nodes, seeded random tensors, running a node through runtime::run_node or through its
// kernel factory directly (to choose which inputs look constant and to read the kernel name),
// and comparing tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/elementwise_steps.h"
#include "ir/graph.h"
#include "kernels/cpu/onednn.h"
#include "kernels/kernel.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm::nntest {

using testutil::f32;
using testutil::make;
using testutil::values;

/// Uniform [-1, 1) float32 tensor from a fixed seed.
inline Tensor random_f32(Shape shape, uint32_t seed) {
  auto t = Tensor::create(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.has_value());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t->data<float>();
  for (int64_t i = 0; i < t->element_count(); ++i) p[i] = dist(rng);
  return *t;
}

inline ir::Node make_node(const std::string& op, std::vector<std::string> inputs,
                          std::vector<std::string> outputs = {"Y"}) {
  ir::Node node;
  node.op_type = op;
  node.name = "n_" + op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return node;
}
inline void set_int(ir::Node& n, const std::string& key, int64_t v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = v;
  n.attributes[key] = a;
}
inline void set_ints(ir::Node& n, const std::string& key, std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  n.attributes[key] = a;
}
inline void set_float(ir::Node& n, const std::string& key, float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  n.attributes[key] = a;
}
inline void set_floats(ir::Node& n, const std::string& key, std::vector<float> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloats;
  a.floats = std::move(v);
  n.attributes[key] = a;
}
inline void set_string(ir::Node& n, const std::string& key, const std::string& v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = v;
  n.attributes[key] = a;
}

/// Runs the node through the runtime; returns output `index`.
inline Expected<Tensor> run(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17,
                            int threads = 1, size_t index = 0) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runtime::run_node(node, inputs, opset, threads));
  if (outs.size() <= index) return Status(StatusCode::kInternal, "missing output");
  return outs[index];
}

/// Runs the node with every oneDNN path disabled (the reference kernels).
inline Expected<Tensor> run_reference(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  kernels::onednn::ScopedEnabled off(false);
  return run(node, inputs, opset);
}

/// A KernelContext over plain tensors, for running a kernel made by its factory directly.
class DirectContext final : public kernels::KernelContext {
 public:
  DirectContext(const ir::Node& node, std::vector<Tensor> inputs, int threads = 1)
      : node_(node), inputs_(std::move(inputs)), outputs_(node.outputs.size()), threads_(threads) {}
  const ir::Node& node() const override { return node_; }
  int input_count() const override { return static_cast<int>(node_.inputs.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= static_cast<int>(inputs_.size()) || !inputs_[i].defined()) return nullptr;
    return &inputs_[i];
  }
  int output_count() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int i) const override { return i >= 0 && i < output_count() && !node_.outputs[i].empty(); }
  Expected<Tensor*> allocate_output(int i, DataType dtype, const Shape& shape) override {
    if (i < 0 || i >= output_count()) return Status(StatusCode::kInternal, "bad output index");
    EDGEMM_ASSIGN_OR_RETURN(outputs_[i], Tensor::create(dtype, shape));
    return &outputs_[i];
  }
  int threads() const override { return threads_; }
  Expected<std::vector<Tensor>> run_subgraph(const kernels::Subgraph&, const std::vector<Tensor>&) override {
    return Status(StatusCode::kUnsupported, "no subgraphs here");
  }
  Tensor& output(int i) { return outputs_[i]; }

 private:
  const ir::Node& node_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  int threads_;
};

/// Creates the node's kernel from `registry` (default: the CPU registry); `constants[i]` (may be
/// null) is what the factory sees as compile-time constant input i.
inline Expected<std::unique_ptr<kernels::Kernel>> make_kernel(
    const ir::Node& node, const std::vector<const Tensor*>& constants, int64_t opset = 17,
    const kernels::KernelRegistry& registry = kernels::cpu_registry()) {
  const kernels::KernelFactory* factory = registry.find(node.domain, node.op_type, opset);
  if (factory == nullptr) return Status(StatusCode::kUnsupported, "no kernel");
  kernels::KernelInfo info{node, opset, constants, nullptr};
  return (*factory)(info);
}

/// Runs the node's kernel directly (DirectContext), so that errors name the node's own values
/// (runtime::run_node renames the inputs in0, in1, ...); an undefined tensor is an absent
/// optional input. Returns output `index`.
inline Expected<Tensor> run_direct(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17,
                                   int index = 0) {
  std::vector<const Tensor*> constants;
  for (const Tensor& t : inputs) constants.push_back(t.defined() ? &t : nullptr);
  EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<kernels::Kernel> kernel, make_kernel(node, constants, opset));
  DirectContext ctx(node, inputs);
  EDGEMM_RETURN_IF_ERROR(kernel->run(ctx));
  return ctx.output(index);
}

/// Expects `r` to fail with `code` and a message holding every one of `parts`.
template <typename T>
void expect_error(const Expected<T>& r, StatusCode code, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(r.has_value()) << "expected an error";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  for (const std::string& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos) << "'" << p << "' not in: " << r.status().to_string();
  }
}

/// Max |a - b| over all elements, and max |b| (float32).
struct Diff {
  double max_abs = 0;
  double max_ref = 0;
};
inline Diff diff(const Tensor& a, const Tensor& b) {
  Diff d;
  EXPECT_EQ(shape_to_string(a.shape()), shape_to_string(b.shape()));
  if (a.shape() != b.shape()) {
    d.max_abs = INFINITY;
    return d;
  }
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    d.max_abs = std::max(d.max_abs, static_cast<double>(std::abs(pa[i] - pb[i])));
    d.max_ref = std::max(d.max_ref, static_cast<double>(std::abs(pb[i])));
  }
  return d;
}

/// Expects float32 `got` to equal `want` element-wise within `tol`.
inline void expect_near(const Tensor& got, const Shape& shape, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(shape));
  ASSERT_EQ(got.dtype(), DataType::kFloat32);
  const std::vector<float> v = values<float>(got);
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], tol) << "element " << i;
}

/// |got - want| <= tolerance * max(1, |want|) element-wise; fails at the first element off.
inline void expect_close(const float* got, const float* want, int64_t count, const std::string& what,
                         double tolerance = 1e-5) {
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), tolerance * std::max(1.0f, std::abs(want[i])))
        << what << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

/// Makes `node`'s kernel from `registry` with inputs 1 and 2 (W, B) constant, expects it to be
/// named `name`, and runs it on 1 and 2 threads on `in` against the node's reference path (oneDNN
/// off), whose output must have `want_shape` when given, within expect_close's `tolerance`.
inline void expect_kernel_matches_reference(const ir::Node& node, const std::vector<Tensor>& in,
                                            const std::string& name, const std::string& what,
                                            const std::optional<Shape>& want_shape = std::nullopt,
                                            const kernels::KernelRegistry& registry = kernels::cpu_registry(),
                                            double tolerance = 1e-5) {
  auto want = run_reference(node, in);
  ASSERT_TRUE(want.has_value()) << what << ": " << want.status().message();
  if (want_shape) {
    ASSERT_EQ(want->shape(), *want_shape) << what;
  }
  auto kernel = make_kernel(node, {nullptr, &in[1], &in[2], nullptr}, 17, registry);
  ASSERT_TRUE(kernel.has_value()) << what << ": " << kernel.status().message();
  EXPECT_EQ((*kernel)->name(), name) << what;
  for (int threads : {1, 2}) {
    DirectContext ctx(node, in, threads);
    const Status s = (*kernel)->run(ctx);
    ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
    ASSERT_EQ(ctx.output(0).shape(), want->shape()) << what;
    expect_close(ctx.output(0).data<float>(), want->data<float>(), want->element_count(),
                 what + " threads " + std::to_string(threads), tolerance);
  }
}

/// MatMul and com.edgemm FusedMatMul (a Swish epilogue step) with constant weights B [96, 200]
/// against the reference kernels, for A of [1, 50, 96], [2, 7, 96], [96] and [300, 96] (seeds from
/// `seed`), on 1 and 2 threads: each kernel (from `registry`) must be named so that `name_ok(op_type, name)`,
/// and be within `tolerance` · √K · max(1, max |reference|) of the reference. With `computed_bias`
/// FusedMatMul runs a second time with its bias given at run time instead of as a constant.
inline void expect_constant_weight_matmuls_match_reference(
    uint32_t seed, bool computed_bias, const std::function<bool(const std::string&, const std::string&)>& name_ok,
    const kernels::KernelRegistry& registry = kernels::cpu_registry(), double tolerance = 2e-6) {
  ir::Node matmul = make_node("MatMul", {"A", "B"});
  ir::Node fused = make_node("FusedMatMul", {"A", "B", "bias"});
  fused.domain = "com.edgemm";
  ir::Step swish;
  swish.kind = ir::StepKind::kSwish;
  swish.alpha = 1.702f;
  ir::write_steps(fused, {swish});
  // [1, 50, 96] x [96, 200]: a ViT block's shape at small size; 300 rows: past kPanelMaxRows.
  for (const Shape& a_shape : {Shape{1, 50, 96}, Shape{2, 7, 96}, Shape{96}, Shape{300, 96}}) {
    const Tensor a = random_f32(a_shape, seed++), b = random_f32({96, 200}, seed++), bias = random_f32({200}, seed++);
    for (const ir::Node* node : {&matmul, &fused}) {
      for (bool bias_constant : {true, false}) {
        if (!bias_constant && (node == &matmul || !computed_bias)) continue;
        SCOPED_TRACE(node->op_type + " A " + shape_to_string(a_shape) + (bias_constant ? "" : " bias computed"));
        std::vector<Tensor> inputs = {a, b};
        if (node == &fused) inputs.push_back(bias);
        auto ref = run_reference(*node, inputs);
        ASSERT_TRUE(ref.has_value()) << ref.status().to_string();
        auto kernel =
            make_kernel(*node, {nullptr, &b, node == &fused && bias_constant ? &bias : nullptr}, 17, registry);
        ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
        EXPECT_TRUE(name_ok(node->op_type, (*kernel)->name())) << (*kernel)->name();
        // A kernel that keeps B packed runs, as in the runtime, with B's data freed.
        std::vector<Tensor> run_inputs = inputs;
        if (!(*kernel)->reads_constant_input(1)) run_inputs[1] = Tensor::borrow(b.dtype(), b.shape(), nullptr);
        for (int threads : {1, 2}) {
          DirectContext ctx(*node, run_inputs, threads);
          ASSERT_TRUE((*kernel)->run(ctx).is_ok());
          ASSERT_EQ(ctx.output(0).shape(), ref->shape());
          const Diff d = diff(ctx.output(0), *ref);
          EXPECT_LE(d.max_abs, tolerance * std::sqrt(96.0) * std::max(1.0, d.max_ref));
          if (tolerance > 2e-6) std::cout << "[ matmul ] max |error| " << d.max_abs << " of max " << d.max_ref << "\n";
        }
      }
    }
  }
}

}  // namespace edgemm::nntest
