/// \file recurrent.cc
/// LSTM, GRU and RNN of the default ONNX domain (Operators.md, versions 7 and 14; 14 adds
/// `layout`), float32. Inputs X, W, R, optional B, sequence_lens, initial_h, (LSTM) initial_c and
/// P; outputs Y, Y_h, (LSTM) Y_c, each optional. Gate order: LSTM i, o, f, c (P: i, o, f); GRU z,
/// r, h. Bidirectional: direction 0 forward, 1 reverse. layout 0: X [seq, batch, input], Y [seq,
/// dirs, batch, hidden], states [dirs, batch, hidden]; layout 1: X [batch, seq, input], Y [batch,
/// seq, dirs, hidden], states [batch, dirs, hidden].
///
/// sequence_lens (int32, int64 accepted) holds each batch entry's length in [0, seq]; the reverse
/// direction runs from step len - 1 down to 0. Y is zero past an entry's length; Y_h / Y_c hold the
/// state after its last step, zeros for length 0 (as ONNX Runtime does; the spec does not say).
/// clip bounds every activation's input (gate sums, peepholes included), not the cell state fed to
/// h, as ONNX Runtime does. input_forget couples the gates as f = 1 - i.
///
/// Activations (case-insensitive): Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
/// ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; others are kUnsupported. activation_alpha /
/// _beta are consumed in the order of the activations, a value by each activation that takes one
/// (ONNX Runtime's reading); a missing one takes the ONNX operator's default (LeakyRelu 0.01,
/// ThresholdedRelu 1, Affine 1 / 0, ScaledTanh 1 / 1, HardSigmoid 0.2 / 0.5, Elu 1). One
/// direction's list serves both directions of a bidirectional node.
///
/// Paths (recurrent.h): the reference loops, and the GEMM path: XW = X x W^T (+ biases) for all
/// steps, directions and gates in one product, then per step and direction H x R^T and the gate
/// math per batch entry, on matmul_panels() (AVX-512F) or dnnl_sgemm. The registered kernels take
/// the GEMM path, or the reference loops when oneDNN is switched off (onednn::enabled()).

#include "kernels/cpu/recurrent.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <new>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/vector_math.h"

namespace edgemm::kernels {
namespace {
namespace recurrent {  // named: unity builds put several files' anonymous namespaces together

// ---------------------------------------------------------------------------------------------
// Attributes

enum class Cell { kRnn, kGru, kLstm };

int64_t gate_count(Cell cell) { return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1; }
int64_t activation_count(Cell cell) { return cell == Cell::kLstm ? 3 : cell == Cell::kGru ? 2 : 1; }

inline float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

using ActivationFn = float (*)(float x, float alpha, float beta);

/// One activation of the spec's list, with its defaults for alpha and beta.
struct ActivationInfo {
  const char* name;
  ActivationFn fn;
  bool takes_alpha, takes_beta;
  float alpha, beta;
};

const ActivationInfo kActivations[] = {
    {"Relu", [](float x, float, float) { return x > 0 ? x : 0.0f; }, false, false, 0, 0},
    {"Tanh", [](float x, float, float) { return std::tanh(x); }, false, false, 0, 0},
    {"Sigmoid", [](float x, float, float) { return sigmoid(x); }, false, false, 0, 0},
    {"Affine", [](float x, float a, float b) { return a * x + b; }, true, true, 1, 0},
    {"LeakyRelu", [](float x, float a, float) { return x >= 0 ? x : a * x; }, true, false, 0.01f, 0},
    {"ThresholdedRelu", [](float x, float a, float) { return x > a ? x : 0.0f; }, true, false, 1, 0},
    {"ScaledTanh", [](float x, float a, float b) { return a * std::tanh(b * x); }, true, true, 1, 1},
    {"HardSigmoid", [](float x, float a, float b) { return std::min(1.0f, std::max(0.0f, a * x + b)); }, true, true,
     0.2f, 0.5f},
    {"Elu", [](float x, float a, float) { return x >= 0 ? x : a * (std::exp(x) - 1.0f); }, true, false, 1, 0},
    {"Softsign", [](float x, float, float) { return x / (1.0f + std::fabs(x)); }, false, false, 0, 0},
    {"Softplus", [](float x, float, float) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }, false,
     false, 0, 0},
};

/// An activation with its alpha and beta.
struct Activation {
  ActivationFn fn = nullptr;
  float alpha = 0, beta = 0;
  float operator()(float x) const { return fn(x, alpha, beta); }
};

/// Attributes of one node.
struct Spec {
  Cell cell = Cell::kRnn;
  int64_t hidden = -1;  // hidden_size, -1 when absent (then R's last extent)
  int64_t dirs = 1;
  bool reverse = false;  // direction "reverse" (dirs 1)
  int64_t layout = 0;
  bool has_clip = false;
  float clip = 0;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  std::vector<Activation> acts;      // activation_count(cell) per direction

