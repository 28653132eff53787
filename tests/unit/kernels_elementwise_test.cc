// Elementwise CPU kernels (unary.cc, activation.cc, binary.cc, variadic.cc, cast.cc) run
// through runtime::run_node. Every expected value is hand-computed (IEEE bit patterns for
// float16/bfloat16, closed forms such as erf, e^-1, ln 2) or follows from a formula written
// in the test, never from an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_elementwise_test {  // named for the file: unity batches merge anonymous namespaces

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using namespace testutil;  // NOLINT: test helpers

ir::Node make_node(const std::string& op, int inputs) {
  ir::Node node;
  node.op_type = op;
  node.name = "my_" + op;
  for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
  node.outputs = {"y"};
  return node;
}
void set_int(ir::Node& n, const std::string& key, int64_t v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = v;
  n.attributes[key] = a;
}
void set_float(ir::Node& n, const std::string& key, float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  n.attributes[key] = a;
}
void set_string(ir::Node& n, const std::string& key, const std::string& v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = v;
  n.attributes[key] = a;
}

Expected<Tensor> run(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17, int threads = 1) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runtime::run_node(node, inputs, opset, threads));
  if (outs.size() != 1) return Status(StatusCode::kInternal, "expected one output");
  return outs[0];
}

/// Runs a one-input op on float32 values.
std::vector<float> unary(const ir::Node& node, const std::vector<float>& x, int64_t opset = 17) {
  auto y = run(node, {f32({static_cast<int64_t>(x.size())}, x)}, opset);
  EXPECT_TRUE(y.has_value()) << y.status().to_string();
  if (!y.has_value()) return {};
  EXPECT_EQ(y->dtype(), DataType::kFloat32);
  return values<float>(*y);
}

void expect_floats(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0f, std::fabs(want[i]))) << "at " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Unary math

TEST(ElementwiseUnary, BasicFloatOps) {
  expect_floats(unary(make_node("Abs", 1), {-1.5f, 2.0f, -0.0f}), {1.5f, 2.0f, 0.0f});
  expect_floats(unary(make_node("Neg", 1), {-1.5f, 2.0f}), {1.5f, -2.0f});
  expect_floats(unary(make_node("Reciprocal", 1), {4.0f, -0.5f}), {0.25f, -2.0f});
  expect_floats(unary(make_node("Floor", 1), {1.5f, -1.5f, 2.0f}), {1.0f, -2.0f, 2.0f});
  expect_floats(unary(make_node("Ceil", 1), {1.5f, -1.5f, 2.0f}), {2.0f, -1.0f, 2.0f});
  expect_floats(unary(make_node("Sqrt", 1), {4.0f, 9.0f, 0.0f}), {2.0f, 3.0f, 0.0f});
  expect_floats(unary(make_node("Exp", 1), {0.0f, 1.0f}), {1.0f, 2.718281828f});
  expect_floats(unary(make_node("Log", 1), {1.0f, 2.718281828f, 0.0f}), {0.0f, 1.0f, -kInf});
  expect_floats(unary(make_node("Erf", 1), {0.0f, 1.0f, -1.0f}), {0.0f, 0.8427007929f, -0.8427007929f});
  expect_floats(unary(make_node("Sin", 1), {0.0f, 1.5707963268f}), {0.0f, 1.0f});
  expect_floats(unary(make_node("Cos", 1), {0.0f}), {1.0f});
  expect_floats(unary(make_node("Tan", 1), {0.7853981634f}), {1.0f});
  expect_floats(unary(make_node("Asin", 1), {1.0f}), {1.5707963268f});
  expect_floats(unary(make_node("Acos", 1), {1.0f, 0.0f}), {0.0f, 1.5707963268f});
  expect_floats(unary(make_node("Atan", 1), {1.0f}), {0.7853981634f});
  expect_floats(unary(make_node("Sinh", 1), {0.0f, 1.0f}), {0.0f, 1.1752011936f});
  expect_floats(unary(make_node("Cosh", 1), {0.0f, 1.0f}), {1.0f, 1.5430806348f});
  expect_floats(unary(make_node("Asinh", 1), {0.0f, 1.1752011936f}), {0.0f, 1.0f});
  expect_floats(unary(make_node("Acosh", 1), {1.0f, 1.5430806348f}), {0.0f, 1.0f});
  expect_floats(unary(make_node("Atanh", 1), {0.0f, 0.7615941560f}), {0.0f, 1.0f});
  expect_floats(unary(make_node("Sign", 1), {-3.0f, 0.0f, 2.5f, kNaN}), {-1.0f, 0.0f, 1.0f, kNaN});
}

