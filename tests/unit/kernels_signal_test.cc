// DFT (17, 20), STFT, HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
// (src/kernels/cpu/signal.cc). Expected values are worked out by hand in the comments next to each
// case, or are a plain O(n²) DFT sum written out in this file, or (marked "ONNX Runtime 1.30") were
// produced by onnxruntime-node 1.30 from the same inputs; none was taken from a run of these kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_signal_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::run_direct;
using nntest::set_int;

constexpr double kTestPi = 3.14159265358979323846;

/// A node "sig_<op>" reading `inputs` (empty names are absent optional inputs).
ir::Node signal_node(const std::string& op, std::vector<std::string> inputs) {
  ir::Node node;
  node.op_type = op;
  node.name = "sig_" + op;
  node.inputs = std::move(inputs);
  node.outputs = {"y"};
  return node;
}

/// Runs `node` through its kernel (nntest::run_direct) and expects success.
Tensor signal_run(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  auto y = run_direct(node, inputs, opset);
  EXPECT_TRUE(y.has_value()) << y.status().to_string();
  return y.has_value() ? *y : Tensor();
}

/// The plain DFT sum of complex `x` (zero-padded or truncated to n), divided by n when inverse.
std::vector<std::complex<double>> naive_dft(const std::vector<std::complex<double>>& x, int64_t n, bool inverse) {
  std::vector<std::complex<double>> out(static_cast<size_t>(n));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> sum = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      sum += x[j] * std::polar(1.0, sign * 2.0 * kTestPi * static_cast<double>((j * k) % n) / static_cast<double>(n));
    }
    out[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return out;
}

/// Deterministic values in about [-1.2, 3]: (i % 7) / 2 - 1.2 + i / 10, as float32.
std::vector<float> signal_pattern(int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<float>((i % 7) * 0.5 - 1.2 + 0.1 * i);
  return v;
}

// ---- DFT --------------------------------------------------------------------------------

TEST(SignalKernels, DftOfImpulseIsFlat) {
  // x = [1, 0, 0, 0]: every bin is sum_j x[j] e^{...} = 1.
  ir::Node node = signal_node("DFT", {"x"});
  const Tensor y = signal_run(node, {f32({1, 4, 1}, {1, 0, 0, 0})});
  expect_near(y, {1, 4, 2}, {1, 0, 1, 0, 1, 0, 1, 0});
}

TEST(SignalKernels, DftOfCosineHasTwoPeaks) {
  // x[j] = cos(2πj/n) = (e^{2πij/n} + e^{-2πij/n}) / 2: bins 1 and n-1 are n/2, the rest 0. n = 8
  // (radix 2) and n = 6 (direct sum); and 2.5 + cos gives bin 0 = 2.5 n.
  for (int64_t n : {8, 6}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) x[j] = static_cast<float>(2.5 + std::cos(2.0 * kTestPi * j / n));
    ir::Node node = signal_node("DFT", {"x"});
    const Tensor y = signal_run(node, {f32({1, n, 1}, x)});
    std::vector<float> want(static_cast<size_t>(2 * n), 0.0f);
    want[0] = 2.5f * n;
    want[2] = want[2 * (n - 1)] = n / 2.0f;
    expect_near(y, {1, n, 2}, want, 1e-5f);
  }
}

TEST(SignalKernels, DftPaddingAndTruncation) {
  // [1, 2, 3] with dft_length 4 is the DFT of [1, 2, 3, 0]: X0 = 6, X1 = 1 - 2i - 3 = -2 - 2i,
  // X2 = 1 - 2 + 3 = 2, X3 = -2 + 2i.
  ir::Node node = signal_node("DFT", {"x", "len"});
  expect_near(signal_run(node, {f32({1, 3, 1}, {1, 2, 3}), i64({}, {4})}), {1, 4, 2}, {6, 0, -2, -2, 2, 0, -2, 2});
  // [1, 2, 3, 4] with dft_length 2 (int32): the DFT of [1, 2] = [3, -1].
  expect_near(signal_run(node, {f32({1, 4, 1}, {1, 2, 3, 4}), i32({1}, {2})}), {1, 2, 2}, {3, 0, -1, 0});
}

