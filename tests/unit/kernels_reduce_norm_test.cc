// Reductions, softmax family, TopK, normalizations and Einsum (src/kernels/cpu/reduce.cc,
// softmax.cc, topk.cc, normalization.cc, einsum.cc) run through runtime::run_node. Expected
// values are hand-computed (closed forms written next to each case) or come from plain loops
// written in this test (a brute-force einsum over all label assignments), never from an
// earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "kernels/cpu/onednn.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_reduce_norm_test {  // named for the file: unity batches merge anonymous namespaces

constexpr float kInf = std::numeric_limits<float>::infinity();

using namespace testutil;  // NOLINT: test helpers

Tensor random_f32(Shape shape, uint32_t seed) {
  auto t = Tensor::create(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.has_value());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->element_count(); ++i) t->data<float>()[i] = dist(rng);
  return *t;
}

ir::Node node_of(const std::string& op, int inputs, int outputs = 1) {
  ir::Node node;
  node.op_type = op;
  node.name = "my_" + op;
  for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
  for (int i = 0; i < outputs; ++i) node.outputs.push_back("y" + std::to_string(i));
  return node;
}
void set_int(ir::Node& n, const std::string& key, int64_t v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = v;
  n.attributes[key] = a;
}
void set_ints(ir::Node& n, const std::string& key, std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
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

/// Runs the node; all outputs.
std::vector<Tensor> run_all(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset, int threads = 1) {
  auto out = runtime::run_node(node, inputs, opset, threads);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? *out : std::vector<Tensor>(node.outputs.size());
}
Tensor run1(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset, int threads = 1) {
  return run_all(node, inputs, opset, threads)[0];
}
Status run_error(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset) {
  auto out = runtime::run_node(node, inputs, opset, 1);
  EXPECT_FALSE(out.has_value());
  return out.status();
}

void expect_f32(const Tensor& got, const Shape& shape, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(shape));
  ASSERT_EQ(got.dtype(), DataType::kFloat32);
  const auto v = values<float>(got);
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(v[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(v[i], want[i], tol * std::max(1.0f, std::abs(want[i]))) << "element " << i;
    }
  }
}
template <typename T>
void expect_exact(const Tensor& got, DataType dt, const Shape& shape, const std::vector<T>& want) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(shape));
  ASSERT_EQ(got.dtype(), dt);
  EXPECT_EQ(values<T>(got), want);
}

ir::Node reduce_node(const std::string& op, std::vector<int64_t> axes, int keepdims) {
  ir::Node n = node_of(op, 1);
  if (!axes.empty()) set_ints(n, "axes", axes);
  set_int(n, "keepdims", keepdims);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Reductions.

TEST(ReduceTest, SumAxesAttributeBeforeOpset13) {
  // [[1,2,3],[4,5,6]] summed over axis 1: [6, 15].
  auto y = run1(reduce_node("ReduceSum", {1}, 1), {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, 11);
  expect_f32(y, {2, 1}, {6, 15});
}

TEST(ReduceTest, SumAxesInputFromOpset13) {
  ir::Node n = node_of("ReduceSum", 2);
  set_int(n, "keepdims", 0);
  auto y = run1(n, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1}, {0})}, 13);
  expect_f32(y, {3}, {5, 7, 9});
  // Absent axes: every axis.
  ir::Node all = node_of("ReduceSum", 1);
  expect_f32(run1(all, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, 13), {1, 1}, {21});
}

TEST(ReduceTest, SumEmptyAxesNoop) {
  ir::Node n = node_of("ReduceSum", 2);
  set_int(n, "noop_with_empty_axes", 1);
  auto y = run1(n, {f32({2, 2}, {1, 2, 3, 4}), i64({0}, {})}, 13);
  expect_f32(y, {2, 2}, {1, 2, 3, 4});
  // Without noop, empty axes reduce everything.
  ir::Node all = node_of("ReduceSum", 2);
  set_int(all, "keepdims", 0);
  expect_f32(run1(all, {f32({2, 2}, {1, 2, 3, 4}), i64({0}, {})}, 13), {}, {10});
}

// Opset 18: noop_with_empty_axes reduces no axis, so each element is a set of one (ONNX's
// reference and ONNX Runtime): x² for SumSquare, |x| for L1.
TEST(ReduceTest, Opset18NoopKeepsTheElementwisePart) {
  for (const auto& [op, expected] :
       {std::pair<std::string, std::vector<float>>{"ReduceSumSquare", {1, 4, 9, 16}}, {"ReduceL1", {1, 2, 3, 4}}}) {
    ir::Node n = node_of(op, 2);
    set_int(n, "noop_with_empty_axes", 1);
    expect_f32(run1(n, {f32({2, 2}, {-1, 2, -3, 4}), i64({0}, {})}, 18), {2, 2}, expected);
  }
}