TEST(ElementwiseUnary, RoundHalvesToEven) {
  expect_floats(unary(make_node("Round", 1), {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f}),
                {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -3.0f});
}

TEST(ElementwiseUnary, IntegerAbsNegSignErf) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  auto abs = run(make_node("Abs", 1), {i32({4}, {-3, 0, 7, kMin})});
  ASSERT_TRUE(abs.has_value()) << abs.status().to_string();
  EXPECT_EQ(values<int32_t>(*abs), (std::vector<int32_t>{3, 0, 7, kMin}));  // wraps
  auto neg = run(make_node("Neg", 1), {i64({2}, {5, -9})});
  ASSERT_TRUE(neg.has_value());
  EXPECT_EQ(values<int64_t>(*neg), (std::vector<int64_t>{-5, 9}));
  auto sign = run(make_node("Sign", 1), {i32({3}, {-8, 0, 8})});
  ASSERT_TRUE(sign.has_value());
  EXPECT_EQ(values<int32_t>(*sign), (std::vector<int32_t>{-1, 0, 1}));
  // erf(1) = 0.84 and erf(-5) = -0.9999… truncate to 0; erf(10) is 1.0 in double.
  auto erf = run(make_node("Erf", 1), {i32({4}, {0, 1, -5, 10})});
  ASSERT_TRUE(erf.has_value());
  EXPECT_EQ(values<int32_t>(*erf), (std::vector<int32_t>{0, 0, 0, 1}));
}

