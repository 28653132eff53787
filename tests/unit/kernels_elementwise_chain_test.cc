// com.edgemm ElementwiseChain (src/kernels/cpu/elementwise_chain.cc) run through runtime::run_node.
// Expected values come from ir::apply_unary / ir::apply_binary (the std:: formulas of each step)
// evaluated here element by element, with broadcasting done by explicit index arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/elementwise_steps.h"
#include "ir/graph.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_elementwise_chain_test {  // named for the file: unity batches merge anonymous namespaces

using ir::Step;
using ir::StepKind;

/// An ElementwiseChain node named "chain" with `inputs` inputs carrying `steps`.
ir::Node chain_node(const std::vector<Step>& steps, int inputs) {
  ir::Node node;
  node.op_type = "ElementwiseChain";
  node.domain = "com.edgemm";
  node.name = "chain";
  for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
  node.outputs = {"y"};
  ir::write_steps(node, steps);
  return node;
}

Expected<Tensor> run_chain(const ir::Node& node, const std::vector<Tensor>& inputs, int threads = 1) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runtime::run_node(node, inputs, 1, threads));
  return outs.at(0);
}

Tensor seeded(const Shape& shape, uint32_t seed, float lo, float hi) {
  auto t = Tensor::create(DataType::kFloat32, shape);
  EXPECT_TRUE(t.has_value());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t->element_count(); ++i) t->data<float>()[i] = u(rng);
  return *t;
}

/// Numpy broadcast of two shapes (the test's own, independent of the kernels' helpers).
Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// Element of `t` read at the output position `flat` of shape `out` (numpy broadcasting).
float at(const Tensor& t, const Shape& out, int64_t flat) {
  const Shape& s = t.shape();
  int64_t index = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = flat % out[d];
    flat /= out[d];
    const size_t shift = out.size() - s.size();
    if (d >= shift) {
      const int64_t extent = s[d - shift];
      index += (extent == 1 ? 0 : coord) * stride;
      stride *= extent;
    }
  }
  return t.data<float>()[index];
}

/// The chain's expected output from the reference step formulas.
std::vector<float> expected(const std::vector<Step>& steps, const std::vector<Tensor>& inputs, Shape* shape) {
  Shape out;
  for (const Tensor& t : inputs) out = broadcast(out, t.shape());
  int64_t count = 1;
  for (int64_t d : out) count *= d;
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float v = at(inputs[0], out, i);
    for (const Step& s : steps) {
      v = s.binary() ? ir::apply_binary(s, v, at(inputs[s.operand], out, i)) : ir::apply_unary(s, v);
    }
    values[i] = v;
  }
  *shape = out;
  return values;
}

/// Kernel output vs reference: equal NaN-ness and infinities, otherwise within `rel` relative
/// (plus a denormal-sized absolute slack for exp's flush near underflow).
void expect_matches(const std::vector<Step>& steps, const std::vector<Tensor>& inputs, float rel = 1e-6f,
                    int threads = 1) {
  Shape want_shape;
  const std::vector<float> want = expected(steps, inputs, &want_shape);
  auto got = run_chain(chain_node(steps, static_cast<int>(inputs.size())), inputs, threads);
  ASSERT_TRUE(got.has_value()) << got.status().message();
  ASSERT_EQ(got->shape(), want_shape);
  const std::vector<float> g = testutil::values<float>(*got);
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      EXPECT_EQ(std::isnan(g[i]), std::isnan(want[i])) << ir::describe_steps(steps) << " at " << i;
      if (std::isinf(want[i])) {
        EXPECT_EQ(g[i], want[i]) << ir::describe_steps(steps) << " at " << i;
      }
      continue;
    }
    EXPECT_NEAR(g[i], want[i], rel * std::fabs(want[i]) + 1e-37f) << ir::describe_steps(steps) << " at " << i;
  }
}

Step unary(StepKind kind, float alpha = 0, float beta = 0) { return Step{kind, alpha, beta, -1}; }
Step binary(StepKind kind, int operand) { return Step{kind, 0, 0, operand}; }