TEST(ReduceTest, MeanMaxMinProd) {
  const Tensor x = f32({2, 3}, {1, -2, 3, -4, 5, -6});
  expect_f32(run1(reduce_node("ReduceMean", {-1}, 0), {x}, 13), {2}, {2.0f / 3, -5.0f / 3});
  expect_f32(run1(reduce_node("ReduceMax", {1}, 0), {x}, 13), {2}, {3, 5});
  expect_f32(run1(reduce_node("ReduceMin", {0}, 1), {x}, 13), {1, 3}, {-4, -2, -6});
  expect_f32(run1(reduce_node("ReduceProd", {}, 0), {x}, 13), {}, {-720});
}

TEST(ReduceTest, NormsAndLogs) {
  expect_f32(run1(reduce_node("ReduceL1", {}, 0), {f32({4}, {1, -2, 3, -4})}, 13), {}, {10});
  expect_f32(run1(reduce_node("ReduceL2", {}, 0), {f32({2}, {3, -4})}, 13), {}, {5});
  expect_f32(run1(reduce_node("ReduceSumSquare", {}, 0), {f32({3}, {1, 2, -3})}, 13), {}, {14});
  expect_f32(run1(reduce_node("ReduceLogSum", {}, 0), {f32({3}, {1, 2, 3})}, 13), {}, {std::log(6.0f)});
  // log(e^0 + e^ln3) = ln 4.
  expect_f32(run1(reduce_node("ReduceLogSumExp", {}, 0), {f32({2}, {0, std::log(3.0f)})}, 13), {}, {std::log(4.0f)});
  // Stable for large inputs: log(2 e^1000) = 1000 + ln 2.
  expect_f32(run1(reduce_node("ReduceLogSumExp", {}, 0), {f32({2}, {1000, 1000})}, 13), {}, {1000.0f + std::log(2.0f)});
}

TEST(ReduceTest, MiddleAndSplitAxes) {
  // x[a][j][b] = 6a + 2j + b, shape [2,3,2].
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  const Tensor x = f32({2, 3, 2}, v);
  // Over j: a=0 -> (0+2+4, 1+3+5) = (6, 9); a=1 -> (24, 27).
  expect_f32(run1(reduce_node("ReduceSum", {1}, 1), {x}, 11), {2, 1, 2}, {6, 9, 24, 27});
  // Over a and b: sum = 14 + 8j.
  expect_f32(run1(reduce_node("ReduceSum", {0, 2}, 0), {x}, 11), {3}, {14, 22, 30});
  expect_f32(run1(reduce_node("ReduceMax", {2, 0}, 1), {x}, 11), {1, 3, 1}, {7, 9, 11});
  // LogSumExp over the middle axis of [1,2,2]: log(e^0 + e^ln3) = ln 4 in both columns.
  expect_f32(run1(reduce_node("ReduceLogSumExp", {1}, 0), {f32({1, 2, 2}, {0, 0, std::log(3.0f), std::log(3.0f)})}, 13),
             {1, 2}, {std::log(4.0f), std::log(4.0f)});
}

TEST(ReduceTest, IntegerAndDoubleTypes) {
  expect_exact<int64_t>(run1(reduce_node("ReduceSum", {1}, 0), {i64({2, 2}, {int64_t{1} << 40, 1, -3, 4})}, 11),
                        DataType::kInt64, {2}, {(int64_t{1} << 40) + 1, 1});
  expect_exact<int32_t>(run1(reduce_node("ReduceMax", {0}, 0), {i32({2, 2}, {1, 7, 5, -2})}, 13), DataType::kInt32, {2},
                        {5, 7});
  expect_exact<int8_t>(run1(reduce_node("ReduceMin", {}, 0), {i8({3}, {4, -9, 2})}, 12), DataType::kInt8, {}, {-9});
  auto mean = run1(reduce_node("ReduceMean", {}, 0), {f64({4}, {0.1, 0.2, 0.3, 0.4})}, 13);
  ASSERT_EQ(mean.dtype(), DataType::kFloat64);
  EXPECT_NEAR(values<double>(mean)[0], 0.25, 1e-15);
}