TEST(SignalKernels, DftMatchesNaiveSumForManyLengths) {
  // Complex input [2, n, 3, 2] along axis 1 against the O(n²) sum: radix 2 (64, 128), direct (5,
  // 63), Bluestein (65, 100, 257); float32 and float64.
  for (int64_t n : {5, 63, 64, 65, 100, 128, 257}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int64_t count = 2 * n * 3 * 2;
    std::vector<double> xv(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) xv[i] = std::sin(0.37 * i) + 0.25 * std::cos(1.3 * i * i);
    std::vector<float> xf(xv.begin(), xv.end());
    for (int64_t inverse : {0, 1}) {
      ir::Node node = signal_node("DFT", {"x"});
      set_int(node, "inverse", inverse);
      const Tensor yf = signal_run(node, {f32({2, n, 3, 2}, xf)});
      const Tensor yd = signal_run(node, {f64({2, n, 3, 2}, xv)});
      ASSERT_EQ(shape_to_string(yf.shape()), shape_to_string(Shape{2, n, 3, 2}));
      ASSERT_EQ(yd.dtype(), DataType::kFloat64);
      const auto vf = values<float>(yf);
      const auto vd = values<double>(yd);
      double max_f = 0, max_d = 0;
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t i = 0; i < 3; ++i) {
          std::vector<std::complex<double>> line(static_cast<size_t>(n));
          for (int64_t j = 0; j < n; ++j) {
            const int64_t at = ((b * n + j) * 3 + i) * 2;
            line[j] = {static_cast<double>(xf[at]), static_cast<double>(xf[at + 1])};
          }
          const auto want = naive_dft(line, n, inverse == 1);
          for (int64_t k = 0; k < n; ++k) {
            const int64_t at = ((b * n + k) * 3 + i) * 2;
            max_f = std::max(max_f, std::abs(std::complex<double>(vf[at], vf[at + 1]) - want[k]));
          }
          for (int64_t j = 0; j < n; ++j) {
            const int64_t at = ((b * n + j) * 3 + i) * 2;
            line[j] = {xv[at], xv[at + 1]};
          }
          const auto want_d = naive_dft(line, n, inverse == 1);
          for (int64_t k = 0; k < n; ++k) {
            const int64_t at = ((b * n + k) * 3 + i) * 2;
            max_d = std::max(max_d, std::abs(std::complex<double>(vd[at], vd[at + 1]) - want_d[k]));
          }
        }
      }
      const double scale = inverse == 1 ? 1.0 : static_cast<double>(n);  // |X| grows like n
      EXPECT_LE(max_f, 2e-6 * scale) << "float32, inverse " << inverse;
      EXPECT_LE(max_d, 1e-11 * scale) << "float64, inverse " << inverse;
    }
  }
}

TEST(SignalKernels, InverseUndoesForward) {
  // inverse(DFT(x)) == x for complex x along axis 1 of [2, 97, 2] (Bluestein) and [3, 6, 2].
  for (const Shape& shape : {Shape{2, 97, 2}, Shape{3, 6, 2}}) {
    const Tensor x = f32(shape, signal_pattern(shape[0] * shape[1] * 2));
    ir::Node fwd = signal_node("DFT", {"x"});
    ir::Node inv = signal_node("DFT", {"x"});
    set_int(inv, "inverse", 1);
    const Tensor back = signal_run(inv, {signal_run(fwd, {x})});
    expect_near(back, shape, values<float>(x), 2e-5f);
  }
}

TEST(SignalKernels, ThreadsGiveTheSameResult) {
  // Enough lines to split across threads (runtime::run_node with 2 threads): DFT of [64, 256, 2]
  // along axis 1 and STFT of [8, 4000, 1]; each line's arithmetic does not depend on the split.
  ir::Node dft = signal_node("DFT", {"x"});
  const Tensor x = f32({64, 256, 2}, signal_pattern(64 * 256 * 2));
  auto one = nntest::run(dft, {x}, 17, 1), two = nntest::run(dft, {x}, 17, 2);
  ASSERT_TRUE(one.has_value() && two.has_value());
  EXPECT_EQ(values<float>(*one), values<float>(*two));
  ir::Node stft = signal_node("STFT", {"x", "step", "", "len"});
  const std::vector<Tensor> in = {f32({8, 4000, 1}, signal_pattern(8 * 4000)), i64({}, {16}), Tensor(), i64({}, {100})};
  auto s1 = nntest::run(stft, in, 17, 1), s2 = nntest::run(stft, in, 17, 2);
  ASSERT_TRUE(s1.has_value() && s2.has_value());
  EXPECT_EQ(values<float>(*s1), values<float>(*s2));
}