TEST(ElementwiseChain, EveryUnaryKindMatchesTheReference) {
  const Shape shape{2, 3, 37};
  const std::vector<Step> kinds = {unary(StepKind::kRelu),
                                   unary(StepKind::kClip, -0.3f, 0.6f),
                                   unary(StepKind::kLinear, 1.5f, -0.25f),
                                   unary(StepKind::kHardSigmoid, 0.2f, 0.5f),
                                   unary(StepKind::kHardSwish),
                                   unary(StepKind::kSigmoid),
                                   unary(StepKind::kSwish, 1.7f),
                                   unary(StepKind::kGelu),
                                   unary(StepKind::kTanh),
                                   unary(StepKind::kExp),
                                   unary(StepKind::kAbs),
                                   unary(StepKind::kNeg)};
  for (const Step& s : kinds) expect_matches({s}, {seeded(shape, 1, -8.f, 8.f)});
  expect_matches({unary(StepKind::kSqrt)}, {seeded(shape, 2, 0.f, 50.f)});
  // gelu_tanh runs as x·sigmoid(2y); the reference's 1 + tanh(y) cancels for negative x (its own
  // rounding is 6e-8 / (1 + tanh y) relative: 5e-6 at x = -2.5), so the range stops there.
  expect_matches({unary(StepKind::kGeluTanh)}, {seeded(shape, 3, -2.5f, 8.f)}, 1e-5f);
}

TEST(ElementwiseChain, ExpAndSigmoidAtTheEdgesOfTheirRange) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const Tensor x =
      testutil::f32({12}, {-200.f, -104.f, -87.5f, -80.f, -1e-6f, 0.f, 1e-6f, 80.f, 88.5f, 100.f, kInf, kNaN});
  for (StepKind k : {StepKind::kExp, StepKind::kSigmoid, StepKind::kSwish}) expect_matches({unary(k, 1.f)}, {x});
  const Tensor neg_inf = testutil::f32({1}, {-kInf});
  expect_matches({unary(StepKind::kExp)}, {neg_inf});
  expect_matches({unary(StepKind::kSigmoid)}, {neg_inf});
}

TEST(ElementwiseChain, TanhOnAFineGridAndAtTheEdges) {
  // tanh_approx switches from its series to exp at |x| = 0.625: both sides, the switch, saturation.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v = {0.f,     -0.f, 1e-30f, -1e-30f, 1e-6f, 0.624999f, 0.625f,
                          -0.625f, 9.f,  9.5f,   -20.f,   kInf,  -kInf,     kNaN};
  for (int i = -20000; i <= 20000; ++i) v.push_back(static_cast<float>(i) * 5e-4f);
  expect_matches({unary(StepKind::kTanh)}, {testutil::f32({static_cast<int64_t>(v.size())}, v)});
}

TEST(ElementwiseChain, NaNPassesReluAndClipAndMaxMinPropagateIt) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = testutil::f32({4}, {kNaN, -1.f, 2.f, kNaN});
  const Tensor o = testutil::f32({4}, {1.f, kNaN, 0.f, kNaN});
  expect_matches({unary(StepKind::kRelu)}, {x});
  expect_matches({unary(StepKind::kClip, 0.f, 1.f)}, {x});
  expect_matches({binary(StepKind::kMax, 1)}, {x, o});
  expect_matches({binary(StepKind::kMin, 1)}, {x, o});
}

/// NaN, ±Inf, ±0 and ordinary values, the inputs of the ONNX Runtime table below.
const std::vector<float> kSpecials = {NAN,   INFINITY, -INFINITY, 0.f,   -0.f,   1.5f,
                                      -1.5f, 3.f,      -3.f,      100.f, -100.f, 1e30f};

/// Expects `got` to equal `want` value by value: NaN where `want` is NaN, equal infinities and
/// zeros, other values within 1e-6 relative.
void expect_same_values(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": got " << got[i];
    } else if (std::isinf(want[i]) || want[i] == 0) {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], 1e-6f * std::fabs(want[i])) << what << " at " << i;
    }
  }
}