TEST(ReduceTest, EmptyReducedSetGivesIdentity) {
  const Tensor x = f32({2, 0}, {});
  expect_f32(run1(reduce_node("ReduceSum", {1}, 0), {x}, 11), {2}, {0, 0});
  expect_f32(run1(reduce_node("ReduceProd", {1}, 0), {x}, 11), {2}, {1, 1});
  expect_f32(run1(reduce_node("ReduceMax", {1}, 0), {x}, 11), {2}, {-kInf, -kInf});
  expect_f32(run1(reduce_node("ReduceLogSumExp", {1}, 0), {x}, 11), {2}, {-kInf, -kInf});
}

TEST(ReduceTest, Opset18TakesAxesInput) {
  ir::Node n = node_of("ReduceMean", 2);
  set_int(n, "keepdims", 0);
  expect_f32(run1(n, {f32({2, 2}, {1, 2, 3, 4}), i64({1}, {1})}, 18), {2}, {1.5f, 3.5f});
}

TEST(ReduceTest, ThreadedMatchesSerial) {
  const Tensor x = random_f32({64, 4096}, 7);
  auto one = run1(reduce_node("ReduceSum", {1}, 0), {x}, 11, 1);
  auto two = run1(reduce_node("ReduceSum", {1}, 0), {x}, 11, 2);
  // Row sums from a plain double loop.
  std::vector<float> want(64);
  for (int r = 0; r < 64; ++r) {
    double s = 0;
    for (int c = 0; c < 4096; ++c) s += x.data<float>()[r * 4096 + c];
    want[r] = static_cast<float>(s);
  }
  expect_f32(one, {64}, want, 1e-5f);
  expect_f32(two, {64}, want, 1e-5f);
}

TEST(ReduceTest, Errors) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Status bad_axis = run_error(reduce_node("ReduceSum", {2}, 1), {x}, 11);
  EXPECT_EQ(bad_axis.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_axis.message().find("my_ReduceSum"), std::string::npos) << bad_axis.message();
  EXPECT_NE(bad_axis.message().find("axis 2"), std::string::npos) << bad_axis.message();
  EXPECT_EQ(run_error(reduce_node("ReduceMean", {1, -1}, 1), {x}, 13).code(), StatusCode::kInvalidArgument);
  Status dtype = run_error(reduce_node("ReduceSum", {}, 1), {make<uint8_t>(DataType::kBool, {2}, {1, 0})}, 13);
  EXPECT_EQ(dtype.code(), StatusCode::kUnsupported);
  EXPECT_NE(dtype.message().find("bool"), std::string::npos) << dtype.message();
}

TEST(ArgReduceTest, ArgMaxArgMin) {
  const Tensor x = f32({2, 3}, {1, 3, 3, 5, 2, 5});
  ir::Node n = node_of("ArgMax", 1);
  set_int(n, "axis", 1);
  expect_exact<int64_t>(run1(n, {x}, 13), DataType::kInt64, {2, 1}, {1, 0});
  set_int(n, "select_last_index", 1);
  set_int(n, "keepdims", 0);
  expect_exact<int64_t>(run1(n, {x}, 13), DataType::kInt64, {2}, {2, 2});
  ir::Node m = node_of("ArgMin", 1);  // axis 0 by default
  expect_exact<int64_t>(run1(m, {x}, 11), DataType::kInt64, {1, 3}, {0, 1, 0});
  set_int(m, "axis", -1);
  expect_exact<int64_t>(run1(m, {i64({2, 2}, {9, -9, 4, 4})}, 13), DataType::kInt64, {2, 1}, {1, 0});
  set_int(n, "axis", 2);
  Status bad = run_error(n, {x}, 13);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("my_ArgMax"), std::string::npos) << bad.message();
}

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax.

TEST(SoftmaxTest, LastAxis) {
  // exp(x) = 1, 2, 3 -> 1/6, 2/6, 3/6.
  const Tensor x = f32({1, 3}, {0, std::log(2.0f), std::log(3.0f)});
  expect_f32(run1(node_of("Softmax", 1), {x}, 13), {1, 3}, {1 / 6.0f, 2 / 6.0f, 3 / 6.0f});
  expect_f32(run1(node_of("LogSoftmax", 1), {x}, 13), {1, 3},
             {std::log(1 / 6.0f), std::log(2 / 6.0f), std::log(3 / 6.0f)});
}

