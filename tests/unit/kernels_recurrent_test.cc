// LSTM, GRU and RNN (src/kernels/cpu/recurrent.cc): the GEMM paths (matmul_panels where the CPU
// has AVX-512F, dnnl_sgemm everywhere) against the reference loops on seeded random inputs, for
// every op and direction, with sequence_lens (0, partial and full lengths), initial states, biases,
// LSTM peepholes, layout 1, GRU's linear_before_reset, clip, input_forget and non-default
// activations, weights given at run time and constant (packed at create); a one-step RNN against
// its equation written out here; the registered kernels; and the errors for bad shapes, lengths and
// activations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/recurrent.h"
#include "nn_test_util.h"

namespace edgemm {
namespace kernels_recurrent_test {  // named for the file: unity batches merge anonymous namespaces
namespace recurrent_test {  // named: unity builds put several test files' anonymous namespaces together

using namespace nntest;
using kernels::RecurrentPath;

struct Case {
  std::string op;  // LSTM, GRU or RNN
  std::string direction = "forward";
  int64_t layout = 0;
  bool lens = false, init = false, bias = true, peep = false;
  bool lbr = false;     // GRU linear_before_reset
  bool exotic = false;  // clip, input_forget (LSTM) and non-default activations
  int64_t seq = 5, batch = 3, input = 6, hidden = 7;

  std::string describe() const {
    return op + " " + direction + " layout " + std::to_string(layout) + (lens ? " lens" : "") + (init ? " init" : "") +
           (bias ? " bias" : "") + (peep ? " peep" : "") + (lbr ? " lbr" : "") + (exotic ? " exotic" : "") +
           " hidden " + std::to_string(hidden);
  }
};

int64_t gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

ir::Node make_recurrent_node(const Case& c) {
  const bool lstm = c.op == "LSTM";
  std::vector<std::string> inputs = {"X",
                                     "W",
                                     "R",
                                     c.bias ? "B" : "",
                                     c.lens ? "seq_lens" : "",
                                     c.init ? "h0" : "",
                                     lstm && c.init ? "c0" : "",
                                     lstm && c.peep ? "P" : ""};
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  ir::Node node = make_node(c.op, inputs,
                            lstm ? std::vector<std::string>{"Y", "Y_h", "Y_c"} : std::vector<std::string>{"Y", "Y_h"});
  node.name = "rnn_node";
  set_int(node, "hidden_size", c.hidden);
  set_string(node, "direction", c.direction);
  set_int(node, "layout", c.layout);
  if (c.lbr) set_int(node, "linear_before_reset", 1);
  if (c.exotic) {
    set_float(node, "clip", 0.9f);
    ir::Attribute acts;
    acts.kind = ir::Attribute::Kind::kStrings;
    if (c.op == "LSTM") {
      set_int(node, "input_forget", 1);
      acts.strings = {"HardSigmoid", "LeakyRelu", "Softsign"};
      set_floats(node, "activation_alpha", {0.3f, 0.2f});
      set_floats(node, "activation_beta", {0.4f});
    } else if (c.op == "GRU") {
      acts.strings = {"Sigmoid", "ScaledTanh", "HardSigmoid", "Elu"};  // forward, then reverse
      set_floats(node, "activation_alpha", {1.5f, 0.25f, 0.7f});
      set_floats(node, "activation_beta", {0.8f, 0.5f});
    } else {
      acts.strings = {"Softplus"};
    }
    node.attributes["activations"] = acts;
  }
  return node;
}

std::vector<Tensor> make_inputs(const Case& c, uint32_t seed) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, g = gates(c.op), h = c.hidden;
  const Shape x_shape = c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input};
  const Shape state = c.layout == 0 ? Shape{dirs, c.batch, h} : Shape{c.batch, dirs, h};
  std::vector<Tensor> in(8);
  in[0] = random_f32(x_shape, seed);
  in[1] = random_f32({dirs, g * h, c.input}, seed + 1);
  in[2] = random_f32({dirs, g * h, h}, seed + 2);
  if (c.bias) in[3] = random_f32({dirs, 2 * g * h}, seed + 3);
  if (c.lens) {
    std::vector<int32_t> lens(static_cast<size_t>(c.batch));
    for (int64_t b = 0; b < c.batch; ++b) lens[b] = static_cast<int32_t>(b % 3 == 0 ? c.seq : b % 3 == 1 ? 0 : 2);
    in[4] = testutil::i32({c.batch}, lens);
  }
  if (c.init) {
    in[5] = random_f32(state, seed + 5);
    if (c.op == "LSTM") in[6] = random_f32(state, seed + 6);
  }
  if (c.peep) in[7] = random_f32({dirs, 3 * h}, seed + 7);
  in.resize(make_recurrent_node(c).inputs.size());
  return in;
}

/// Runs a kernel for `node` made along `path`; with `constant_weights` W and R are compile-time
/// constants, and when the kernel keeps them packed they reach run() without data, as in the
/// runtime. Returns every output.
std::vector<Tensor> run_path(const ir::Node& node, const std::vector<Tensor>& in, RecurrentPath path,
                             bool constant_weights, int threads, std::string* name = nullptr) {
  std::vector<const Tensor*> constants(in.size(), nullptr);
  if (constant_weights) constants[1] = &in[1], constants[2] = &in[2];
  kernels::KernelInfo info{node, 14, constants, nullptr};
  auto kernel = kernels::make_recurrent_kernel(info, path);
  EXPECT_TRUE(kernel.has_value()) << kernel.status().to_string();
  if (!kernel.has_value()) return {};
  if (name != nullptr) *name = (*kernel)->name();
  std::vector<Tensor> run_in = in;
  for (int i : {1, 2}) {
    if (constant_weights && !(*kernel)->reads_constant_input(i)) {
      run_in[i] = Tensor::borrow(in[i].dtype(), in[i].shape(), nullptr);
    }
  }
  DirectContext ctx(node, run_in, threads);
  const Status s = (*kernel)->run(ctx);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  std::vector<Tensor> out;
  for (int i = 0; i < ctx.output_count(); ++i) out.push_back(ctx.output(i));
  return out;
}

/// Max |a - b| over every output (shapes must match).
double max_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, diff(a[i], b[i]).max_abs);
  return m;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int variant = 0; variant < 4; ++variant) {
        Case c;
        c.op = op;
        c.direction = direction;
        c.layout = variant % 2;
        c.lens = variant >= 1;
        c.init = variant >= 2;
        c.bias = variant != 1;
        c.peep = c.op == "LSTM" && variant >= 2;
        c.lbr = c.op == "GRU" && variant == 3;
        c.exotic = variant == 3 && c.direction == "bidirectional";
        if (variant == 2) c.hidden = 40;  // gates * hidden spans several 32-column panels
        cases.push_back(c);
      }
    }
  }
  Case gru_lbr_plain;  // linear_before_reset on the default activations, batch 1
  gru_lbr_plain.op = "GRU";
  gru_lbr_plain.lbr = true;
  gru_lbr_plain.batch = 1;
  cases.push_back(gru_lbr_plain);
  return cases;
}