TEST(ElementwiseChain, NonFiniteValuesGiveWhatOnnxRuntimeGives) {
  // Oracle: ONNX Runtime 1.30 (onnxruntime-node, CPU, graphOptimizationLevel disabled) running
  // each ONNX op alone on kSpecials (HardSigmoid alpha 0.2 beta 0.5, Clip min -2 max 6); the
  // exact values are 1 / (1 + e^-x), tanh x, e^x rounded to float. The chain kernel (the loop
  // variant this CPU selects) and the reference formulas (ir::apply_unary) must both give them.
  constexpr float kNaN = NAN, kInf = INFINITY;
  const std::vector<std::pair<Step, std::vector<float>>> table = {
      {unary(StepKind::kRelu), {kNaN, kInf, 0, 0, -0.f, 1.5f, 0, 3, 0, 100, 0, 1e30f}},
      {unary(StepKind::kClip, -2, 6), {kNaN, 6, -2, 0, -0.f, 1.5f, -1.5f, 3, -2, 6, -2, 6}},
      {unary(StepKind::kHardSigmoid, 0.2f, 0.5f), {kNaN, 1, 0, 0.5f, 0.5f, 0.8f, 0.2f, 1, 0, 1, 0, 1}},
      {unary(StepKind::kHardSwish), {kNaN, kInf, kNaN, 0, -0.f, 1.125f, -0.375f, 3, -0.f, 100, -0.f, 1e30f}},
      {unary(StepKind::kSigmoid),
       {kNaN, 1, 0, 0.5f, 0.5f, 0.81757444f, 0.18242556f, 0.95257413f, 0.04742587f, 1, 0, 1}},
      {unary(StepKind::kTanh), {kNaN, 1, -1, 0, -0.f, 0.9051482f, -0.9051482f, 0.9950547f, -0.9950547f, 1, -1, 1}},
      {unary(StepKind::kExp),
       {kNaN, kInf, 0, 1, 1, 4.481689f, 0.22313017f, 20.085537f, 0.049787067f, kInf, 3.7835059e-44f, kInf}},
      {unary(StepKind::kSqrt), {kNaN, kInf, kNaN, 0, -0.f, 1.2247449f, kNaN, 1.7320508f, kNaN, 10, kNaN, 1e15f}},
  };
  // Three copies, so that the vector loops and their scalar tails both see every value.
  std::vector<float> x;
  for (int i = 0; i < 3; ++i) x.insert(x.end(), kSpecials.begin(), kSpecials.end());
  for (const auto& [step, row] : table) {
    std::vector<float> want, reference;
    for (int i = 0; i < 3; ++i) want.insert(want.end(), row.begin(), row.end());
    for (float v : x) reference.push_back(ir::apply_unary(step, v));
    auto got = run_chain(chain_node({step}, 1), {testutil::f32({static_cast<int64_t>(x.size())}, x)});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    expect_same_values(testutil::values<float>(*got), want, ir::describe_steps({step}));
    expect_same_values(reference, want, "ir::apply_unary " + ir::describe_steps({step}));
  }
}

TEST(ElementwiseChain, MaxAndMinPropagateNaNFromEitherSide) {
  // ONNX Runtime 1.30's Max and Min on every pair of kSpecials: NaN when either side is NaN,
  // otherwise the larger / smaller value.
  std::vector<float> a, b;
  for (float u : kSpecials) {
    for (float v : kSpecials) {
      a.push_back(u);
      b.push_back(v);
    }
  }
  const Shape shape{static_cast<int64_t>(a.size())};
  for (StepKind kind : {StepKind::kMax, StepKind::kMin}) {
    std::vector<float> want;
    for (size_t i = 0; i < a.size(); ++i) {
      const bool nan = std::isnan(a[i]) || std::isnan(b[i]);
      want.push_back(nan ? NAN : kind == StepKind::kMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]));
    }
    auto got = run_chain(chain_node({binary(kind, 1)}, 2), {testutil::f32(shape, a), testutil::f32(shape, b)});
    ASSERT_TRUE(got.has_value()) << got.status().message();
    expect_same_values(testutil::values<float>(*got), want, ir::step_name(kind));
  }
}