TEST(SoftmaxTest, LargeInputsAreStable) {
  // Same as softmax([0,1,2]): e^k / (1 + e + e^2).
  const Tensor x = f32({3}, {1000, 1001, 1002});
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  expect_f32(run1(node_of("Softmax", 1), {x}, 13), {3},
             {float(1 / z), float(std::exp(1.0) / z), float(std::exp(2.0) / z)});
  // x - max - log(sum e^(x - max)) = x - 1002 - log(z e^-2) = k - log z for k = 0, 1, 2.
  expect_f32(run1(node_of("LogSoftmax", 1), {x}, 13), {3},
             {float(-std::log(z)), float(1 - std::log(z)), float(2 - std::log(z))});
}

TEST(SoftmaxTest, MaskedInfinity) {
  expect_f32(run1(node_of("Softmax", 1), {f32({3}, {0, -kInf, 0})}, 13), {3}, {0.5f, 0, 0.5f});
}

TEST(SoftmaxTest, Coerce2dBeforeOpset13AndSingleAxisFrom13) {
  // [2,2,2]: batch 0 all zeros; batch 1 = ln of [[1,2],[3,4]].
  const Tensor x = f32({2, 2, 2}, {0, 0, 0, 0, 0, std::log(2.0f), std::log(3.0f), std::log(4.0f)});
  ir::Node n = node_of("Softmax", 1);
  set_int(n, "axis", 1);
  // Opset 11: rows of 4 elements.
  expect_f32(run1(n, {x}, 11), {2, 2, 2}, {0.25f, 0.25f, 0.25f, 0.25f, 0.1f, 0.2f, 0.3f, 0.4f});
  // Opset 13: along axis 1 only (columns of 2).
  expect_f32(run1(n, {x}, 13), {2, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f, 0.25f, 2 / 6.0f, 0.75f, 4 / 6.0f});
  // Default axis is 1 before 13 and -1 from 13.
  expect_f32(run1(node_of("Softmax", 1), {x}, 9), {2, 2, 2}, {0.25f, 0.25f, 0.25f, 0.25f, 0.1f, 0.2f, 0.3f, 0.4f});
  expect_f32(run1(node_of("Softmax", 1), {x}, 13), {2, 2, 2},
             {0.5f, 0.5f, 0.5f, 0.5f, 1 / 3.0f, 2 / 3.0f, 3 / 7.0f, 4 / 7.0f});
}

TEST(SoftmaxTest, LongRowsMatchFormula) {
  // 3 rows of 1003 elements (vector path plus tail) and a strided axis.
  std::vector<float> v(3 * 1003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 101) * 0.1f - 5;
  const Tensor x = f32({3, 1003}, v);
  std::vector<float> want(v.size()), want_log(v.size());
  for (int r = 0; r < 3; ++r) {
    double m = -1e30, s = 0;
    for (int c = 0; c < 1003; ++c) m = std::max(m, double(v[r * 1003 + c]));
    for (int c = 0; c < 1003; ++c) s += std::exp(double(v[r * 1003 + c]) - m);
    for (int c = 0; c < 1003; ++c) {
      want[r * 1003 + c] = float(std::exp(double(v[r * 1003 + c]) - m) / s);
      want_log[r * 1003 + c] = float(double(v[r * 1003 + c]) - m - std::log(s));
    }
  }
  expect_f32(run1(node_of("Softmax", 1), {x}, 13, 2), {3, 1003}, want, 1e-5f);
  expect_f32(run1(node_of("LogSoftmax", 1), {x}, 13, 2), {3, 1003}, want_log, 1e-5f);
  // Along axis 0 of the transpose ([1003, 3]).
  std::vector<float> vt(v.size()), want_t(v.size());
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 1003; ++c) {
      vt[c * 3 + r] = v[r * 1003 + c];
      want_t[c * 3 + r] = want[r * 1003 + c];
    }
  }
  ir::Node n = node_of("Softmax", 1);
  set_int(n, "axis", 0);
  expect_f32(run1(n, {f32({1003, 3}, vt)}, 13), {1003, 3}, want_t, 1e-5f);
}