TEST(ElementwiseUnary, PredicatesAndNot) {
  auto isnan = run(make_node("IsNaN", 1), {f32({3}, {1.0f, kNaN, kInf})});
  ASSERT_TRUE(isnan.has_value());
  EXPECT_EQ(isnan->dtype(), DataType::kBool);
  EXPECT_EQ(values<uint8_t>(*isnan), (std::vector<uint8_t>{0, 1, 0}));

  ir::Node isinf = make_node("IsInf", 1);
  auto both = run(isinf, {f64({4}, {1.0, kInf, -kInf, kNaN})});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(values<uint8_t>(*both), (std::vector<uint8_t>{0, 1, 1, 0}));
  set_int(isinf, "detect_negative", 0);
  auto pos = run(isinf, {f32({3}, {kInf, -kInf, 0.0f})});
  ASSERT_TRUE(pos.has_value());
  EXPECT_EQ(values<uint8_t>(*pos), (std::vector<uint8_t>{1, 0, 0}));

  auto n = run(make_node("Not", 1), {bools({3}, {1, 0, 1})});
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(values<uint8_t>(*n), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(ElementwiseUnary, Float16AndBFloat16ComputeThroughFloat) {
  // float16: 4.0 = 0x4400, 2.0 = 0x4000, 9.0 = 0x4880, 3.0 = 0x4200.
  auto h = run(make_node("Sqrt", 1), {f16({2}, {0x4400, 0x4880})});
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  EXPECT_EQ(h->dtype(), DataType::kFloat16);
  EXPECT_EQ(values<uint16_t>(*h), (std::vector<uint16_t>{0x4000, 0x4200}));
  // bfloat16: -2.0 = 0xC000 → Abs 2.0 = 0x4000 (opset 13 allows bfloat16).
  auto b = run(make_node("Abs", 1), {bf16({1}, {0xC000})}, 13);
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  EXPECT_EQ(values<uint16_t>(*b), (std::vector<uint16_t>{0x4000}));
  // ...but not at opset 12.
  auto old = run(make_node("Abs", 1), {bf16({1}, {0xC000})}, 12);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kUnsupported);
}

TEST(ElementwiseUnary, UnsupportedDtypeIsAnErrorNotACrash) {
  auto r = run(make_node("Sqrt", 1), {i32({2}, {4, 9})});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("my_Sqrt"), std::string::npos) << r.status().message();
  auto s = run(make_node("Not", 1), {f32({1}, {1.0f})});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------------------
// Activations

TEST(ElementwiseActivation, ClosedForms) {
  expect_floats(unary(make_node("Relu", 1), {-1.0f, 0.0f, 2.0f, kNaN}), {0.0f, 0.0f, 2.0f, kNaN});
  ir::Node leaky = make_node("LeakyRelu", 1);
  set_float(leaky, "alpha", 0.1f);
  expect_floats(unary(leaky, {-2.0f, 3.0f}), {-0.2f, 3.0f});
  expect_floats(unary(make_node("LeakyRelu", 1), {-100.0f}), {-1.0f});  // alpha 0.01
  expect_floats(unary(make_node("Sigmoid", 1), {0.0f, 100.0f, -100.0f}), {0.5f, 1.0f, 0.0f});
  expect_floats(unary(make_node("Tanh", 1), {0.0f, 1.0f}), {0.0f, 0.7615941560f});
  expect_floats(unary(make_node("HardSigmoid", 1), {-3.0f, 0.0f, 1.0f, 3.0f}), {0.0f, 0.5f, 0.7f, 1.0f});
  expect_floats(unary(make_node("HardSwish", 1), {-4.0f, 0.0f, 1.0f, 4.0f}), {0.0f, 0.0f, 2.0f / 3.0f, 4.0f});
  // Elu(-1) = e^-1 - 1; Selu(1) = gamma; Selu(-1) = gamma * alpha * (e^-1 - 1).
  expect_floats(unary(make_node("Elu", 1), {-1.0f, 2.0f}), {-0.6321205588f, 2.0f});
  expect_floats(unary(make_node("Selu", 1), {1.0f, -1.0f}),
                {1.0507010221f, 1.0507010221f * 1.6732631922f * -0.6321205588f}, 1e-5f);
  ir::Node celu = make_node("Celu", 1);
  set_float(celu, "alpha", 2.0f);
  expect_floats(unary(celu, {-2.0f, 3.0f}), {2.0f * -0.6321205588f, 3.0f});
  expect_floats(unary(make_node("Softplus", 1), {0.0f, 100.0f}), {0.6931471806f, 100.0f});
  expect_floats(unary(make_node("Softsign", 1), {1.0f, -3.0f}), {0.5f, -0.75f});
  expect_floats(unary(make_node("ThresholdedRelu", 1), {0.5f, 1.0f, 2.0f}), {0.0f, 0.0f, 2.0f});
  ir::Node shrink = make_node("Shrink", 1);
  set_float(shrink, "lambd", 1.0f);
  set_float(shrink, "bias", 1.0f);
  expect_floats(unary(shrink, {-2.0f, -1.0f, 0.5f, 3.0f}), {-1.0f, 0.0f, 0.0f, 2.0f});
}

TEST(ElementwiseActivation, ReluIntegersOnlyFromOpset14) {
  auto r14 = run(make_node("Relu", 1), {i32({3}, {-5, 0, 5})}, 14);
  ASSERT_TRUE(r14.has_value()) << r14.status().to_string();
  EXPECT_EQ(values<int32_t>(*r14), (std::vector<int32_t>{0, 0, 5}));
  auto r13 = run(make_node("Relu", 1), {i32({3}, {-5, 0, 5})}, 13);
  ASSERT_FALSE(r13.has_value());
  EXPECT_EQ(r13.status().code(), StatusCode::kUnsupported);
}

TEST(ElementwiseActivation, ClipAttributesBeforeOpset11InputsAfter) {
  ir::Node c6 = make_node("Clip", 1);
  set_float(c6, "min", -1.0f);
  set_float(c6, "max", 1.0f);
  expect_floats(unary(c6, {-3.0f, 0.5f, 3.0f}, 6), {-1.0f, 0.5f, 1.0f});
  expect_floats(unary(make_node("Clip", 1), {-3e38f, 3e38f}, 6), {-3e38f, 3e38f});

  ir::Node c11 = make_node("Clip", 3);
  auto y = run(c11, {f32({3}, {-3.0f, 0.5f, 3.0f}), f32({}, {0.0f}), f32({}, {2.0f})}, 11);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_floats(values<float>(*y), {0.0f, 0.5f, 2.0f});
  // Only max given (min absent).
  auto ymax = run(c11, {f32({3}, {-3.0f, 0.5f, 3.0f}), Tensor(), f32({}, {0.0f})}, 11);
  ASSERT_TRUE(ymax.has_value()) << ymax.status().to_string();
  expect_floats(values<float>(*ymax), {-3.0f, 0.0f, 0.0f});

  // Integers from opset 12.
  auto i8 = make(DataType::kInt8, {4}, std::vector<int8_t>{-128, -5, 5, 127});
  auto lo = make(DataType::kInt8, {}, std::vector<int8_t>{-6});
  auto clipped = run(make_node("Clip", 2), {i8, lo}, 12);
  ASSERT_TRUE(clipped.has_value()) << clipped.status().to_string();
  EXPECT_EQ(values<int8_t>(*clipped), (std::vector<int8_t>{-6, -5, 5, 127}));
  auto old = run(make_node("Clip", 2), {i8, lo}, 11);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kUnsupported);
}