TEST(ElementwiseChain, EveryBinaryKindMatchesTheReference) {
  const Shape shape{3, 5, 41};
  const Tensor x = seeded(shape, 3, 0.5f, 4.f);
  const Tensor o = seeded(shape, 4, -2.f, 2.f);
  for (StepKind k : {StepKind::kAdd, StepKind::kSub, StepKind::kRSub, StepKind::kMul, StepKind::kDiv, StepKind::kRDiv,
                     StepKind::kMax, StepKind::kMin, StepKind::kPow}) {
    expect_matches({binary(k, 1)}, {x, o});
  }
}

TEST(ElementwiseChain, OperandsBroadcastAsScalarPerChannelAndFull) {
  const Tensor x = seeded({2, 3, 4, 5}, 5, -3.f, 3.f);
  const Tensor scalar = testutil::f32({}, {0.75f});
  const Tensor channel = seeded({1, 3, 1, 1}, 6, 0.5f, 2.f);
  const Tensor full = seeded({2, 3, 4, 5}, 7, -1.f, 1.f);
  const Tensor last = seeded({5}, 8, -1.f, 1.f);
  const std::vector<Step> steps = {binary(StepKind::kMul, 2), binary(StepKind::kAdd, 1),  unary(StepKind::kHardSwish),
                                   binary(StepKind::kSub, 3), binary(StepKind::kRDiv, 4), unary(StepKind::kRelu)};
  expect_matches(steps, {x, scalar, channel, full, last});
}

TEST(ElementwiseChain, OperandMayBroadcastTheOutputAndInputZeroMayBeBroadcast) {
  // Output [2,3,4,5] from x [3,1,5] and an operand [2,1,4,1].
  expect_matches({binary(StepKind::kAdd, 1), unary(StepKind::kSigmoid)},
                 {seeded({3, 1, 5}, 9, -2.f, 2.f), seeded({2, 1, 4, 1}, 10, -2.f, 2.f)});
  // Input 0 per channel, operand full.
  expect_matches({unary(StepKind::kExp), binary(StepKind::kMul, 1)},
                 {seeded({1, 3, 1, 1}, 11, -1.f, 1.f), seeded({2, 3, 4, 5}, 12, -1.f, 1.f)});
  // The same input as value and operand.
  const Tensor x = seeded({7, 9}, 13, -1.f, 1.f);
  expect_matches({binary(StepKind::kMul, 0), binary(StepKind::kAdd, 0)}, {x});
}

TEST(ElementwiseChain, InputZeroBroadcastOverLongRows) {
  // Input 0 is one value per row (squeeze-excitation written Mul(gate, x)) or a single value,
  // broadcast over rows long enough that a tile holds one row.
  expect_matches({binary(StepKind::kMul, 1), unary(StepKind::kRelu)},
                 {seeded({1, 3, 1, 1}, 23, -1.f, 2.f), seeded({1, 3, 64, 64}, 24, -1.f, 1.f)});
  expect_matches({binary(StepKind::kAdd, 1), unary(StepKind::kRelu)},
                 {seeded({1}, 25, -1.f, 1.f), seeded({2, 4, 40, 40}, 26, -1.f, 1.f)}, 1e-6f, 2);
}

TEST(ElementwiseChain, ShortRowsGroupedAndLongRowsSplitIntoTiles) {
  // Rows of 3 (operand broadcast along the last axis): many rows per tile.
  expect_matches({binary(StepKind::kMul, 1), unary(StepKind::kClip, -0.5f, 0.5f)},
                 {seeded({4099, 3}, 14, -1.f, 1.f), seeded({4099, 1}, 15, -1.f, 1.f)});
  // Rows of 2500: split into pieces, the last one shorter.
  expect_matches({binary(StepKind::kAdd, 1), unary(StepKind::kTanh)},
                 {seeded({3, 2500}, 16, -1.f, 1.f), seeded({3, 1}, 17, -1.f, 1.f)});
}