  const Activation& act(int64_t d, int64_t k) const { return acts[d * activation_count(cell) + k]; }
  bool backward(int64_t d) const { return reverse || d == 1; }
  float clipped(float x) const { return has_clip ? std::min(clip, std::max(-clip, x)) : x; }
};

// Sigmoid and Tanh in the GEMM path: the vectorizable approximations of vector_math.h (within
// ~7e-7 relative of std::exp / std::tanh; the reference loops keep the std:: functions).
EDGEMM_AVX2_CLONES void sigmoid_in_place(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = sigmoid_approx(v[i]);
}
EDGEMM_AVX2_CLONES void tanh_in_place(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = tanh_approx(v[i]);
}

/// Activates n values in place.
void activate_in_place(const Activation& a, float* v, int64_t n) {
  if (a.fn == kActivations[2].fn) return sigmoid_in_place(v, n);
  if (a.fn == kActivations[1].fn) return tanh_in_place(v, n);
  for (int64_t i = 0; i < n; ++i) v[i] = a(v[i]);
}

/// Clips (when the node has `clip`) and activates n values in place.
void clip_activate(const Spec& sp, const Activation& a, float* v, int64_t n) {
  if (sp.has_clip) {
    for (int64_t i = 0; i < n; ++i) v[i] = sp.clipped(v[i]);
  }
  activate_in_place(a, v, n);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Expected<std::vector<Activation>> read_activations(const ir::Node& node, Cell cell, int64_t dirs) {
  const int64_t per_dir = activation_count(cell);
  std::vector<std::string> names;
  auto it = node.attributes.find("activations");
  if (it != node.attributes.end()) {
    if (it->second.kind != ir::Attribute::Kind::kStrings) {
      return ir::node_error(node, StatusCode::kInvalidModel, "attribute 'activations' must be a list of strings");
    }
    names = it->second.strings;
  }
  if (names.empty()) {
    if (cell == Cell::kLstm) names = {"Sigmoid", "Tanh", "Tanh"};
    if (cell == Cell::kGru) names = {"Sigmoid", "Tanh"};
    if (cell == Cell::kRnn) names = {"Tanh"};
  }
  const int64_t given = static_cast<int64_t>(names.size());
  if (given != per_dir && given != 2 * per_dir) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute 'activations' lists " + std::to_string(given) + " functions; expected " +
                              std::to_string(per_dir) + " per direction (" + std::to_string(per_dir * dirs) + " for " +
                              std::to_string(dirs) + " direction(s))");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<float> alphas, node.attr_floats("activation_alpha"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<float> betas, node.attr_floats("activation_beta"));
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> acts;
  for (const std::string& name : names) {
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& candidate : kActivations) {
      if (lower(candidate.name) == lower(name)) info = &candidate;
    }
    if (info == nullptr) {
      return ir::node_error(node, StatusCode::kUnsupported,
                            "activation '" + name +
                                "' is not supported (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                                "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus are)");
    }
    Activation a{info->fn, info->alpha, info->beta};
    if (info->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    acts.push_back(a);
  }
  // One list for a bidirectional node serves both directions; two lists for one direction: the first.
  if (dirs == 2 && given == per_dir) acts.insert(acts.end(), acts.begin(), acts.end());
  acts.resize(static_cast<size_t>(per_dir * dirs));
  return acts;
}

Expected<Spec> read_spec(const KernelInfo& info) {
  const ir::Node& node = info.node;
  Spec sp;
  sp.cell = node.op_type == "LSTM" ? Cell::kLstm : node.op_type == "GRU" ? Cell::kGru : Cell::kRnn;
  if (node.has_attr("hidden_size")) {
    EDGEMM_ASSIGN_OR_RETURN(sp.hidden, node.attr_int("hidden_size", -1));
    if (sp.hidden <= 0) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute 'hidden_size' is " + std::to_string(sp.hidden) + "; it must be positive");
    }
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string direction, node.attr_string("direction", "forward"));
  if (direction == "bidirectional") {
    sp.dirs = 2;
  } else if (direction == "reverse") {
    sp.reverse = true;
  } else if (direction != "forward") {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "attribute 'direction' is '" + direction + "'; expected forward, reverse or bidirectional");
  }
  if (info.opset >= 14) {
    EDGEMM_ASSIGN_OR_RETURN(sp.layout, node.attr_int("layout", 0));
    if (sp.layout != 0 && sp.layout != 1) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute 'layout' is " + std::to_string(sp.layout) + "; expected 0 or 1");
    }
  }
  if (node.has_attr("clip")) {
    EDGEMM_ASSIGN_OR_RETURN(sp.clip, node.attr_float("clip", 0));
    if (!(sp.clip > 0)) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "attribute 'clip' is " + std::to_string(sp.clip) + "; it must be positive");
    }
    sp.has_clip = true;
  }
  if (sp.cell == Cell::kLstm) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t input_forget, node.attr_int("input_forget", 0));
    sp.input_forget = input_forget != 0;
  }
  if (sp.cell == Cell::kGru) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t lbr, node.attr_int("linear_before_reset", 0));
    sp.linear_before_reset = lbr != 0;
  }
  EDGEMM_ASSIGN_OR_RETURN(sp.acts, read_activations(node, sp.cell, sp.dirs));
  return sp;
}