TEST(ElementwiseActivation, PReluBroadcastsSlopeToX) {
  auto x = f32({2, 3}, {-1.0f, 2.0f, -3.0f, 4.0f, -5.0f, -6.0f});
  auto y = run(make_node("PRelu", 2), {x, f32({3}, {0.1f, 0.2f, 0.3f})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_floats(values<float>(*y), {-0.1f, 2.0f, -0.9f, 4.0f, -1.0f, -1.8f});
  // Slope that would enlarge X is refused.
  auto bad = run(make_node("PRelu", 2), {x, f32({2, 1, 3}, {1, 1, 1, 1, 1, 1})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("my_PRelu"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Binary

TEST(ElementwiseBinary, AddBroadcasting) {
  // [2,3] + [3]
  auto y = run(make_node("Add", 2), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{2, 3}));
  expect_floats(values<float>(*y), {11, 22, 33, 14, 25, 36});
  // [2,1] + [1,3] → [2,3] (outer sum)
  auto z = run(make_node("Add", 2), {f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})});
  ASSERT_TRUE(z.has_value());
  EXPECT_EQ(z->shape(), (Shape{2, 3}));
  expect_floats(values<float>(*z), {11, 21, 31, 12, 22, 32});
  // scalar + [2]
  auto s = run(make_node("Sub", 2), {f32({}, {1}), f32({2}, {3, -4})});
  ASSERT_TRUE(s.has_value());
  expect_floats(values<float>(*s), {-2, 5});
  // [3,1,2] * [2,1] → [3,2,2]
  auto m = run(make_node("Mul", 2), {f32({3, 1, 2}, {1, 2, 3, 4, 5, 6}), f32({2, 1}, {1, -1})});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->shape(), (Shape{3, 2, 2}));
  expect_floats(values<float>(*m), {1, 2, -1, -2, 3, 4, -3, -4, 5, 6, -5, -6});
}

TEST(ElementwiseBinary, IncompatibleShapesNameTheNode) {
  auto y = run(make_node("Add", 2), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(y.has_value());
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("Add 'my_Add'"), std::string::npos) << y.status().message();
  auto mixed = run(make_node("Add", 2), {f32({1}, {1}), i32({1}, {1})});
  ASSERT_FALSE(mixed.has_value());
  EXPECT_EQ(mixed.status().code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, LegacyBroadcastAttributesBeforeOpset7) {
  // Add-6 with broadcast=1, axis=1: B [3] lines up with axis 1 of A [2,3,2].
  ir::Node add = make_node("Add", 2);
  set_int(add, "broadcast", 1);
  set_int(add, "axis", 1);
  auto y = run(add, {f32({2, 3, 2}, std::vector<float>(12, 1.0f)), f32({3}, {10, 20, 30})}, 6);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{2, 3, 2}));
  expect_floats(values<float>(*y), {11, 11, 21, 21, 31, 31, 11, 11, 21, 21, 31, 31});
  // Without broadcast=1 the shapes must match.
  auto strict = run(make_node("Add", 2), {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 2, 3})}, 6);
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.status().code(), StatusCode::kInvalidArgument);
  // PRelu-6: a 1-D slope of C values is per channel.
  auto p = run(make_node("PRelu", 2), {f32({1, 2, 2}, {-1, -1, -1, 4}), f32({2}, {0.5f, 2})}, 6);
  ASSERT_TRUE(p.has_value()) << p.status().to_string();
  expect_floats(values<float>(*p), {-0.5f, -0.5f, -2, 4});
}

TEST(ElementwiseBinary, IntegerArithmetic) {
  auto div = run(make_node("Div", 2), {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})});
  ASSERT_TRUE(div.has_value());
  EXPECT_EQ(values<int32_t>(*div), (std::vector<int32_t>{3, -3, -3, 3}));  // truncation
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  auto wrap = run(make_node("Div", 2), {i32({1}, {kMin}), i32({1}, {-1})});
  ASSERT_TRUE(wrap.has_value());
  EXPECT_EQ(values<int32_t>(*wrap), (std::vector<int32_t>{kMin}));
  auto zero = run(make_node("Div", 2), {i64({2}, {1, 2}), i64({2}, {1, 0})});
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  // uint8 from opset 14: 200 * 2 = 400 → 144 (mod 256); 10 - 20 → 246.
  auto mul = run(make_node("Mul", 2), {u8({2}, {200, 3}), u8({2}, {2, 5})}, 14);
  ASSERT_TRUE(mul.has_value());
  EXPECT_EQ(values<uint8_t>(*mul), (std::vector<uint8_t>{144, 15}));
  auto sub = run(make_node("Sub", 2), {u8({1}, {10}), u8({1}, {20})}, 14);
  ASSERT_TRUE(sub.has_value());
  EXPECT_EQ(values<uint8_t>(*sub), (std::vector<uint8_t>{246}));
  auto old = run(make_node("Add", 2), {u8({1}, {10}), u8({1}, {20})}, 13);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kUnsupported);
}