TEST(SignalKernels, OnesidedLengths) {
  // Real [1, n, 1] onesided: floor(n/2) + 1 bins, the first ones of the full transform.
  for (int64_t n : {5, 6}) {
    const Tensor x = f32({1, n, 1}, signal_pattern(n));
    ir::Node full = signal_node("DFT", {"x"});
    ir::Node half = signal_node("DFT", {"x"});
    set_int(half, "onesided", 1);
    const auto want = values<float>(signal_run(full, {x}));
    expect_near(signal_run(half, {x}), {1, n / 2 + 1, 2},
                std::vector<float>(want.begin(), want.begin() + 2 * (n / 2 + 1)));
  }
  // With dft_length 8 on 5 samples: 5 bins.
  ir::Node half = signal_node("DFT", {"x", "len"});
  set_int(half, "onesided", 1);
  const Tensor y = signal_run(half, {f32({1, 5, 1}, {1, 0, 0, 0, 0}), i64({}, {8})});
  expect_near(y, {1, 5, 2}, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0});
}

TEST(SignalKernels, InverseOnesidedIsIrfft) {
  // The one-sided spectrum of a real x, inverted with onesided 1: x again, last extent 1. Even n
  // (6: default length 2 * (4 - 1)) and odd n (5, given as dft_length from 3 bins).
  for (int64_t n : {6, 5}) {
    const Tensor x = f32({2, n, 1}, signal_pattern(2 * n));
    ir::Node rfft = signal_node("DFT", {"x"});
    set_int(rfft, "onesided", 1);
    const Tensor spectrum = signal_run(rfft, {x});
    ir::Node irfft = signal_node("DFT", {"x", n % 2 == 0 ? "" : "len"});
    set_int(irfft, "onesided", 1);
    set_int(irfft, "inverse", 1);
    std::vector<Tensor> in = {spectrum, n % 2 == 0 ? Tensor() : i64({}, {n})};
    expect_near(signal_run(irfft, in), {2, n, 1}, values<float>(x), 1e-5f);
  }
  // Hand case: bins [4, 0, 0] (n = 4) is the constant 1; the imaginary parts of bins 0 and n/2
  // are ignored, bin 1 = 2i adds 2 Re(2i e^{iπt/2}) / 4 = -sin(πt/2).
  ir::Node irfft = signal_node("DFT", {"x"});
  set_int(irfft, "onesided", 1);
  set_int(irfft, "inverse", 1);
  expect_near(signal_run(irfft, {f32({1, 3, 2}, {4, 7, 0, 2, 0, -5})}), {1, 4, 1}, {1, 0, 1, 2});
}

TEST(SignalKernels, Dft20AxisInput) {
  // x [2, 3, 1] = [[1, 2, 3], [4, 5, 6]]. Along axis 0 (given as 0 and as -3): X0 = [5, 7, 9],
  // X1 = [-3, -3, -3]. Default axis -2 (axis 1): [1, 2, 3] → 6, -1.5 + 0.866i, -1.5 - 0.866i and
  // [4, 5, 6] → 15, the same two.
  const Tensor x = f32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  const std::vector<float> along0 = {5, 0, 7, 0, 9, 0, -3, 0, -3, 0, -3, 0};
  ir::Node node = signal_node("DFT", {"x", "", "axis"});
  for (int64_t axis : {0, -3}) {
    expect_near(signal_run(node, {x, Tensor(), i64({}, {axis})}, 20), {2, 3, 2}, along0);
  }
  const float h = static_cast<float>(std::sqrt(3.0) / 2);
  const std::vector<float> along1 = {6, 0, -1.5f, h, -1.5f, -h, 15, 0, -1.5f, h, -1.5f, -h};
  ir::Node plain = signal_node("DFT", {"x"});
  expect_near(signal_run(plain, {x}, 20), {2, 3, 2}, along1);
  // Opset 17: the axis attribute, here negative.
  set_int(plain, "axis", -3);
  expect_near(signal_run(plain, {x}, 17), {2, 3, 2}, along0);
}