// ---------------------------------------------------------------------------------------------
// Inputs, shapes and outputs of one run

/// Extents of a run and the layout's offsets.
struct Dims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1, layout = 0;

  int64_t gh() const { return gates * hidden; }
  /// Row of X (and of the input projection) holding time step t of batch entry b.
  int64_t x_row(int64_t t, int64_t b) const { return layout == 0 ? t * batch + b : b * seq + t; }
  /// Offset of Y's hidden vector at (t, direction d, b).
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (layout == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d) * hidden;
  }
  /// Offset of a state's (initial_h, Y_h, ...) hidden vector at (d, b).
  int64_t state_offset(int64_t d, int64_t b) const { return (layout == 0 ? d * batch + b : b * dirs + d) * hidden; }
};

/// Data of one run; optional inputs and unwanted outputs are null. w / r may be null when the
/// kernel holds them packed.
struct Io {
  const float *x = nullptr, *w = nullptr, *r = nullptr, *bias = nullptr, *peep = nullptr;
  const float *init_h = nullptr, *init_c = nullptr;
  std::vector<int64_t> lens;  // per batch entry
  int64_t max_len = 0;
  float *y = nullptr, *y_h = nullptr, *y_c = nullptr;
};

const char* const kInputNames[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};

Status shape_error(const ir::Node& node, int i, const Shape& got, const Shape& want, const std::string& meaning) {
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        std::string("input ") + kInputNames[i] + " '" + node.inputs[i] + "' has shape " +
                            shape_to_string(got) + "; expected " + shape_to_string(want) + " (" + meaning + ")");
}

/// Checks the inputs against each other and the attributes, allocates the wanted outputs and
/// fills `dm` and `io`.
Status prepare(KernelContext& ctx, const Spec& sp, Dims& dm, Io& io) {
  const ir::Node& node = ctx.node();
  const Tensor* in[8] = {};
  for (int i = 0; i < 8; ++i) in[i] = i < ctx.input_count() ? ctx.input(i) : nullptr;
  if (in[0] == nullptr || in[1] == nullptr || in[2] == nullptr) {
    return ir::node_error(node, StatusCode::kInvalidModel, "inputs X, W and R are required");
  }
  const DataType dt = in[0]->dtype();
  if (dt != DataType::kFloat32) return unsupported_dtype(node, 0, dt);
  for (int i = 1; i < 8; ++i) {
    if (in[i] != nullptr && i != 4 && in[i]->dtype() != dt) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            std::string("input ") + kInputNames[i] + " '" + node.inputs[i] + "' has dtype " +
                                dtype_name(in[i]->dtype()) + " but X has " + dtype_name(dt));
    }
  }
  if (sp.cell != Cell::kLstm && (in[6] != nullptr || in[7] != nullptr)) {
    return ir::node_error(node, StatusCode::kInvalidModel, "has more than 6 inputs; only LSTM takes initial_c and P");
  }
  const Shape& xs = in[0]->shape();
  if (xs.size() != 3) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input X '" + node.inputs[0] + "' has shape " + shape_to_string(xs) + "; expected rank 3");
  }
  dm.layout = sp.layout;
  dm.seq = sp.layout == 0 ? xs[0] : xs[1];
  dm.batch = sp.layout == 0 ? xs[1] : xs[0];
  dm.input = xs[2];
  dm.dirs = sp.dirs;
  dm.gates = gate_count(sp.cell);
  const Shape& rs = in[2]->shape();
  dm.hidden = sp.hidden > 0 ? sp.hidden : (rs.size() == 3 ? rs[2] : 0);
  const int64_t g = dm.gates, h = dm.hidden, dirs = dm.dirs;
  if (h > (int64_t{1} << 32)) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        "hidden_size " + std::to_string(h) + " (from the attribute or input R '" + node.inputs[2] + "') is too large");
  }
  const std::string gates = g == 1 ? "" : std::to_string(g) + "*";
  if (rs != Shape{dirs, g * h, h} || h <= 0) {
    return shape_error(node, 2, rs, Shape{dirs, g * h, h}, "[num_directions, " + gates + "hidden_size, hidden_size]");
  }
  if (in[1]->shape() != Shape{dirs, g * h, dm.input}) {
    return shape_error(node, 1, in[1]->shape(), Shape{dirs, g * h, dm.input},
                       "[num_directions, " + gates + "hidden_size, input_size]");
  }
  if (in[3] != nullptr && in[3]->shape() != Shape{dirs, 2 * g * h}) {
    return shape_error(node, 3, in[3]->shape(), Shape{dirs, 2 * g * h},
                       "[num_directions, " + std::to_string(2 * g) + "*hidden_size]");
  }
  const Shape state = sp.layout == 0 ? Shape{dirs, dm.batch, h} : Shape{dm.batch, dirs, h};
  const char* state_meaning =
      sp.layout == 0 ? "[num_directions, batch_size, hidden_size]" : "[batch_size, num_directions, hidden_size]";
  for (int i : {5, 6}) {
    if (in[i] != nullptr && in[i]->shape() != state) return shape_error(node, i, in[i]->shape(), state, state_meaning);
  }
  if (in[7] != nullptr && in[7]->shape() != Shape{dirs, 3 * h}) {
    return shape_error(node, 7, in[7]->shape(), Shape{dirs, 3 * h}, "[num_directions, 3*hidden_size]");
  }
  io.lens.assign(static_cast<size_t>(dm.batch), dm.seq);
  if (in[4] != nullptr) {
    if (in[4]->shape() != Shape{dm.batch}) return shape_error(node, 4, in[4]->shape(), Shape{dm.batch}, "[batch_size]");
    EDGEMM_ASSIGN_OR_RETURN(io.lens, read_int_values(node, 4, *in[4]));
    for (size_t b = 0; b < io.lens.size(); ++b) {
      if (io.lens[b] < 0 || io.lens[b] > dm.seq) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input sequence_lens '" + node.inputs[4] + "' holds " + std::to_string(io.lens[b]) +
                                  " at index " + std::to_string(b) + ", outside [0, " + std::to_string(dm.seq) +
                                  "] (seq_length)");
      }
    }
  }
  io.max_len = io.lens.empty() ? 0 : *std::max_element(io.lens.begin(), io.lens.end());
  io.x = in[0]->data<float>();
  io.w = in[1]->data<float>();
  io.r = in[2]->data<float>();
  io.bias = in[3] != nullptr ? in[3]->data<float>() : nullptr;
  io.init_h = in[5] != nullptr ? in[5]->data<float>() : nullptr;
  io.init_c = in[6] != nullptr ? in[6]->data<float>() : nullptr;
  io.peep = in[7] != nullptr ? in[7]->data<float>() : nullptr;

  const Shape y_shape = sp.layout == 0 ? Shape{dm.seq, dirs, dm.batch, h} : Shape{dm.batch, dm.seq, dirs, h};
  float** outs[3] = {&io.y, &io.y_h, &io.y_c};
  const int outputs = sp.cell == Cell::kLstm ? 3 : 2;
  for (int i = 0; i < outputs && i < ctx.output_count(); ++i) {
    if (!ctx.output_wanted(i)) continue;
    EDGEMM_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(i, dt, i == 0 ? y_shape : state));
    *outs[i] = t->data<float>();
  }
  // Y is zero past each entry's length: clear it unless every entry runs all steps.
  if (io.y != nullptr && std::any_of(io.lens.begin(), io.lens.end(), [&](int64_t n) { return n < dm.seq; })) {
    std::fill(io.y, io.y + dm.seq * dirs * dm.batch * h, 0.0f);
  }
  return Status::ok();
}