TEST(ElementwiseBinary, ModSignRules) {
  const auto a = i32({4}, {-7, 7, -7, 7});
  const auto b = i32({4}, {3, -3, -3, 3});
  auto py = run(make_node("Mod", 2), {a, b});
  ASSERT_TRUE(py.has_value()) << py.status().to_string();
  EXPECT_EQ(values<int32_t>(*py), (std::vector<int32_t>{2, -2, -1, 1}));
  ir::Node c = make_node("Mod", 2);
  set_int(c, "fmod", 1);
  auto cm = run(c, {a, b});
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ(values<int32_t>(*cm), (std::vector<int32_t>{-1, 1, -1, 1}));
  auto fm = run(c, {f32({2}, {-7.5f, 7.5f}), f32({2}, {2.0f, -2.0f})});
  ASSERT_TRUE(fm.has_value());
  expect_floats(values<float>(*fm), {-1.5f, 1.5f});
  auto bad = run(make_node("Mod", 2), {f32({1}, {1.0f}), f32({1}, {2.0f})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto zero = run(make_node("Mod", 2), {a, i32({4}, {1, 0, 1, 1})});
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, PowTypes) {
  auto ff = run(make_node("Pow", 2), {f32({3}, {2, 3, 4}), f32({3}, {3, 0.5f, -1})});
  ASSERT_TRUE(ff.has_value());
  expect_floats(values<float>(*ff), {8.0f, 1.7320508076f, 0.25f});
  auto sq = run(make_node("Pow", 2), {f32({2}, {3, -4}), f32({}, {2})});
  ASSERT_TRUE(sq.has_value());
  expect_floats(values<float>(*sq), {9, 16});
  // int32 base, int64 exponent (opset 12+): exact integer powers.
  auto ii = run(make_node("Pow", 2), {i32({5}, {2, -3, 5, 1, -1}), i64({5}, {10, 3, 0, -2, -3})});
  ASSERT_TRUE(ii.has_value()) << ii.status().to_string();
  EXPECT_EQ(ii->dtype(), DataType::kInt32);
  EXPECT_EQ(values<int32_t>(*ii), (std::vector<int32_t>{1024, -27, 1, 1, -1}));
  // float base, int32 exponent; int64 base, float exponent.
  auto fi = run(make_node("Pow", 2), {f32({2}, {2, 4}), i32({2}, {-1, 2})});
  ASSERT_TRUE(fi.has_value());
  expect_floats(values<float>(*fi), {0.5f, 16.0f});
  auto i_f = run(make_node("Pow", 2), {i64({2}, {4, 2}), f32({2}, {0.5f, 3.0f})});
  ASSERT_TRUE(i_f.has_value());
  EXPECT_EQ(values<int64_t>(*i_f), (std::vector<int64_t>{2, 8}));
  // Pow-7 needs one type for both inputs.
  auto old = run(make_node("Pow", 2), {f32({1}, {2}), f64({1}, {2})}, 7);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, BitShift) {
  ir::Node left = make_node("BitShift", 2);
  set_string(left, "direction", "LEFT");
  auto l = run(left, {u8({3}, {1, 255, 16}), u8({3}, {2, 1, 8})});
  ASSERT_TRUE(l.has_value()) << l.status().to_string();
  EXPECT_EQ(values<uint8_t>(*l), (std::vector<uint8_t>{4, 254, 0}));
  ir::Node right = make_node("BitShift", 2);
  set_string(right, "direction", "RIGHT");
  auto r = run(right, {make(DataType::kUInt32, {3}, std::vector<uint32_t>{16, 1, 0xFFFFFFFFu}),
                       make(DataType::kUInt32, {1}, std::vector<uint32_t>{2})});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(values<uint32_t>(*r), (std::vector<uint32_t>{4, 0, 0x3FFFFFFFu}));
  auto none = run(make_node("BitShift", 2), {u8({1}, {1}), u8({1}, {1})});
  ASSERT_FALSE(none.has_value());
}

TEST(ElementwiseBinary, LogicAndComparisons) {
  const auto a = bools({2, 2}, {1, 1, 0, 0});
  const auto b = bools({2}, {1, 0});
  auto and_ = run(make_node("And", 2), {a, b});
  ASSERT_TRUE(and_.has_value());
  EXPECT_EQ(values<uint8_t>(*and_), (std::vector<uint8_t>{1, 0, 0, 0}));
  auto or_ = run(make_node("Or", 2), {a, b});
  ASSERT_TRUE(or_.has_value());
  EXPECT_EQ(values<uint8_t>(*or_), (std::vector<uint8_t>{1, 1, 1, 0}));
  auto xor_ = run(make_node("Xor", 2), {a, b});
  ASSERT_TRUE(xor_.has_value());
  EXPECT_EQ(values<uint8_t>(*xor_), (std::vector<uint8_t>{0, 1, 1, 0}));

  auto eq = run(make_node("Equal", 2), {i64({3}, {1, 2, 3}), i64({1}, {2})});
  ASSERT_TRUE(eq.has_value());
  EXPECT_EQ(eq->dtype(), DataType::kBool);
  EXPECT_EQ(values<uint8_t>(*eq), (std::vector<uint8_t>{0, 1, 0}));
  auto eqb = run(make_node("Equal", 2), {a, b}, 7);
  ASSERT_TRUE(eqb.has_value());
  EXPECT_EQ(values<uint8_t>(*eqb), (std::vector<uint8_t>{1, 0, 0, 1}));
  auto lt = run(make_node("Less", 2), {f32({3}, {1, kNaN, 3}), f32({3}, {2, 1, 3})});
  ASSERT_TRUE(lt.has_value());
  EXPECT_EQ(values<uint8_t>(*lt), (std::vector<uint8_t>{1, 0, 0}));
  auto gt = run(make_node("Greater", 2), {i32({3}, {1, 5, 3}), i32({}, {3})});
  ASSERT_TRUE(gt.has_value());
  EXPECT_EQ(values<uint8_t>(*gt), (std::vector<uint8_t>{0, 1, 0}));
  auto le = run(make_node("LessOrEqual", 2), {i32({3}, {1, 5, 3}), i32({}, {3})});
  ASSERT_TRUE(le.has_value());
  EXPECT_EQ(values<uint8_t>(*le), (std::vector<uint8_t>{1, 0, 1}));
  auto ge = run(make_node("GreaterOrEqual", 2), {i32({3}, {1, 5, 3}), i32({}, {3})});
  ASSERT_TRUE(ge.has_value());
  EXPECT_EQ(values<uint8_t>(*ge), (std::vector<uint8_t>{0, 1, 1}));
  // Less on int32 only from opset 9; Equal on float only from 11.
  EXPECT_FALSE(run(make_node("Less", 2), {i32({1}, {1}), i32({1}, {2})}, 8).has_value());
  EXPECT_FALSE(run(make_node("Equal", 2), {f32({1}, {1}), f32({1}, {2})}, 10).has_value());
}

TEST(ElementwiseBinary, HalfTypes) {
  // float16 1.0 (0x3C00) + 0.5 (0x3800) = 1.5 (0x3E00); 2.0 (0x4000) + 0.5 = 2.5 (0x4100).
  auto h = run(make_node("Add", 2), {f16({2}, {0x3C00, 0x4000}), f16({1}, {0x3800})});
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  EXPECT_EQ(h->dtype(), DataType::kFloat16);
  EXPECT_EQ(values<uint16_t>(*h), (std::vector<uint16_t>{0x3E00, 0x4100}));
  // bfloat16 1.0 (0x3F80) * 3.0 (0x4040) = 3.0.
  auto b = run(make_node("Mul", 2), {bf16({1}, {0x3F80}), bf16({1}, {0x4040})});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values<uint16_t>(*b), (std::vector<uint16_t>{0x4040}));
  auto lt = run(make_node("Less", 2), {f16({2}, {0x3C00, 0x4000}), f16({1}, {0x3E00})});
  ASSERT_TRUE(lt.has_value());
  EXPECT_EQ(values<uint8_t>(*lt), (std::vector<uint8_t>{1, 0}));
}

// Large tensors take the threaded paths (row splitting, blocked rows); expected values come
// from the formula a[i][j] = i * 1000 + j, b[j] = -j, a + b = i * 1000.
TEST(ElementwiseBinary, LargeBroadcastWithThreads) {
  const int64_t rows = 5, cols = 40000;
  std::vector<float> a(rows * cols), b(cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) a[i * cols + j] = static_cast<float>(i * 1000 + j);
  for (int64_t j = 0; j < cols; ++j) b[j] = -static_cast<float>(j);
  auto y = run(make_node("Add", 2), {f32({rows, cols}, a), f32({cols}, b)}, 17, 2);
  ASSERT_TRUE(y.has_value());
  const auto out = values<float>(*y);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; j += 997) ASSERT_EQ(out[i * cols + j], i * 1000.0f);
  // Column broadcast [4096,1] * [1,64] with 2 threads: out[i][j] = i * j.
  std::vector<float> col(4096), row(64);
  for (int i = 0; i < 4096; ++i) col[i] = static_cast<float>(i);
  for (int j = 0; j < 64; ++j) row[j] = static_cast<float>(j);
  auto p = run(make_node("Mul", 2), {f32({4096, 1}, col), f32({1, 64}, row)}, 17, 2);
  ASSERT_TRUE(p.has_value());
  const auto prod = values<float>(*p);
  for (int i = 0; i < 4096; i += 37)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(prod[i * 64 + j], static_cast<float>(i * j));
}