TEST(SoftmaxTest, WideRangeRelativeAccuracyAndNaN) {
  // Terms from e^0 down to e^-75 keep ~1e-6 relative accuracy against the double formula (the
  // float32 path uses exp_approx); terms below e^-80 may come out as up to e^-80/sum instead of
  // their (denormal or zero) value. A NaN makes its whole row NaN.
  std::vector<float> row;
  for (int i = 0; i < 1000; ++i) row.push_back(-0.075f * static_cast<float>(i));
  for (float v : {-85.f, -100.f, -200.f, -1e30f}) row.push_back(v);
  const int64_t n = static_cast<int64_t>(row.size());
  std::vector<float> v = row;
  v.insert(v.end(), row.begin(), row.end());
  v[n + 17] = std::nanf("");
  const Tensor y = run1(node_of("Softmax", 1), {f32({2, n}, v)}, 13);
  const float* got = y.data<float>();
  double s = 0;
  for (float x : row) s += std::exp(static_cast<double>(x));
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::exp(static_cast<double>(row[i])) / s;
    if (row[i] >= -75.f) {
      EXPECT_NEAR(got[i], want, 1e-6 * want) << "element " << i;
    } else {
      EXPECT_LE(got[i], std::exp(-80.0) / s * 1.001) << "element " << i;
      EXPECT_GE(got[i], 0.f) << "element " << i;
    }
    EXPECT_TRUE(std::isnan(got[n + i])) << "element " << n + i;
  }
}

TEST(SoftmaxTest, Hardmax) {
  // First maximum wins.
  expect_f32(run1(node_of("Hardmax", 1), {f32({2, 3}, {1, 3, 3, 7, 2, 7})}, 13), {2, 3}, {0, 1, 0, 1, 0, 0});
  ir::Node n = node_of("Hardmax", 1);
  set_int(n, "axis", 0);
  expect_f32(run1(n, {f32({2, 2}, {1, 5, 4, 5})}, 13), {2, 2}, {0, 1, 1, 0});
  // Opset 11 coerces [2,2] at axis 0 into one row of 4.
  expect_f32(run1(n, {f32({2, 2}, {1, 5, 4, 5})}, 11), {2, 2}, {0, 1, 0, 0});
}

TEST(SoftmaxTest, DoubleAndErrors) {
  auto y = run1(node_of("Softmax", 1), {f64({2}, {0, std::log(3.0)})}, 13);
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  EXPECT_NEAR(values<double>(y)[0], 0.25, 1e-14);
  EXPECT_NEAR(values<double>(y)[1], 0.75, 1e-14);
  ir::Node n = node_of("Softmax", 1);
  set_int(n, "axis", 2);
  Status bad = run_error(n, {f32({2, 2}, {1, 2, 3, 4})}, 13);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("my_Softmax"), std::string::npos) << bad.message();
  EXPECT_EQ(run_error(node_of("Softmax", 1), {i32({2}, {1, 2})}, 13).code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------------------------
// TopK.

TEST(TopKTest, LargestSmallestAndTies) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  ir::Node n = node_of("TopK", 2, 2);
  set_int(n, "axis", 1);
  auto out = run_all(n, {f32({3, 4}, v), i64({1}, {3})}, 11);
  expect_f32(out[0], {3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9});
  expect_exact<int64_t>(out[1], DataType::kInt64, {3, 3}, {3, 2, 1, 3, 2, 1, 3, 2, 1});
  // Ties keep the lower index first.
  ir::Node t = node_of("TopK", 2, 2);
  auto ties = run_all(t, {f32({4}, {1, 3, 3, 2}), i64({1}, {2})}, 11);
  expect_f32(ties[0], {2}, {3, 3});
  expect_exact<int64_t>(ties[1], DataType::kInt64, {2}, {1, 2});
  set_int(t, "largest", 0);
  auto small = run_all(t, {f32({4}, {2, 1, 1, 0}), i64({1}, {3})}, 11);
  expect_f32(small[0], {3}, {0, 1, 1});
  expect_exact<int64_t>(small[1], DataType::kInt64, {3}, {3, 1, 2});
}

TEST(TopKTest, StridedAxisKAttributeAndInts) {
  ir::Node n = node_of("TopK", 1, 2);
  set_int(n, "axis", 0);
  set_int(n, "k", 2);  // opset 1: k is an attribute
  auto out = run_all(n, {f32({3, 2}, {1, 6, 5, 2, 3, 4})}, 1);
  expect_f32(out[0], {2, 2}, {5, 6, 3, 4});
  expect_exact<int64_t>(out[1], DataType::kInt64, {2, 2}, {1, 0, 2, 2});
  ir::Node m = node_of("TopK", 2, 2);
  auto ints = run_all(m, {i64({5}, {4, -1, 9, 4, 0}), i64({1}, {2})}, 10);
  expect_exact<int64_t>(ints[0], DataType::kInt64, {2}, {9, 4});
  expect_exact<int64_t>(ints[1], DataType::kInt64, {2}, {2, 0});
}