/// Writes the final state `state` ([batch, hidden]) of direction d into Y_h / Y_c (`out`), zeros
/// for entries of length 0.
void write_state(const Dims& dm, const Io& io, int64_t d, const float* state, float* out) {
  if (out == nullptr) return;
  for (int64_t b = 0; b < dm.batch; ++b) {
    float* dst = out + dm.state_offset(d, b);
    if (io.lens[b] == 0) std::fill(dst, dst + dm.hidden, 0.0f);
    if (io.lens[b] != 0) std::copy(state + b * dm.hidden, state + (b + 1) * dm.hidden, dst);
  }
}

/// Loads initial_h (or initial_c) of direction d into `state` [batch, hidden], zeros when absent.
void load_state(const Dims& dm, int64_t d, const float* init, float* state) {
  for (int64_t b = 0; b < dm.batch; ++b) {
    float* dst = state + b * dm.hidden;
    if (init == nullptr) std::fill(dst, dst + dm.hidden, 0.0f);
    if (init != nullptr) std::copy(init + dm.state_offset(d, b), init + dm.state_offset(d, b) + dm.hidden, dst);
  }
}

// ---------------------------------------------------------------------------------------------
// Reference: the equations of the spec, one batch entry and time step at a time

void run_reference(const Spec& sp, const Dims& dm, const Io& io) {
  const int64_t in = dm.input, h = dm.hidden, gh = dm.gh();
  std::vector<float> hs(static_cast<size_t>(dm.batch * h)), cs(hs.size()), next_h(h), z(h), rg(h), rh(h);
  std::vector<double> xpart(gh), hpart(gh);
  auto fire = [&](const Activation& a, double pre) { return a(sp.clipped(static_cast<float>(pre))); };
  for (int64_t d = 0; d < dm.dirs; ++d) {
    const float* w = io.w + d * gh * in;
    const float* r = io.r + d * gh * h;
    const float* wb = io.bias != nullptr ? io.bias + d * 2 * gh : nullptr;
    const float* rb = wb != nullptr ? wb + gh : nullptr;
    const float* p = io.peep != nullptr ? io.peep + d * 3 * h : nullptr;
    load_state(dm, d, io.init_h, hs.data());
    load_state(dm, d, io.init_c, cs.data());
    for (int64_t b = 0; b < dm.batch; ++b) {
      float* hb = hs.data() + b * h;
      float* cb = cs.data() + b * h;
      const int64_t len = io.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = sp.backward(d) ? len - 1 - s : s;
        const float* xt = io.x + dm.x_row(t, b) * in;
        // xpart = x W^T + Wb, hpart = h R^T + Rb for every gate row.
        for (int64_t row = 0; row < gh; ++row) {
          double sx = wb != nullptr ? wb[row] : 0.0, sh = rb != nullptr ? rb[row] : 0.0;
          for (int64_t k = 0; k < in; ++k) sx += static_cast<double>(w[row * in + k]) * xt[k];
          for (int64_t k = 0; k < h; ++k) sh += static_cast<double>(r[row * h + k]) * hb[k];
          xpart[row] = sx;
          hpart[row] = sh;
        }
        if (sp.cell == Cell::kRnn) {
          for (int64_t j = 0; j < h; ++j) next_h[j] = fire(sp.act(d, 0), xpart[j] + hpart[j]);
        } else if (sp.cell == Cell::kGru) {
          const Activation &f = sp.act(d, 0), &g = sp.act(d, 1);
          for (int64_t j = 0; j < h; ++j) {
            z[j] = fire(f, xpart[j] + hpart[j]);
            rg[j] = fire(f, xpart[h + j] + hpart[h + j]);
            rh[j] = rg[j] * hb[j];
          }
          for (int64_t j = 0; j < h; ++j) {
            const int64_t row = 2 * h + j;
            double pre;
            if (sp.linear_before_reset) {
              pre = xpart[row] + rg[j] * hpart[row];
            } else {  // (r . H) R_h^T + Rb_h
              double sh = rb != nullptr ? rb[row] : 0.0;
              for (int64_t k = 0; k < h; ++k) sh += static_cast<double>(r[row * h + k]) * rh[k];
              pre = xpart[row] + sh;
            }
            next_h[j] = (1.0f - z[j]) * fire(g, pre) + z[j] * hb[j];
          }
        } else {
          const Activation &f = sp.act(d, 0), &g = sp.act(d, 1), &hact = sp.act(d, 2);
          for (int64_t j = 0; j < h; ++j) {
            const double c_prev = cb[j];
            double pi = xpart[j] + hpart[j], po = xpart[h + j] + hpart[h + j];
            double pf = xpart[2 * h + j] + hpart[2 * h + j], pc = xpart[3 * h + j] + hpart[3 * h + j];
            if (p != nullptr) {
              pi += p[j] * c_prev;
              pf += p[2 * h + j] * c_prev;
            }
            const float i_gate = fire(f, pi);
            const float f_gate = sp.input_forget ? 1.0f - i_gate : fire(f, pf);
            const float c_new = f_gate * cb[j] + i_gate * fire(g, pc);
            if (p != nullptr) po += static_cast<double>(p[h + j]) * c_new;
            cb[j] = c_new;  // the products above read h only
            next_h[j] = fire(f, po) * hact(c_new);
          }
        }
        std::copy(next_h.begin(), next_h.end(), hb);
        if (io.y != nullptr) std::copy(hb, hb + h, io.y + dm.y_offset(t, d, b));
      }
    }
    write_state(dm, io, d, hs.data(), io.y_h);
    write_state(dm, io, d, cs.data(), io.y_c);
  }
}