TEST(ElementwiseBinary, Float32ArithmeticMatchesFloat64OnEveryBroadcastShape) {
  // float32 Add/Sub/Mul/Div run through the ElementwiseChain loop, float64 through binary_loop:
  // the float32 results must be the float64 results rounded (exact for Add/Sub/Mul of these
  // small values, correctly rounded for Div). Shapes: a per-channel operand of an nChw8c
  // value, input 0 broadcast, equal shapes, scalar, and last-axis operands whose rows merge into
  // long rows cut at multiples of a period that does not divide the 1024-element tile
  // (PP-OCRv4 rec at width 1280: [1,160,120] · [120] overflowed the tile buffer).
  const std::vector<std::pair<Shape, Shape>> shapes = {{{1, 3, 4, 5, 8}, {1, 3, 1, 1, 8}},
                                                       {{1, 3, 1, 1, 8}, {1, 3, 4, 5, 8}},
                                                       {{2, 7, 9}, {2, 7, 9}},
                                                       {{2, 7, 9}, {}},
                                                       {{6, 1}, {1, 5}},
                                                       {{1, 160, 120}, {120}},
                                                       {{120}, {1, 160, 120}},
                                                       {{3, 61, 200}, {1, 1, 200}},
                                                       {{1000, 7}, {7}}};
  for (const auto& [sa, sb] : shapes) {
    const auto count = [](const Shape& s) {
      return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
    };
    std::vector<float> a(count(sa)), b(count(sb));
    std::vector<double> a64(a.size()), b64(b.size());
    for (size_t i = 0; i < a.size(); ++i) a64[i] = a[i] = static_cast<float>(static_cast<int>(i * 7 % 23) - 11);
    for (size_t i = 0; i < b.size(); ++i) b64[i] = b[i] = static_cast<float>(static_cast<int>(i * 5 % 13) + 1);
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      auto y = run(make_node(op, 2), {f32(sa, a), f64(sb, b64)}, 17);
      EXPECT_FALSE(y.has_value()) << op << ": mixed dtypes must be refused";
      y = run(make_node(op, 2), {f32(sa, a), f32(sb, b)}, 17);
      auto y64 = run(make_node(op, 2), {f64(sa, a64), f64(sb, b64)}, 17);
      ASSERT_TRUE(y.has_value() && y64.has_value()) << op;
      ASSERT_EQ(y->shape(), y64->shape()) << op;
      const auto got = values<float>(*y);
      const auto want = values<double>(*y64);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<float>(want[i])) << op << " at " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Variadic and Where

TEST(ElementwiseVariadic, SumMeanMaxMin) {
  const auto a = f32({2, 2}, {1, 2, 3, 4});
  const auto b = f32({2}, {10, 20});
  const auto c = f32({}, {100});
  auto sum = run(make_node("Sum", 3), {a, b, c});
  ASSERT_TRUE(sum.has_value()) << sum.status().to_string();
  EXPECT_EQ(sum->shape(), (Shape{2, 2}));
  expect_floats(values<float>(*sum), {111, 122, 113, 124});
  auto mean = run(make_node("Mean", 3), {a, b, c});
  ASSERT_TRUE(mean.has_value());
  expect_floats(values<float>(*mean), {37, 122.0f / 3, 113.0f / 3, 124.0f / 3});
  auto max = run(make_node("Max", 2), {f32({3}, {1, kNaN, 5}), f32({3}, {2, 0, kNaN})});
  ASSERT_TRUE(max.has_value());
  expect_floats(values<float>(*max), {2, kNaN, kNaN});
  auto min = run(make_node("Min", 3), {i32({3}, {1, 9, 5}), i32({1}, {4}), i32({3}, {0, 8, 7})}, 12);
  ASSERT_TRUE(min.has_value());
  EXPECT_EQ(values<int32_t>(*min), (std::vector<int32_t>{0, 4, 4}));
  auto one = run(make_node("Max", 1), {a});
  ASSERT_TRUE(one.has_value());
  expect_floats(values<float>(*one), {1, 2, 3, 4});
  // Max on int32 only from opset 12; Sum-6 does not broadcast.
  EXPECT_FALSE(run(make_node("Max", 2), {i32({1}, {1}), i32({1}, {2})}, 11).has_value());
  auto nob = run(make_node("Sum", 2), {a, b}, 7);
  ASSERT_FALSE(nob.has_value());
  EXPECT_EQ(nob.status().code(), StatusCode::kInvalidArgument);
  auto bad = run(make_node("Sum", 2), {a, f32({3}, {1, 2, 3})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ElementwiseVariadic, WhereBroadcastsThreeWays) {
  auto y = run(make_node("Where", 3), {bools({2, 1}, {1, 0}), i64({1, 3}, {1, 2, 3}), i64({}, {-1})});
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  auto h = run(make_node("Where", 3), {bools({2}, {0, 1}), f16({2}, {0x3C00, 0x4000}), f16({2}, {0x3800, 0x3800})});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(values<uint16_t>(*h), (std::vector<uint16_t>{0x3800, 0x4000}));
  auto bad = run(make_node("Where", 3), {f32({1}, {1}), f32({1}, {1}), f32({1}, {2})});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------------------
// Cast

Expected<Tensor> cast(const Tensor& x, DataType to, int64_t opset = 17) {
  ir::Node node = make_node("Cast", 1);
  set_int(node, "to", static_cast<int64_t>(to));
  return run(node, {x}, opset);
}

TEST(ElementwiseCast, NumericConversions) {
  auto t = cast(f32({4}, {1.9f, -1.9f, 0.5f, kNaN}), DataType::kInt32);
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(values<int32_t>(*t), (std::vector<int32_t>{1, -1, 0, 0}));
  auto w = cast(f32({2}, {-1.0f, 300.0f}), DataType::kUInt8);  // modulo 256
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(values<uint8_t>(*w), (std::vector<uint8_t>{255, 44}));
  auto b = cast(f32({4}, {0.0f, -0.0f, 2.0f, kNaN}), DataType::kBool);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values<uint8_t>(*b), (std::vector<uint8_t>{0, 0, 1, 1}));
  auto fb = cast(bools({2}, {1, 0}), DataType::kFloat64);
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(values<double>(*fb), (std::vector<double>{1.0, 0.0}));
  auto n = cast(i64({2}, {-1, 65537}), DataType::kUInt16);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(values<uint16_t>(*n), (std::vector<uint16_t>{65535, 1}));
  auto big = cast(f64({1}, {1e300}), DataType::kFloat32);
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(values<float>(*big)[0], kInf);
}

TEST(ElementwiseCast, SixteenBitFloats) {
  // 1.0 → 0x3C00, -2.0 → 0xC000, 65504 (max half) → 0x7BFF; 1e6 overflows to +inf 0x7C00.
  auto h = cast(f32({4}, {1.0f, -2.0f, 65504.0f, 1e6f}), DataType::kFloat16);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(values<uint16_t>(*h), (std::vector<uint16_t>{0x3C00, 0xC000, 0x7BFF, 0x7C00}));
  auto back = cast(f16({2}, {0x3E00, 0xC100}), DataType::kInt32);  // 1.5, -2.5
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(values<int32_t>(*back), (std::vector<int32_t>{1, -2}));
  auto bf = cast(f32({2}, {1.0f, -3.0f}), DataType::kBFloat16, 13);
  ASSERT_TRUE(bf.has_value());
  EXPECT_EQ(values<uint16_t>(*bf), (std::vector<uint16_t>{0x3F80, 0xC040}));
  auto old = cast(f32({1}, {1.0f}), DataType::kBFloat16, 12);
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.status().code(), StatusCode::kUnsupported);
  auto str = cast(f32({1}, {1.0f}), DataType::kString);
  ASSERT_FALSE(str.has_value());
  EXPECT_EQ(str.status().code(), StatusCode::kUnsupported);
}

TEST(ElementwiseCast, CastLikeTakesTheSecondInputsDtype) {
  auto y = run(make_node("CastLike", 2), {f32({2}, {2.7f, -2.7f}), i64({0}, {})}, 15);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  EXPECT_EQ(y->dtype(), DataType::kInt64);
  EXPECT_EQ(values<int64_t>(*y), (std::vector<int64_t>{2, -2}));
}

}  // namespace kernels_elementwise_test
}  // namespace edgemm