TEST(SignalKernels, Dft20MatchesOnnxRuntime) {
  // Inputs signal_pattern(); outputs of onnxruntime-node 1.30 on DFT-20 models.
  {
    // [2, 3, 2] complex, axis -3, dft_length 3 (zero-padded from 2).
    ir::Node node = signal_node("DFT", {"x", "len", "axis"});
    const Tensor y = signal_run(node, {f32({2, 3, 2}, signal_pattern(12)), i64({}, {3}), i64({}, {-3})}, 20);
    expect_near(y, {3, 3, 2},
                {1.2f, -1.100001f, 0.1000002f, 1.3f, 2.500001f, 3.7f, -2.833014f, -2.42846f, 0.5562178f, 0.1633973f,
                 2.195448f, -0.275834f, -1.966987f, 1.728461f, -0.6562178f, 0.3366028f, -1.095448f, 1.975833f},
                1e-5f);
  }
  {
    // [1, 4, 2] one-sided spectrum, inverse: real [1, 6, 1].
    ir::Node node = signal_node("DFT", {"x"});
    set_int(node, "inverse", 1);
    set_int(node, "onesided", 1);
    expect_near(signal_run(node, {f32({1, 4, 2}, signal_pattern(8))}, 20), {1, 6, 1},
                {0.6f, -1.492821f, 0.3464101f, -0.2000003f, -0.3464103f, -0.1071798f}, 1e-5f);
  }
  {
    // [2, 3, 1] real, default axis -2.
    ir::Node node = signal_node("DFT", {"x"});
    expect_near(signal_run(node, {f32({2, 3, 1}, signal_pattern(6))}, 20), {2, 3, 2},
                {-1.8f, 1.788139e-07f, -0.8999997f, 0.5196155f, -0.9000002f, -0.5196152f, 3.6f, -7.897615e-07f,
                 -0.8999996f, 0.5196159f, -0.9000002f, -0.5196151f},
                1e-5f);
  }
}

TEST(SignalKernels, DftErrors) {
  const Tensor x = f32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  ir::Node with_axis = signal_node("DFT", {"x", "", "axis"});
  for (int64_t axis : {-1, 2, -4, 3}) {
    expect_error(run_direct(with_axis, {x, Tensor(), i64({}, {axis})}, 20), StatusCode::kInvalidArgument,
                 {"DFT 'sig_DFT'", "axis " + std::to_string(axis), "out of range"});
  }
  ir::Node attr_axis = signal_node("DFT", {"x"});
  set_int(attr_axis, "axis", 2);
  expect_error(run_direct(attr_axis, {x}, 17), StatusCode::kInvalidArgument, {"axis 2", "out of range"});
  expect_error(run_direct(with_axis, {x, Tensor(), i64({2}, {0, 1})}, 20), StatusCode::kInvalidArgument,
               {"'axis'", "one value"});
  ir::Node with_len = signal_node("DFT", {"x", "dft_len"});
  for (int64_t len : {int64_t{0}, int64_t{-3}, int64_t{1} << 40}) {
    expect_error(run_direct(with_len, {x, i64({}, {len})}), StatusCode::kInvalidArgument,
                 {"'dft_len' (dft_length)", std::to_string(len)});
  }
  expect_error(run_direct(with_len, {x, f32({}, {4})}), StatusCode::kUnsupported, {"'dft_len'", "float32"});
  // One-sided forward needs real input; one-sided inverse needs complex input.
  ir::Node rfft = signal_node("DFT", {"x"});
  set_int(rfft, "onesided", 1);
  expect_error(run_direct(rfft, {f32({1, 2, 2}, {1, 2, 3, 4})}), StatusCode::kInvalidArgument, {"real input"});
  set_int(rfft, "inverse", 1);
  expect_error(run_direct(rfft, {x}), StatusCode::kInvalidArgument, {"complex input"});
  // One bin gives no default IRFFT length.
  expect_error(run_direct(rfft, {f32({1, 1, 2}, {1, 0})}), StatusCode::kInvalidArgument, {"transform length"});
  // Last extent neither 1 nor 2; rank 1; integer input; bad attribute.
  ir::Node plain = signal_node("DFT", {"x"});
  expect_error(run_direct(plain, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), StatusCode::kInvalidArgument, {"[2,3]"});
  expect_error(run_direct(plain, {f32({2}, {1, 2})}), StatusCode::kInvalidArgument, {"must be [..., signal, 1]"});
  expect_error(run_direct(plain, {i64({1, 2, 1}, {1, 2})}), StatusCode::kUnsupported, {"int64"});
  set_int(plain, "inverse", 2);
  expect_error(run_direct(plain, {x}), StatusCode::kInvalidModel, {"inverse", "0 or 1"});
}