// ---------------------------------------------------------------------------------------------
// GEMM path

/// The B operand of y = a x B: packed panels of B [k, n], or B^T [n, k] read in place (row
/// stride ldb) by dnnl_sgemm.
struct GemmB {
  const PackedPanels* panels = nullptr;
  const float* bt = nullptr;
  int64_t ldb = 0, k = 0, n = 0;
};

/// y [m, n] (row stride n) = a [m, k] (row stride lda) x B.
Status gemm(const ir::Node& node, const GemmB& b, const float* a, int64_t lda, int64_t m, float* y, int threads) {
  if (m == 0 || b.n == 0) return Status::ok();
  if (b.k == 0) {
    std::fill(y, y + m * b.n, 0.0f);
    return Status::ok();
  }
  if (b.panels != nullptr) {
    matmul_panels(*b.panels, a, lda, m, nullptr, y, threads);
    return Status::ok();
  }
  onednn::set_threads(threads);
  const dnnl_status_t st = dnnl_sgemm('N', 'T', m, b.n, b.k, 1.0f, a, lda, b.bt, b.ldb, 0.0f, y, b.n);
  if (st != dnnl_success) {
    return ir::node_error(node, StatusCode::kInternal, "oneDNN sgemm failed (status " + std::to_string(st) + ")");
  }
  return Status::ok();
}

using Panels = std::shared_ptr<const PackedPanels>;