TEST(Recurrent, GemmPathsMatchTheReference) {
  uint32_t seed = 100;
  double worst = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.describe());
    const ir::Node node = make_recurrent_node(c);
    const std::vector<Tensor> in = make_inputs(c, seed += 10);
    const std::vector<Tensor> want = run_path(node, in, RecurrentPath::kReference, false, 1);
    ASSERT_FALSE(want.empty());
    const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
    const Shape y_shape = c.layout == 0 ? Shape{c.seq, dirs, c.batch, c.hidden} : Shape{c.batch, c.seq, dirs, c.hidden};
    ASSERT_EQ(want[0].shape(), y_shape);
    for (RecurrentPath path : {RecurrentPath::kPanels, RecurrentPath::kSgemm}) {
      for (bool constant : {false, true}) {
        for (int threads : {1, 2}) {
          std::string name;
          const std::vector<Tensor> got = run_path(node, in, path, constant, threads, &name);
          const double d = max_diff(got, want);
          worst = std::max(worst, d);
          EXPECT_LE(d, 1e-5) << name << (constant ? " constant weights" : "") << " threads " << threads;
        }
      }
    }
  }
  std::cout << "[ recurrent ] max |GEMM path - reference| over " << all_cases().size() << " cases: " << worst << "\n";
}

TEST(Recurrent, KernelNamesFollowThePath) {
  Case c;
  c.op = "LSTM";
  const ir::Node node = make_recurrent_node(c);
  const std::vector<Tensor> in = make_inputs(c, 7);
  std::string name;
  run_path(node, in, RecurrentPath::kReference, false, 1, &name);
  EXPECT_EQ(name, "lstm__reference");
  run_path(node, in, RecurrentPath::kSgemm, false, 1, &name);
  EXPECT_EQ(name, "f32_lstm__sgemm");
  run_path(node, in, RecurrentPath::kPanels, true, 1, &name);
  EXPECT_EQ(name, kernels::matmul_panels_available() ? "f32_lstm__avx512_panels" : "f32_lstm__sgemm");
}