// ---- STFT -------------------------------------------------------------------------------

TEST(SignalKernels, StftFramesByHand) {
  // signal 1..8, frame_length 4, frame_step 2: frames [1,2,3,4], [3,4,5,6], [5,6,7,8]. For [a, b,
  // c, d]: X0 = a+b+c+d, X1 = a - c + i(d - b), X2 = a - b + c - d; so 10 / 18 / 26, -2 + 2i, -2.
  ir::Node node = signal_node("STFT", {"x", "step", "", "len"});
  const Tensor x = f32({1, 8, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor y = signal_run(node, {x, i64({}, {2}), Tensor(), i64({}, {4})});
  expect_near(y, {1, 3, 3, 2}, {10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0, 26, 0, -2, 2, -2, 0});
  // Window [1, 0, 1, 0] (frame length from the window), step 3: frames [1,2,3,4] and [4,5,6,7]
  // become [1,0,3,0] and [4,0,6,0]: X = 4, -2, 4 and 10, -2, 10.
  ir::Node windowed = signal_node("STFT", {"x", "step", "w"});
  expect_near(signal_run(windowed, {x, i32({}, {3}), f32({4}, {1, 0, 1, 0})}), {1, 2, 3, 2},
              {4, 0, -2, 0, 4, 0, 10, 0, -2, 0, 10, 0});
}

TEST(SignalKernels, StftComplexTwoSided) {
  // Complex signal [1, 3, 2] = [1, i, -1], onesided 0, frame_length 2, step 1: frames [1, i] → [1
  // + i, 1 - i] and [i, -1] → [-1 + i, 1 + i].
  ir::Node node = signal_node("STFT", {"x", "step", "", "len"});
  set_int(node, "onesided", 0);
  const Tensor y = signal_run(node, {f32({1, 3, 2}, {1, 0, 0, 1, -1, 0}), i64({}, {1}), Tensor(), i64({}, {2})});
  expect_near(y, {1, 2, 2, 2}, {1, 1, 1, -1, -1, 1, 1, 1});
}

TEST(SignalKernels, StftMatchesDftOfEachFrame) {
  // float64 signal [2, 300, 1], a Hann-like window of 100 (Bluestein), step 37: every frame is the
  // one-sided DFT of the windowed samples.
  const int64_t length = 300, fl = 100, step = 37, frames = (length - fl) / step + 1;
  std::vector<double> xv(2 * length), wv(fl);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.05 * i * i) + 0.1 * i;
  for (int64_t j = 0; j < fl; ++j) wv[j] = 0.5 - 0.5 * std::cos(2 * kTestPi * j / fl);
  ir::Node node = signal_node("STFT", {"x", "step", "w", "len"});
  const Tensor y = signal_run(node, {f64({2, length, 1}, xv), i64({}, {step}), f64({fl}, wv), i64({}, {fl})});
  ASSERT_EQ(shape_to_string(y.shape()), shape_to_string(Shape{2, frames, fl / 2 + 1, 2}));
  const auto v = values<double>(y);
  double max_err = 0;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      std::vector<std::complex<double>> frame(fl);
      for (int64_t j = 0; j < fl; ++j) frame[j] = xv[b * length + f * step + j] * wv[j];
      const auto want = naive_dft(frame, fl, false);
      for (int64_t k = 0; k <= fl / 2; ++k) {
        const int64_t at = ((b * frames + f) * (fl / 2 + 1) + k) * 2;
        max_err = std::max(max_err, std::abs(std::complex<double>(v[at], v[at + 1]) - want[k]));
      }
    }
  }
  EXPECT_LE(max_err, 1e-10);
}