/// Packs `count` rows of `rows` ([count, k], row-major) as the B [k, count] of matmul_panels();
/// null when either extent is 0. Throws std::bad_alloc.
Panels pack_transposed(const float* rows, int64_t count, int64_t k) {
  if (count == 0 || k == 0) return nullptr;
  std::vector<float> b(static_cast<size_t>(count * k));
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t kk = 0; kk < k; ++kk) b[kk * count + i] = rows[i * k + kk];
  }
  return std::make_shared<const PackedPanels>(b.data(), k, count);
}

/// W and R in panels: W^T of every direction side by side ([input, dirs * gates * hidden]), and
/// per direction R^T ([hidden, gates * hidden]; GRU with linear_before_reset = 0: the z and r
/// gates in `r`, the h gate in `r_h`).
struct PackedWeights {
  bool has_w = false, has_r = false;
  Panels w;
  std::vector<Panels> r, r_h;
};

bool split_gru(const Spec& sp) { return sp.cell == Cell::kGru && !sp.linear_before_reset; }

void pack_r(PackedWeights& pw, const Spec& sp, const float* r, int64_t dirs, int64_t gates, int64_t h) {
  pw.r.clear();
  pw.r_h.clear();
  for (int64_t d = 0; d < dirs; ++d) {
    const float* rd = r + d * gates * h * h;
    if (split_gru(sp)) {
      pw.r.push_back(pack_transposed(rd, 2 * h, h));
      pw.r_h.push_back(pack_transposed(rd + 2 * h * h, h, h));
    } else {
      pw.r.push_back(pack_transposed(rd, gates * h, h));
    }
  }
  pw.has_r = true;
}