TEST(TopKTest, Errors) {
  ir::Node n = node_of("TopK", 2, 2);
  Status big = run_error(n, {f32({3}, {1, 2, 3}), i64({1}, {4})}, 11);
  EXPECT_EQ(big.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(big.message().find("my_TopK"), std::string::npos) << big.message();
  EXPECT_EQ(run_error(n, {f32({3}, {1, 2, 3}), i64({1}, {-1})}, 11).code(), StatusCode::kInvalidArgument);
  set_int(n, "axis", 1);
  EXPECT_EQ(run_error(n, {f32({3}, {1, 2, 3}), i64({1}, {1})}, 11).code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Normalizations.

TEST(NormalizationTest, LayerNormLastAxisWithStatistics) {
  // Rows [1,2,3] (mean 2, var 2/3) and [2,4,6] (mean 4, var 8/3); epsilon 0.
  ir::Node n = node_of("LayerNormalization", 3, 3);
  set_float(n, "epsilon", 0.0f);
  auto out = run_all(n, {f32({2, 3}, {1, 2, 3, 2, 4, 6}), f32({3}, {1, 2, 3}), f32({3}, {0.5f, 0, -0.5f})}, 17);
  const float k = std::sqrt(1.5f);  // (x - mean) * inv_std for the ends of each row
  expect_f32(out[0], {2, 3}, {-k + 0.5f, 0, 3 * k - 0.5f, -k + 0.5f, 0, 3 * k - 0.5f});
  expect_f32(out[1], {2, 1}, {2, 4});
  expect_f32(out[2], {2, 1}, {std::sqrt(1.5f), std::sqrt(1.5f) / 2});
}

TEST(NormalizationTest, LayerNormAxisZeroBroadcastScaleNoBias) {
  // Whole tensor [1,2,3,4] normalized (mean 2.5, var 1.25), Scale [1] broadcast, no B.
  ir::Node n = node_of("LayerNormalization", 2, 1);
  set_int(n, "axis", 0);
  set_float(n, "epsilon", 0.0f);
  const float s = 1 / std::sqrt(1.25f);
  expect_f32(run1(n, {f32({2, 2}, {1, 2, 3, 4}), f32({1}, {2})}, 17), {2, 2}, {-3 * s, -s, s, 3 * s});
  // LayerNormalization does not exist before opset 17.
  EXPECT_EQ(run_error(n, {f32({2, 2}, {1, 2, 3, 4}), f32({1}, {2})}, 16).code(), StatusCode::kUnsupported);
  Status bad = run_error(n, {f32({2, 2}, {1, 2, 3, 4}), f32({3}, {1, 1, 1})}, 17);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("my_LayerNormalization"), std::string::npos) << bad.message();
}

TEST(NormalizationTest, BatchNormInference) {
  // c0: (x - 1) / 2; c1: 2 (x - 3) + 1 (epsilon 0).
  ir::Node n = node_of("BatchNormalization", 5);
  set_float(n, "epsilon", 0.0f);
  const std::vector<Tensor> in = {f32({1, 2, 1, 2}, {1, 2, 3, 4}), f32({2}, {1, 2}), f32({2}, {0, 1}), f32({2}, {1, 3}),
                                  f32({2}, {4, 1})};
  expect_f32(run1(n, in, 15), {1, 2, 1, 2}, {0, 0.5f, 1, 3});
  expect_f32(run1(n, in, 9), {1, 2, 1, 2}, {0, 0.5f, 1, 3});
  ir::Node train = n;
  set_int(train, "training_mode", 1);
  Status t = run_error(train, in, 15);
  EXPECT_EQ(t.code(), StatusCode::kUnsupported);
  EXPECT_NE(t.message().find("training"), std::string::npos) << t.message();
  ir::Node old_train = node_of("BatchNormalization", 5, 5);
  EXPECT_EQ(run_error(old_train, in, 9).code(), StatusCode::kUnsupported);
  std::vector<Tensor> bad_in = in;
  bad_in[1] = f32({3}, {1, 2, 3});
  Status bad = run_error(n, bad_in, 15);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("scale"), std::string::npos) << bad.message();
}

TEST(NormalizationTest, InstanceNorm) {
  // Channel 0 [1,2,3] -> +-sqrt(1.5) (epsilon 1e-5 changes it by < 1e-5); channel 1 is
  // constant, so only B remains.
  auto y = run1(node_of("InstanceNormalization", 3),
                {f32({1, 2, 1, 3}, {1, 2, 3, 2, 2, 2}), f32({2}, {1, 1}), f32({2}, {0, 5})}, 6);
  const float k = 1 / std::sqrt(2.0f / 3 + 1e-5f);
  expect_f32(y, {1, 2, 1, 3}, {-k, 0, k, 5, 5, 5});
}

TEST(NormalizationTest, LpNorm) {
  expect_f32(run1(node_of("LpNormalization", 1), {f32({2, 2}, {3, 4, 0, 0})}, 1), {2, 2}, {0.6f, 0.8f, 0, 0});
  ir::Node n = node_of("LpNormalization", 1);
  set_int(n, "axis", 0);
  set_int(n, "p", 1);
  expect_f32(run1(n, {f32({2, 2}, {1, 3, 3, 1})}, 1), {2, 2}, {0.25f, 0.75f, 0.75f, 0.25f});
  set_int(n, "p", 3);
  EXPECT_EQ(run_error(n, {f32({2, 2}, {1, 3, 3, 1})}, 1).code(), StatusCode::kInvalidModel);
}

TEST(NormalizationTest, MeanVarianceNormalization) {
  // Default axes [0,2,3]: channel 0 {1,3} -> {-1,1}; channel 1 {5,5} -> 0.
  expect_f32(run1(node_of("MeanVarianceNormalization", 1), {f32({1, 2, 1, 2}, {1, 3, 5, 5})}, 13), {1, 2, 1, 2},
             {-1, 1, 0, 0});
  ir::Node n = node_of("MeanVarianceNormalization", 1);
  set_ints(n, "axes", {1});
  // Over axis 1 of [2,2]: rows {1,3} and {2,6}.
  expect_f32(run1(n, {f32({2, 2}, {1, 3, 2, 6})}, 9), {2, 2}, {-1, 1, -1, 1});
}

// ---------------------------------------------------------------------------------------------
// Einsum.

/// Brute-force einsum over letter-only terms with an explicit output: loops over every
/// assignment of all labels.
std::vector<double> brute_einsum(const std::string& eq, const std::vector<Tensor>& xs) {
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
  for (size_t s = 0;;) {
    const size_t c = lhs.find(',', s);
    terms.push_back(lhs.substr(s, c - s));
    if (c == std::string::npos) break;
    s = c + 1;
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t a = 0; a < terms[i].size(); ++a) size[terms[i][a]] = xs[i].shape()[a];
  }
  std::vector<char> labels;
  for (auto& [c, s] : size) labels.push_back(c);
  int64_t out_count = 1;
  for (char c : out) out_count *= size[c];
  std::vector<double> result(static_cast<size_t>(out_count), 0.0);
  std::map<char, int64_t> at;
  for (char c : labels) at[c] = 0;
  while (true) {
    double prod = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t off = 0;
      for (size_t a = 0; a < terms[i].size(); ++a) off = off * xs[i].shape()[a] + at[terms[i][a]];
      prod *= xs[i].data<float>()[off];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[o] += prod;
    size_t k = labels.size();
    while (k > 0) {
      --k;
      if (++at[labels[k]] < size[labels[k]]) break;
      at[labels[k]] = 0;
      if (k == 0) return result;
    }
    if (labels.empty()) return result;
  }
}