TEST(ElementwiseChain, PerChannelOperandsOfBlockedValuesRepeatAlongRows) {
  // nChw8c values [N, C/8, H, W, 8] with per-channel operands [1, C/8, 1, 1, 8]: the rows of 8
  // are merged and the operand repeats every 8 elements; long rows (80x70x8) and short ones
  // (3x5x8), input 0 itself periodic, one and two threads.
  for (const Shape& shape : {Shape{1, 3, 80, 70, 8}, Shape{2, 2, 3, 5, 8}}) {
    const Tensor x = seeded(shape, 20, -3.f, 3.f);
    const Tensor gate = seeded({1, shape[1], 1, 1, 8}, 21, 0.f, 1.f);
    const Tensor full = seeded(shape, 22, -1.f, 1.f);
    const std::vector<Step> steps = {binary(StepKind::kMul, 1), binary(StepKind::kAdd, 2), unary(StepKind::kRelu),
                                     binary(StepKind::kSub, 1)};
    for (int threads : {1, 2}) expect_matches(steps, {x, gate, full}, 1e-6f, threads);
    expect_matches({binary(StepKind::kAdd, 1), unary(StepKind::kHardSwish)}, {gate, full});
  }
}

TEST(ElementwiseChain, TwoThreadsGiveTheSameBitsAsOne) {
  const std::vector<Step> steps = {binary(StepKind::kMul, 1), binary(StepKind::kAdd, 2), unary(StepKind::kHardSwish),
                                   unary(StepKind::kSigmoid)};
  const std::vector<Tensor> inputs = {seeded({1, 32, 160, 160}, 18, -4.f, 4.f), seeded({1, 32, 1, 1}, 19, 0.5f, 2.f),
                                      seeded({1, 32, 1, 1}, 20, -1.f, 1.f)};
  const ir::Node node = chain_node(steps, 3);
  auto one = run_chain(node, inputs, 1);
  auto two = run_chain(node, inputs, 2);
  ASSERT_TRUE(one.has_value() && two.has_value());
  EXPECT_EQ(testutil::values<float>(*one), testutil::values<float>(*two));
  expect_matches(steps, inputs, 1e-6f, 2);
}

TEST(ElementwiseChain, EmptyOutputAndScalarOutput) {
  auto empty = run_chain(chain_node({unary(StepKind::kRelu)}, 1), {seeded({0, 4}, 21, -1.f, 1.f)});
  ASSERT_TRUE(empty.has_value()) << empty.status().message();
  EXPECT_EQ(empty->shape(), (Shape{0, 4}));
  expect_matches({unary(StepKind::kNeg), binary(StepKind::kAdd, 1)},
                 {testutil::f32({}, {2.f}), testutil::f32({1}, {0.5f})});
}

void expect_error(const ir::Node& node, const std::vector<Tensor>& inputs, const std::string& part) {
  auto got = run_chain(node, inputs);
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.status().message().find("'chain'"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find(part), std::string::npos) << got.status().message();
}

TEST(ElementwiseChain, BadAttributesShapesAndDtypesAreErrorsNamingTheNode) {
  const Tensor x = seeded({2, 3}, 22, -1.f, 1.f);
  ir::Node unknown = chain_node({unary(StepKind::kRelu)}, 1);
  unknown.attributes["steps"].strings = {"softplus"};
  expect_error(unknown, {x}, "softplus");
  ir::Node lengths = chain_node({unary(StepKind::kRelu)}, 1);
  lengths.attributes["alphas"].floats.push_back(1.f);
  expect_error(lengths, {x}, "same length");
  expect_error(chain_node({binary(StepKind::kAdd, 2)}, 2), {x, x}, "operand index 2");
  ir::Node unary_with_operand = chain_node({unary(StepKind::kRelu)}, 2);
  unary_with_operand.attributes["operands"].ints = {1};
  expect_error(unary_with_operand, {x, x}, "operand index 1");
  expect_error(chain_node({binary(StepKind::kAdd, 1)}, 2), {x, seeded({4}, 23, -1.f, 1.f)}, "broadcast");
  expect_error(chain_node({unary(StepKind::kRelu)}, 1), {testutil::f64({2}, {1.0, -1.0})}, "float64");
}

}  // namespace kernels_elementwise_chain_test
}  // namespace edgemm