/// The GEMM path (see the file comment). `packed` null: sgemm on W and R in place.
Status run_gemm(const ir::Node& node, const Spec& sp, const Dims& dm, const Io& io, const PackedWeights* packed,
                int threads) {
  const int64_t in = dm.input, h = dm.hidden, gh = dm.gh(), nw = dm.dirs * gh;
  const int64_t rows = dm.seq * dm.batch;
  const bool split = split_gru(sp);
  std::vector<float> xw, bias_in, rb_h, hs, cs, hr, rh, hh;
  try {
    xw.resize(static_cast<size_t>(rows * nw));
    bias_in.assign(static_cast<size_t>(nw), 0.0f);
    rb_h.assign(static_cast<size_t>(dm.dirs * h), 0.0f);
    hs.resize(static_cast<size_t>(dm.batch * h));
    cs.resize(hs.size());
    hr.resize(static_cast<size_t>(dm.batch * gh));
    if (split) {
      rh.assign(hs.size(), 0.0f);
      hh.resize(hs.size());
    }
  } catch (const std::bad_alloc&) {
    return ir::node_error(node, StatusCode::kOutOfMemory, "could not allocate the gate buffers");
  }
  // Input projection of every step, direction and gate, plus Wb + Rb (GRU with
  // linear_before_reset: Rb of the h gate stays apart, inside r . (H R_h^T + Rb_h)).
  GemmB wb{packed != nullptr ? packed->w.get() : nullptr, io.w, in, in, nw};
  EDGEMM_RETURN_IF_ERROR(gemm(node, wb, io.x, in, rows, xw.data(), threads));
  if (io.bias != nullptr) {
    for (int64_t d = 0; d < dm.dirs; ++d) {
      const float* wbias = io.bias + d * 2 * gh;
      const float* rbias = wbias + gh;
      for (int64_t j = 0; j < gh; ++j) {
        const bool apart = sp.linear_before_reset && j >= 2 * h;
        bias_in[d * gh + j] = wbias[j] + (apart ? 0.0f : rbias[j]);
        if (apart) rb_h[d * h + j - 2 * h] = rbias[j];
      }
    }
    parallel_for(threads, rows, nw, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        float* dst = xw.data() + row * nw;
        for (int64_t j = 0; j < nw; ++j) dst[j] += bias_in[j];
      }
    });
  }
  const int64_t r_cols = split ? 2 * h : gh;
  for (int64_t d = 0; d < dm.dirs; ++d) {
    const float* rd = io.r + d * gh * h;
    GemmB rb{packed != nullptr ? packed->r[d].get() : nullptr, rd, h, h, r_cols};
    GemmB rhb{split && packed != nullptr ? packed->r_h[d].get() : nullptr, rd + 2 * h * h, h, h, h};
    const float* p = io.peep != nullptr ? io.peep + d * 3 * h : nullptr;
    const int64_t acts = activation_count(sp.cell);
    const Activation &f = sp.act(d, 0), &g = sp.act(d, acts > 1 ? 1 : 0), &hact = sp.act(d, acts - 1);
    load_state(dm, d, io.init_h, hs.data());
    load_state(dm, d, io.init_c, cs.data());
    const bool backward = sp.backward(d);
    // Time step of entry b at step s, or -1 when the entry has ended.
    auto time_of = [&](int64_t s, int64_t b) -> int64_t {
      const int64_t len = io.lens[b];
      if (s >= len) return -1;
      return backward ? len - 1 - s : s;
    };
    for (int64_t s = 0; s < io.max_len; ++s) {
      EDGEMM_RETURN_IF_ERROR(gemm(node, rb, hs.data(), h, dm.batch, hr.data(), threads));
      parallel_for(threads, dm.batch, gh * 16, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t t = time_of(s, b);
          if (t < 0) continue;
          const float* xr = xw.data() + dm.x_row(t, b) * nw + d * gh;
          float* gr = hr.data() + b * r_cols;
          float* hb = hs.data() + b * h;
          if (sp.cell == Cell::kRnn) {
            for (int64_t j = 0; j < h; ++j) gr[j] += xr[j];
            clip_activate(sp, f, gr, h);
            std::copy(gr, gr + h, hb);
          } else if (sp.cell == Cell::kGru) {
            for (int64_t j = 0; j < 2 * h; ++j) gr[j] += xr[j];
            clip_activate(sp, f, gr, 2 * h);  // z, r
            if (split) {
              float* rhb = rh.data() + b * h;
              for (int64_t j = 0; j < h; ++j) rhb[j] = gr[h + j] * hb[j];
              continue;  // the h gate after the (r . H) R_h^T product below
            }
            float* gh_gate = gr + 2 * h;
            const float* rbh = rb_h.data() + d * h;
            for (int64_t j = 0; j < h; ++j) gh_gate[j] = xr[2 * h + j] + gr[h + j] * (gh_gate[j] + rbh[j]);
            clip_activate(sp, g, gh_gate, h);
            for (int64_t j = 0; j < h; ++j) hb[j] = (1.0f - gr[j]) * gh_gate[j] + gr[j] * hb[j];
          } else {
            float* cb = cs.data() + b * h;
            for (int64_t j = 0; j < gh; ++j) gr[j] += xr[j];
            float *gi = gr, *go = gr + h, *gf = gr + 2 * h, *gc = gr + 3 * h;
            if (p != nullptr) {
              for (int64_t j = 0; j < h; ++j) gi[j] += p[j] * cb[j];
              if (!sp.input_forget) {
                for (int64_t j = 0; j < h; ++j) gf[j] += p[2 * h + j] * cb[j];
              }
            }
            clip_activate(sp, f, gi, h);
            if (sp.input_forget) {
              for (int64_t j = 0; j < h; ++j) gf[j] = 1.0f - gi[j];
            } else {
              clip_activate(sp, f, gf, h);
            }
            clip_activate(sp, g, gc, h);
            for (int64_t j = 0; j < h; ++j) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
            if (p != nullptr) {
              for (int64_t j = 0; j < h; ++j) go[j] += p[h + j] * cb[j];
            }
            clip_activate(sp, f, go, h);
            std::copy(cb, cb + h, gc);
            activate_in_place(hact, gc, h);  // h(C): not clipped
            for (int64_t j = 0; j < h; ++j) hb[j] = go[j] * gc[j];
          }
          if (io.y != nullptr && !split) std::copy(hb, hb + h, io.y + dm.y_offset(t, d, b));
        }
      });
      if (!split) continue;
      EDGEMM_RETURN_IF_ERROR(gemm(node, rhb, rh.data(), h, dm.batch, hh.data(), threads));
      parallel_for(threads, dm.batch, h * 16, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t t = time_of(s, b);
          if (t < 0) continue;
          const float* xr = xw.data() + dm.x_row(t, b) * nw + d * gh;
          const float* z = hr.data() + b * r_cols;
          float* hhb = hh.data() + b * h;
          float* hb = hs.data() + b * h;
          for (int64_t j = 0; j < h; ++j) hhb[j] += xr[2 * h + j];
          clip_activate(sp, g, hhb, h);
          for (int64_t j = 0; j < h; ++j) hb[j] = (1.0f - z[j]) * hhb[j] + z[j] * hb[j];
          if (io.y != nullptr) std::copy(hb, hb + h, io.y + dm.y_offset(t, d, b));
        }
      });
    }
    write_state(dm, io, d, hs.data(), io.y_h);
    write_state(dm, io, d, cs.data(), io.y_c);
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Kernel

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(Spec spec, RecurrentPath path, std::string name, PackedWeights packed)
      : sp_(std::move(spec)), path_(path), name_(std::move(name)), packed_(std::move(packed)) {}

  const char* name() const override { return name_.c_str(); }

  bool reads_constant_input(int i) const override {
    if (i == 1) return !packed_.has_w;
    if (i == 2) return !packed_.has_r;
    return true;
  }

  int64_t packed_bytes() const override {
    int64_t bytes = packed_.w != nullptr ? packed_.w->bytes() : 0;
    for (const auto* list : {&packed_.r, &packed_.r_h}) {
      for (const Panels& p : *list) bytes += p != nullptr ? p->bytes() : 0;
    }
    return bytes;
  }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    Dims dm;
    Io io;
    EDGEMM_RETURN_IF_ERROR(prepare(ctx, sp_, dm, io));
    if (dm.batch == 0) return Status::ok();
    if (io.max_len == 0) {  // no entry runs a step: Y (cleared) and the states are zeros
      for (int64_t d = 0; d < dm.dirs; ++d) {
        write_state(dm, io, d, nullptr, io.y_h);
        write_state(dm, io, d, nullptr, io.y_c);
      }
      return Status::ok();
    }
    const Expected<int64_t> xw_count = shape_element_count(Shape{dm.seq, dm.batch, dm.dirs, dm.gh()});
    if (!xw_count.has_value() || *xw_count > kMaxTensorBytes / static_cast<int64_t>(sizeof(float))) {
      return ir::node_error(node, StatusCode::kOutOfMemory, "the input projection of every step is too large");
    }
    if (path_ == RecurrentPath::kReference) {
      run_reference(sp_, dm, io);
      return Status::ok();
    }
    if (path_ == RecurrentPath::kSgemm) return run_gemm(node, sp_, dm, io, nullptr, ctx.threads());
    PackedWeights packed = packed_;  // the panels made at create; the others packed for this run
    try {
      if (!packed.has_w) packed.w = pack_transposed(io.w, dm.dirs * dm.gh(), dm.input);
      if (!packed.has_r) pack_r(packed, sp_, io.r, dm.dirs, dm.gates, dm.hidden);
    } catch (const std::bad_alloc&) {
      return ir::node_error(node, StatusCode::kOutOfMemory, "could not allocate the packed weights");
    }
    const int64_t r_cols = split_gru(sp_) ? 2 * dm.hidden : dm.gh(), nw = dm.dirs * dm.gh();
    const bool w_ok = packed.w == nullptr ? dm.input == 0 : packed.w->k() == dm.input && packed.w->n() == nw;
    const bool r_ok = static_cast<int64_t>(packed.r.size()) == dm.dirs && packed.r[0] != nullptr &&
                      packed.r[0]->k() == dm.hidden && packed.r[0]->n() == r_cols;
    if (!w_ok || !r_ok) {  // cannot happen: the packed constants have the shapes prepare() checked
      return ir::node_error(node, StatusCode::kInternal, "the packed weights do not match the inputs' shapes");
    }
    return run_gemm(node, sp_, dm, io, &packed, ctx.threads());
  }

 private:
  Spec sp_;
  RecurrentPath path_;
  std::string name_;
  PackedWeights packed_;  // W / R packed at create when constant (panels path)
};