Tensor einsum(const std::string& eq, const std::vector<Tensor>& xs, int threads = 1) {
  ir::Node n = node_of("Einsum", static_cast<int>(xs.size()));
  set_string(n, "equation", eq);
  return run1(n, xs, 12, threads);
}

void expect_brute(const std::string& eq, const std::vector<Shape>& shapes, const Shape& out) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < shapes.size(); ++i) xs.push_back(random_f32(shapes[i], 11 + i));
  const auto want = brute_einsum(eq, xs);
  std::vector<float> wf(want.begin(), want.end());
  SCOPED_TRACE(eq);
  expect_f32(einsum(eq, xs, 2), out, wf, 1e-4f);  // oneDNN matmul where it applies
  kernels::onednn::ScopedEnabled reference(false);
  expect_f32(einsum(eq, xs, 2), out, wf, 1e-4f);  // plain loops
}

TEST(EinsumTest, HandComputed) {
  const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  expect_f32(einsum("ij,jk->ik", {a, b}), {2, 2}, {58, 64, 139, 154});
  expect_f32(einsum("ij->ji", {a}), {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_f32(einsum("ba", {a}), {3, 2}, {1, 4, 2, 5, 3, 6});  // implicit output "ab"
  expect_f32(einsum("ij -> i", {a}), {2}, {6, 15});
  expect_f32(einsum("ij->", {a}), {}, {21});
  const Tensor sq = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_f32(einsum("ii->i", {sq}), {3}, {1, 5, 9});
  expect_f32(einsum("ii", {sq}), {}, {15});  // trace
  expect_f32(einsum("i,i", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}), {}, {32});
  expect_f32(einsum("i,j->ij", {f32({2}, {1, 2}), f32({2}, {3, 4})}), {2, 2}, {3, 4, 6, 8});
  expect_exact<int64_t>(einsum("ij,jk", {i64({1, 2}, {2, 3}), i64({2, 1}, {4, 5})}), DataType::kInt64, {1, 1}, {23});
  auto d = einsum("bij,bjk->bik", {f64({1, 1, 2}, {0.5, 0.25}), f64({1, 2, 1}, {2, 4})});
  ASSERT_EQ(d.dtype(), DataType::kFloat64);
  EXPECT_DOUBLE_EQ(values<double>(d)[0], 2.0);
}

TEST(EinsumTest, MatchesBruteForce) {
  expect_brute("bij,bjk->bik", {{3, 4, 5}, {3, 5, 6}}, {3, 4, 6});
  expect_brute("bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 7, 8}}, {2, 3, 5, 7});
  expect_brute("bhqk,bhkd->bhqd", {{2, 3, 5, 7}, {2, 3, 7, 8}}, {2, 3, 5, 8});
  expect_brute("bqhd,bkhd->bhqk", {{2, 5, 3, 4}, {2, 6, 3, 4}}, {2, 3, 5, 6});
  expect_brute("ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}, {3, 2});
  expect_brute("abc->cab", {{2, 3, 4}}, {4, 2, 3});
  expect_brute("iij->j", {{3, 3, 4}}, {4});
  expect_brute("ij,ij->ij", {{3, 4}, {3, 4}}, {3, 4});
  expect_brute("ik,jk->", {{3, 4}, {5, 4}}, {});
  expect_brute("bik,bjk->bji", {{2, 3, 4}, {2, 5, 4}}, {2, 5, 3});
}

TEST(EinsumTest, EllipsisBroadcast) {
  // "...ij,...jk->...ik" with batch [2] against [1] (broadcast), and the batch diagonal.
  const Tensor a = random_f32({2, 2, 3}, 3), b = random_f32({1, 3, 2}, 4);
  std::vector<float> want(8, 0);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 2; ++i) {
      for (int k = 0; k < 2; ++k) {
        double s = 0;
        for (int j = 0; j < 3; ++j) s += a.data<float>()[n * 6 + i * 3 + j] * b.data<float>()[j * 2 + k];
        want[n * 4 + i * 2 + k] = static_cast<float>(s);
      }
    }
  }
  expect_f32(einsum("...ij,...jk->...ik", {a, b}), {2, 2, 2}, want, 1e-5f);
  expect_f32(einsum("...ij,...jk", {a, b}), {2, 2, 2}, want, 1e-5f);
  const Tensor c = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_f32(einsum("...ii ->...i", {c}), {2, 2}, {1, 4, 5, 8});
}

TEST(EinsumTest, Errors) {
  ir::Node n = node_of("Einsum", 2);
  set_string(n, "equation", "ij,jk->ik,k");
  Status parse = run_error(n, {f32({1, 1}, {1}), f32({1, 1}, {1})}, 12);
  EXPECT_EQ(parse.code(), StatusCode::kInvalidModel);
  EXPECT_NE(parse.message().find("my_Einsum"), std::string::npos) << parse.message();
  set_string(n, "equation", "ij,jk->ik");
  Status dims = run_error(n, {f32({2, 3}, std::vector<float>(6)), f32({4, 2}, std::vector<float>(8))}, 12);
  EXPECT_EQ(dims.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dims.message().find("'j'"), std::string::npos) << dims.message();
  Status rank = run_error(n, {f32({2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})}, 12);
  EXPECT_EQ(rank.code(), StatusCode::kInvalidArgument);
  set_string(n, "equation", "ij,jk->iz");
  EXPECT_EQ(run_error(n, {f32({1, 1}, {1}), f32({1, 1}, {1})}, 12).code(), StatusCode::kInvalidArgument);
  set_string(n, "equation", "ij,jk->ik");
  EXPECT_EQ(run_error(n, {i8({1, 1}, {1}), i8({1, 1}, {1})}, 12).code(), StatusCode::kUnsupported);
}

}  // namespace kernels_reduce_norm_test
}  // namespace edgemm