TEST(Recurrent, OneRnnStepIsTheEquation) {
  // Y = tanh(x W^T + h0 R^T + Wb + Rb), one step, one direction, written out.
  Case c;
  c.op = "RNN";
  c.seq = 1;
  c.init = true;
  const ir::Node node = make_recurrent_node(c);
  const std::vector<Tensor> in = make_inputs(c, 21);
  const std::vector<float> x = testutil::values<float>(in[0]), w = testutil::values<float>(in[1]),
                           r = testutil::values<float>(in[2]), bias = testutil::values<float>(in[3]),
                           h0 = testutil::values<float>(in[5]);
  std::vector<float> want;
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t j = 0; j < c.hidden; ++j) {
      double s = bias[j] + bias[c.hidden + j];
      for (int64_t k = 0; k < c.input; ++k) s += w[j * c.input + k] * x[b * c.input + k];
      for (int64_t k = 0; k < c.hidden; ++k) s += r[j * c.hidden + k] * h0[b * c.hidden + k];
      want.push_back(static_cast<float>(std::tanh(s)));
    }
  }
  for (RecurrentPath path : {RecurrentPath::kReference, RecurrentPath::kPanels, RecurrentPath::kSgemm}) {
    const std::vector<Tensor> got = run_path(node, in, path, false, 1);
    ASSERT_EQ(got.size(), 2u);
    expect_near(got[0], {1, 1, c.batch, c.hidden}, want);
    expect_near(got[1], {1, c.batch, c.hidden}, want);
  }
}

TEST(Recurrent, RegisteredKernelsRunAtOpsets7And14) {
  Case c;
  c.op = "GRU";
  c.lens = true;
  c.init = true;
  const ir::Node node = make_recurrent_node(c);
  const std::vector<Tensor> in = make_inputs(c, 31);
  const std::vector<Tensor> want = run_path(node, in, RecurrentPath::kReference, false, 1);
  for (int64_t opset : {7, 14}) {
    for (size_t i = 0; i < want.size(); ++i) {
      auto got = run(node, in, opset, 1, i);
      ASSERT_TRUE(got.has_value()) << got.status().to_string();
      EXPECT_LE(diff(*got, want[i]).max_abs, 1e-5) << "opset " << opset << " output " << i;
    }
  }
  // Sequence entries of length 0: Y and Y_h are zeros for them (entry 1 of 3).
  const std::vector<float> y_h = testutil::values<float>(want[1]);
  for (int64_t j = 0; j < c.hidden; ++j) EXPECT_EQ(y_h[c.hidden + j], 0.0f);
}

TEST(Recurrent, BadShapesLengthsAndActivationsAreRefused) {
  Case c;
  c.op = "LSTM";
  c.lens = true;
  const ir::Node node = make_recurrent_node(c);
  std::vector<Tensor> in = make_inputs(c, 41);
  {
    std::vector<Tensor> bad = in;
    bad[1] = random_f32({1, 4 * c.hidden, c.input + 1}, 1);
    expect_error(run_direct(node, bad, 14), StatusCode::kInvalidArgument,
                 {"LSTM", "rnn_node", "input W 'W'", "[1,28,7]", "[1,28,6]"});
  }
  {
    std::vector<Tensor> bad = in;
    bad[3] = random_f32({1, 4 * c.hidden}, 1);
    expect_error(run_direct(node, bad, 14), StatusCode::kInvalidArgument,
                 {"LSTM", "rnn_node", "input B 'B'", "[1,56]"});
  }
  {
    std::vector<Tensor> bad = in;
    bad[4] = testutil::i32({c.batch}, {1, 9, 2});
    expect_error(run_direct(node, bad, 14), StatusCode::kInvalidArgument,
                 {"LSTM", "rnn_node", "sequence_lens 'seq_lens'", "9", "index 1"});
    bad[4] = testutil::i32({c.batch}, {1, -1, 2});
    expect_error(run_direct(node, bad, 14), StatusCode::kInvalidArgument, {"sequence_lens", "-1"});
    bad[4] = testutil::i32({2}, {1, 2});
    expect_error(run_direct(node, bad, 14), StatusCode::kInvalidArgument, {"sequence_lens 'seq_lens'", "[2]"});
  }
  {
    ir::Node gelu = node;
    ir::Attribute acts;
    acts.kind = ir::Attribute::Kind::kStrings;
    acts.strings = {"Sigmoid", "Gelu", "Tanh"};
    gelu.attributes["activations"] = acts;
    expect_error(run_direct(gelu, in, 14), StatusCode::kUnsupported, {"LSTM", "rnn_node", "Gelu"});
  }
  {
    ir::Node sideways = node;
    set_string(sideways, "direction", "sideways");
    expect_error(run_direct(sideways, in, 14), StatusCode::kInvalidModel, {"direction", "sideways"});
  }
}

}  // namespace recurrent_test
}  // namespace kernels_recurrent_test
}  // namespace edgemm