Expected<std::unique_ptr<Kernel>> make_default(const KernelInfo& info) {
  return make_recurrent_kernel(info, onednn::enabled() ? RecurrentPath::kPanels : RecurrentPath::kReference);
}

}  // namespace recurrent
}  // namespace

Expected<std::unique_ptr<Kernel>> make_recurrent_kernel(const KernelInfo& info, RecurrentPath path) {
  using namespace recurrent;
  EDGEMM_ASSIGN_OR_RETURN(Spec sp, read_spec(info));
  if (path == RecurrentPath::kPanels && !matmul_panels_available()) path = RecurrentPath::kSgemm;
  std::string op = lower(info.node.op_type);
  std::string name = path == RecurrentPath::kReference ? op + "__reference"
                     : path == RecurrentPath::kPanels  ? "f32_" + op + "__avx512_panels"
                                                       : "f32_" + op + "__sgemm";
  PackedWeights packed;
  if (path == RecurrentPath::kPanels) {
    // Constant W / R of consistent shapes are packed now; anything else on each run.
    const int64_t gates = gate_count(sp.cell);
    auto constant = [&](size_t i) -> const Tensor* {
      const Tensor* t = i < info.constant_inputs.size() ? info.constant_inputs[i] : nullptr;
      return t != nullptr && t->dtype() == DataType::kFloat32 && t->rank() == 3 && t->dim(0) == sp.dirs &&
                     t->data<float>() != nullptr
                 ? t
                 : nullptr;
    };
    const Tensor* r = constant(2);
    int64_t h = sp.hidden < 0 && r != nullptr ? r->dim(2) : sp.hidden;
    if (h > (int64_t{1} << 32)) h = -1;  // refused at run
    try {
      if (const Tensor* w = constant(1); w != nullptr && h > 0 && w->dim(1) == gates * h && w->dim(2) > 0) {
        packed.w = pack_transposed(w->data<float>(), sp.dirs * gates * h, w->dim(2));
        packed.has_w = true;
      }
      if (r != nullptr && h > 0 && r->dim(1) == gates * h && r->dim(2) == h) {
        pack_r(packed, sp, r->data<float>(), sp.dirs, gates, h);
      }
    } catch (const std::bad_alloc&) {
      return ir::node_error(info.node, StatusCode::kOutOfMemory, "could not allocate the packed weights");
    }
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<RecurrentKernel>(std::move(sp), path, std::move(name), std::move(packed)));
}

void register_recurrent_kernels(KernelRegistry& registry) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (int since : {7, 14}) registry.add("", op, since, recurrent::make_default);
  }
}

}  // namespace edgemm::kernels
