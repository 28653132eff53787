// Mish-18 and Gelu-20 (src/kernels/cpu/activation.cc) run through runtime::run_node. Expected
// values come from the formulas in the comments evaluated in float64 (Python's math module),
// never from an earlier run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_activation18_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::make_node;
using nntest::run;
using nntest::run_direct;
using nntest::set_string;

// mish(x) = x · tanh(ln(1 + e^x)) at x = 0, 1, -1, 3, -3, 20:
const std::vector<float> kMishX = {0, 1, -1, 3, -3, 20};
const std::vector<float> kMishY = {
    0, 0.8650983882673103f, -0.30340146137410895f, 2.9865350049679575f, -0.1456474612756246f, 20.0f};
// gelu(x) = 0.5·x·(1 + erf(x/√2)) and the tanh form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
// at x = 0, 1, -1, 2, -3:
const std::vector<float> kGeluX = {0, 1, -1, 2, -3};
const std::vector<float> kGeluY = {0, 0.8413447460685429f, -0.15865525393145707f, 1.9544997361036416f,
                                   -0.00404969409489031f};
const std::vector<float> kGeluTanhY = {0, 0.8411919906082768f, -0.15880800939172324f, 1.954597694087775f,
                                       -0.0036373920817729943f};

TEST(KernelsActivation18, MishFloat32) {
  auto y = run(make_node("Mish", {"x"}), {f32({2, 3}, kMishX)}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2, 3}, kMishY, 1e-6f);
}

TEST(KernelsActivation18, MishFarTailsAreFinite) {
  // softplus(100) does not overflow, so mish(100) = 100; mish(-100) = -100 · tanh(e^-100) ≈
  // -3.7e-42, 0 at float32 precision.
  auto y = run(make_node("Mish", {"x"}), {f32({2}, {100.0f, -100.0f})}, 18);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {2}, {100.0f, 0.0f}, 1e-6f);
}

TEST(KernelsActivation18, MishFloat64AndFloat16) {
  auto y64 = run(make_node("Mish", {"x"}), {f64({3}, {1, -1, 3})}, 18);
  ASSERT_TRUE(y64.has_value()) << y64.status().to_string();
  const std::vector<double> v = values<double>(*y64);
  EXPECT_NEAR(v[0], 0.8650983882673103, 1e-14);
  EXPECT_NEAR(v[1], -0.30340146137410895, 1e-14);
  EXPECT_NEAR(v[2], 2.9865350049679575, 1e-14);
  // float16: 1 → 0.8650983… rounds to the nearest half 1772 · 2^-11 = 0.865234375; -1 →
  // -0.30340146 rounds to -1243 · 2^-12 = -0.303466796875.
  auto y16 = run(make_node("Mish", {"x"}), {f16({2}, {float_to_half(1.0f), float_to_half(-1.0f)})}, 18);
  ASSERT_TRUE(y16.has_value()) << y16.status().to_string();
  ASSERT_EQ(y16->dtype(), DataType::kFloat16);
  const std::vector<uint16_t> h = values<uint16_t>(*y16);
  EXPECT_EQ(half_to_float(h[0]), 0.865234375f);
  EXPECT_EQ(half_to_float(h[1]), -0.303466796875f);
}

TEST(KernelsActivation18, GeluDefaultIsErf) {
  auto y = run(make_node("Gelu", {"x"}), {f32({5}, kGeluX)}, 20);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {5}, kGeluY, 1e-6f);
  ir::Node none = make_node("Gelu", {"x"});
  set_string(none, "approximate", "none");
  auto y2 = run(none, {f32({5}, kGeluX)}, 21);  // opset 21 still picks Gelu-20
  ASSERT_TRUE(y2.has_value()) << y2.status().to_string();
  expect_near(*y2, {5}, kGeluY, 1e-6f);
}

TEST(KernelsActivation18, GeluTanh) {
  ir::Node node = make_node("Gelu", {"x"});
  set_string(node, "approximate", "tanh");
  auto y = run(node, {f32({5}, kGeluX)}, 20);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  expect_near(*y, {5}, kGeluTanhY, 1e-6f);
  auto y64 = run(node, {f64({2}, {1, -1})}, 20);
  ASSERT_TRUE(y64.has_value()) << y64.status().to_string();
  EXPECT_NEAR(values<double>(*y64)[0], 0.8411919906082768, 1e-14);
  EXPECT_NEAR(values<double>(*y64)[1], -0.15880800939172324, 1e-14);
}

TEST(KernelsActivation18, GeluBFloat16) {
  // gelu(2) = 1.9545 → the nearest bfloat16 (7 fraction bits) is 1 + 122/128 = 1.953125 (0x3FFA).
  auto y = run(make_node("Gelu", {"x"}), {bf16({1}, {float_to_bfloat16(2.0f)})}, 20);
  ASSERT_TRUE(y.has_value()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kBFloat16);
  EXPECT_EQ(values<uint16_t>(*y)[0], 0x3FFA);
}

TEST(KernelsActivation18, Errors) {
  ir::Node fast = make_node("Gelu", {"x"});
  set_string(fast, "approximate", "fast");
  expect_error(run_direct(fast, {f32({1}, {1})}, 20), StatusCode::kInvalidModel, {"Gelu", "approximate", "fast"});
  expect_error(run_direct(make_node("Gelu", {"ints"}), {i32({1}, {1})}, 20), StatusCode::kUnsupported,
               {"Gelu", "'ints'", "int32"});
  // Mish-18 has no bfloat16.
  expect_error(run_direct(make_node("Mish", {"b"}), {bf16({1}, {0})}, 18), StatusCode::kUnsupported,
               {"Mish", "'b'", "bfloat16"});
  // Neither op exists before its version.
  expect_error(run(make_node("Mish", {"x"}), {f32({1}, {1})}, 17), StatusCode::kUnsupported, {});
  expect_error(run(make_node("Gelu", {"x"}), {f32({1}, {1})}, 19), StatusCode::kUnsupported, {});
}

}  // namespace kernels_activation18_test
}  // namespace edgemm