TEST(SignalKernels, StftErrors) {
  const Tensor x = f32({1, 8, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  ir::Node node = signal_node("STFT", {"x", "frame_step", "window", "frame_length"});
  for (int64_t step : {0, -2}) {
    expect_error(run_direct(node, {x, i64({}, {step}), Tensor(), i64({}, {4})}), StatusCode::kInvalidArgument,
                 {"STFT 'sig_STFT'", "'frame_step'", std::to_string(step), "> 0"});
  }
  expect_error(run_direct(node, {x, i64({}, {2}), f32({3}, {1, 1, 1}), i64({}, {4})}), StatusCode::kInvalidArgument,
               {"'frame_length'", "is 4", "window has 3"});
  expect_error(run_direct(node, {x, i64({}, {2}), Tensor(), i64({}, {9})}), StatusCode::kInvalidArgument,
               {"frame length 9", "signal length 8"});
  expect_error(run_direct(node, {x, i64({}, {2}), Tensor(), i64({}, {0})}), StatusCode::kInvalidArgument,
               {"frame length", "is 0"});
  expect_error(run_direct(node, {x, i64({}, {2}), Tensor(), Tensor()}), StatusCode::kInvalidModel,
               {"'window' or input 'frame_length'"});
  expect_error(run_direct(node, {x, i64({}, {2}), f64({4}, {1, 1, 1, 1}), Tensor()}), StatusCode::kInvalidArgument,
               {"'window'", "float64"});
  expect_error(run_direct(node, {x, i64({}, {2}), f32({2, 2}, {1, 1, 1, 1}), Tensor()}), StatusCode::kInvalidArgument,
               {"'window'", "1-D"});
  // Complex signal with the default onesided 1; signal of rank 2.
  expect_error(run_direct(node, {f32({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({}, {2}), Tensor(), i64({}, {2})}),
               StatusCode::kInvalidArgument, {"onesided 1", "real signal"});
  expect_error(run_direct(node, {f32({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({}, {2}), Tensor(), i64({}, {2})}),
               StatusCode::kInvalidArgument, {"[batch, length, 1]"});
}

// ---- Windows and MelWeightMatrix ---------------------------------------------------------

TEST(SignalKernels, WindowsByHand) {
  // Periodic size 4 (N = 4, angles 0, π/2, π, 3π/2): Hann 0.5 - 0.5 cos = [0, 0.5, 1, 0.5];
  // Hamming 25/46 - 21/46 cos = [4/46, 25/46, 1, 25/46]; Blackman 0.42 - 0.5 cos(a) + 0.08 cos(2a)
  // = [0, 0.34, 1, 0.34].
  struct Case {
    const char* op;
    std::vector<float> want;
  };
  for (const Case& c :
       {Case{"HannWindow", {0, 0.5f, 1, 0.5f}}, Case{"HammingWindow", {4 / 46.f, 25 / 46.f, 1, 25 / 46.f}},
        Case{"BlackmanWindow", {0, 0.34f, 1, 0.34f}}}) {
    SCOPED_TRACE(c.op);
    ir::Node node = signal_node(c.op, {"size"});
    expect_near(signal_run(node, {i64({}, {4})}), {4}, c.want, 1e-6f);
    // Symmetric size 5 has N = 4 too, plus the closing value w[4] = w[0].
    set_int(node, "periodic", 0);
    std::vector<float> sym = c.want;
    sym.push_back(c.want[0]);
    expect_near(signal_run(node, {i32({}, {5})}), {5}, sym, 1e-6f);
    // Symmetric size 1 is [1].
    expect_near(signal_run(node, {i64({1}, {1})}), {1}, {1});
  }
  // Integer output: values cast (truncated), so periodic Hann of 4 as uint8 is [0, 0, 1, 0].
  ir::Node hann = signal_node("HannWindow", {"size"});
  set_int(hann, "output_datatype", static_cast<int64_t>(DataType::kUInt8));
  EXPECT_EQ(values<uint8_t>(signal_run(hann, {i64({}, {4})})), (std::vector<uint8_t>{0, 0, 1, 0}));
  // float64 output.
  set_int(hann, "output_datatype", static_cast<int64_t>(DataType::kFloat64));
  const Tensor y = signal_run(hann, {i64({}, {4})});
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  const auto v = values<double>(y);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_NEAR(v[1], 0.5, 1e-15);
  EXPECT_NEAR(v[2], 1.0, 1e-15);
}

TEST(SignalKernels, WindowErrors) {
  ir::Node node = signal_node("HannWindow", {"n"});
  for (int64_t size : {0, -4}) {
    expect_error(run_direct(node, {i64({}, {size})}), StatusCode::kInvalidArgument,
                 {"HannWindow 'sig_HannWindow'", "'n' (size)", std::to_string(size)});
  }
  expect_error(run_direct(node, {i64({2}, {3, 4})}), StatusCode::kInvalidArgument, {"one value", "[2]"});
  expect_error(run_direct(node, {f32({}, {4})}), StatusCode::kUnsupported, {"float32"});
  set_int(node, "output_datatype", static_cast<int64_t>(DataType::kFloat16));
  expect_error(run_direct(node, {i64({}, {4})}), StatusCode::kUnsupported, {"output_datatype 10"});
  ir::Node bad = signal_node("HammingWindow", {"n"});
  set_int(bad, "periodic", 3);
  expect_error(run_direct(bad, {i64({}, {4})}), StatusCode::kInvalidModel, {"periodic", "0 or 1"});
}

TEST(SignalKernels, MelWeightMatrixByHand) {
  // num_mel_bins 2, dft_length 16 (9 spectrogram bins), sample_rate 17 (so bin = floor(hz)),
  // 0 .. 8.8 Hz: points at 1/4, 2/4, 3/4 of mel(8.8) are 700 ((1 + 8.8/700)^(k/4) - 1) = 2.19,
  // 4.39, 6.59 Hz → bins 0, 2, 4, 6. Filter 0 rises over bins 0..2 and falls over 2..4: column 0
  // = [0, .5, 1, .5, 0, ...]; filter 1 likewise over 2..4..6.
  ir::Node node = signal_node("MelWeightMatrix", {"mel", "dft", "rate", "lo", "hi"});
  const Tensor y = signal_run(node, {i64({}, {2}), i64({}, {16}), i32({}, {17}), f32({}, {0.0f}), f32({}, {8.8f})});
  expect_near(y, {9, 2}, {0, 0, 0.5f, 0, 1, 0, 0.5f, 0.5f, 0, 1, 0, 0.5f, 0, 0, 0, 0, 0, 0});
  // num_mel_bins 1, dft_length 8, sample_rate 9, 0 .. 4.5 Hz: points 0, 1.497, 2.997 → bins 0, 1,
  // 2: [0, 1, 0, 0, 0]; here as float64 and with float64 edges.
  set_int(node, "output_datatype", static_cast<int64_t>(DataType::kFloat64));
  const Tensor z = signal_run(node, {i64({}, {1}), i64({}, {8}), i64({}, {9}), f64({}, {0.0}), f64({}, {4.5})});
  ASSERT_EQ(z.dtype(), DataType::kFloat64);
  EXPECT_EQ(values<double>(z), (std::vector<double>{0, 1, 0, 0, 0}));
}

TEST(SignalKernels, MelWeightMatrixErrors) {
  ir::Node node = signal_node("MelWeightMatrix", {"mel", "dft", "rate", "lo", "hi"});
  // upper 20 Hz: the last point (3/4 of the mel range, about 15 Hz) falls past bin 8.
  expect_error(run_direct(node, {i64({}, {2}), i64({}, {16}), i64({}, {17}), f32({}, {0}), f32({}, {20})}),
               StatusCode::kInvalidArgument, {"MelWeightMatrix 'sig_MelWeightMatrix'", "outside [0, 9)"});
  expect_error(run_direct(node, {i64({}, {0}), i64({}, {16}), i64({}, {17}), f32({}, {0}), f32({}, {8})}),
               StatusCode::kInvalidArgument, {"'mel' (num_mel_bins)", "is 0"});
  expect_error(run_direct(node, {i64({}, {2}), i64({}, {16}), i64({}, {-1}), f32({}, {0}), f32({}, {8})}),
               StatusCode::kInvalidArgument, {"'rate' (sample_rate)", "is -1"});
  expect_error(
      run_direct(node, {i64({}, {int64_t{1} << 20}), i64({}, {16}), i64({}, {17}), f32({}, {0}), f32({}, {8})}),
      StatusCode::kInvalidArgument, {"num_mel_bins 1048576", "too large"});
  expect_error(run_direct(node, {i64({}, {2}), i64({}, {16}), i64({}, {17}), f32({}, {5}), f32({}, {4})}),
               StatusCode::kInvalidArgument, {"0 <= lower <= upper"});
  expect_error(run_direct(node, {i64({}, {2}), i64({}, {16}), i64({}, {17}), f32({}, {NAN}), f32({}, {4})}),
               StatusCode::kInvalidArgument, {"0 <= lower <= upper"});
}

}  // namespace kernels_signal_test
}  // namespace edgemm
