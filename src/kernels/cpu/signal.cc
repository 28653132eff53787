/// \file signal.cc
/// Signal-processing ops of the default ONNX domain (Operators.md "DFT" 17/20, "STFT" 17,
/// "BlackmanWindow", "HammingWindow", "HannWindow" and "MelWeightMatrix" 17).
///
/// DFT: input [d0, ..., dN, 1] (real) or [d0, ..., dN, 2] (complex, real and imaginary parts
/// last), float32 or float64. One transform per line along `axis`: attribute at opset 17 (default
/// 1), optional third input at 20 (an int64 scalar, default -2); accepted range [-r, -2] and
/// [0, r-2] for rank r (the last axis holds the complex parts). Optional input dft_length (int32 or
/// int64 scalar, > 0): the signal is zero-padded or truncated to that length along the axis
/// (default: the axis extent). inverse 1 divides by the length. Output: the input's shape with
/// the axis extent set to the transform length and the last extent 2, except
///   onesided 1, inverse 0 (real input only): bins 0 .. floor(n/2) along the axis (RFFT);
///   onesided 1, inverse 1 (complex input only, ONNX Runtime 1.30's reading of the spec): the
///   real signal of length n (dft_length, default 2 * (extent - 1)) whose one-sided spectrum is
///   the input, last extent 1 (IRFFT as numpy.fft.irfft: bins 0 .. floor(n/2) are read, missing
///   ones are zero, the imaginary parts of bin 0 and, for even n, bin n/2 are ignored; ONNX
///   Runtime agrees for the default n and when the input holds floor(n/2) + 1 bins, and reads the
///   bins differently for other dft_length values).
/// Lengths (dft_length, or the axis extent) above kMaxSignalDftLength (2^22) are
/// kInvalidArgument, as are an axis out of range, dft_length <= 0, a one-sided forward transform
/// of complex input and a one-sided inverse of real input.
/// Computed in double: a radix-2 FFT for power-of-two lengths, a direct sum up to 64, Bluestein's
/// chirp-z transform above.
///
/// STFT: signal [batch, length, 1 or 2], frame_step (scalar > 0), optional window [frame_length]
/// (the signal's dtype), optional frame_length (scalar > 0; equal to the window's extent when both
/// are given; one of the two is required). Frames start every frame_step samples; frames =
/// floor((length - frame_length) / frame_step) + 1 (frame_length <= length). Each frame is
/// multiplied by the window (default all ones) and transformed: output [batch, frames, bins, 2]
/// with bins = floor(frame_length / 2) + 1 when onesided (default 1; real signals only), else
/// frame_length. kInvalidArgument: frame_step <= 0, frame_length <= 0 or above the signal length
/// or 2^22, a window that is not 1-D, of another dtype or of another length than frame_length,
/// a complex signal with onesided 1.
///
/// *Window: size (int32 or int64 scalar, > 0) → [size] of output_datatype (default float32;
/// float64 and the 8- to 64-bit integer types too, values cast). w[i] = a0 - a1 cos(2πi/N) +
/// a2 cos(4πi/N), N = size when periodic (default 1) else size - 1: Hann (0.5, 0.5, 0), Hamming
/// (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08). A symmetric window of size 1 is [1] (numpy and
/// torch; ONNX Runtime gives NaN).
///
/// MelWeightMatrix: num_mel_bins, dft_length, sample_rate (int32 or int64 scalars, > 0),
/// lower_edge_hertz, upper_edge_hertz (float32 or float64 scalars, 0 <= lower <= upper) →
/// [floor(dft_length / 2) + 1, num_mel_bins] of output_datatype, triangular filters as the spec's
/// reference: num_mel_bins + 2 points evenly spaced on the mel scale (2595 log10(1 + hz / 700))
/// with step (mel(upper) - mel(lower)) / (num_mel_bins + 2), each mapped to the spectrogram bin
/// floor((dft_length + 1) hz / sample_rate). Points past the last spectrogram bin, num_mel_bins
/// above 65536 and dft_length above kMaxSignalDftLength are kInvalidArgument.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace signal_impl {
namespace {

using Complex = std::complex<double>;

/// Longest transform accepted (dft_length, STFT frame_length): 2^22 samples.
constexpr int64_t kMaxSignalDftLength = int64_t{1} << 22;
/// Most mel filters MelWeightMatrix makes.
constexpr int64_t kMaxMelBins = int64_t{1} << 16;
/// Non-power-of-two lengths up to this are summed directly; longer ones use Bluestein.
constexpr int64_t kDirectDftMaxLength = 64;
constexpr double kSignalPi = 3.14159265358979323846;

bool signal_is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// A complex DFT of one length, prepared once per run and then read by every thread.
class DftPlan {
 public:
  explicit DftPlan(int64_t n) : n_(n) {
    if (signal_is_power_of_two(n) || n <= kDirectDftMaxLength) {
      twiddle_.resize(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) twiddle_[k] = std::polar(1.0, -2.0 * kSignalPi * k / n);
      return;
    }
    // Bluestein: X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]) with c[k] = e^{-πi k²/n}, a
    // circular convolution of power-of-two length m >= 2n - 1.
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    sub_ = std::make_unique<DftPlan>(m);
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) chirp_[k] = std::polar(1.0, -kSignalPi * ((k * k) % (2 * n)) / n);
    chirp_fft_.assign(static_cast<size_t>(m), Complex(0, 0));
    chirp_fft_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) chirp_fft_[k] = chirp_fft_[m - k] = std::conj(chirp_[k]);
    std::vector<Complex> unused;
    sub_->forward(chirp_fft_.data(), unused);
  }

  int64_t size() const { return n_; }

  /// Transforms data[0, n) in place: X[k] = sum_j x[j] e^{∓2πi jk/n} (minus forward, plus
  /// inverse; the inverse is not divided by n). `scratch` is the calling thread's workspace.
  void run(Complex* data, bool inverse, std::vector<Complex>& scratch) const {
    if (inverse) {
      for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
    }
    forward(data, scratch);
    if (inverse) {
      for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
    }
  }

 private:
  void forward(Complex* data, std::vector<Complex>& scratch) const {
    if (signal_is_power_of_two(n_)) {
      radix2(data);
    } else if (sub_ == nullptr) {
      scratch.assign(static_cast<size_t>(n_), Complex(0, 0));
      for (int64_t k = 0; k < n_; ++k) {
        Complex sum(0, 0);
        for (int64_t j = 0; j < n_; ++j) sum += data[j] * twiddle_[(j * k) % n_];
        scratch[k] = sum;
      }
      std::copy(scratch.begin(), scratch.end(), data);
    } else {
      const int64_t m = sub_->size();
      scratch.assign(static_cast<size_t>(m), Complex(0, 0));
      for (int64_t k = 0; k < n_; ++k) scratch[k] = data[k] * chirp_[k];
      std::vector<Complex> unused;
      sub_->forward(scratch.data(), unused);
      // Inverse of length m as conj(forward(conj(.))) / m.
      for (int64_t k = 0; k < m; ++k) scratch[k] = std::conj(scratch[k] * chirp_fft_[k]);
      sub_->forward(scratch.data(), unused);
      const double scale = 1.0 / static_cast<double>(m);
      for (int64_t k = 0; k < n_; ++k) data[k] = chirp_[k] * std::conj(scratch[k]) * scale;
    }
  }

  // Iterative decimation-in-time FFT; n_ is a power of two and twiddle_ holds e^{-2πi k/n}.
  void radix2(Complex* data) const {
    for (int64_t i = 1, j = 0; i < n_; ++i) {
      int64_t bit = n_ >> 1;
      for (; (j & bit) != 0; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(data[i], data[j]);
    }
    for (int64_t len = 2; len <= n_; len <<= 1) {
      const int64_t half = len >> 1, step = n_ / len;
      for (int64_t i = 0; i < n_; i += len) {
        for (int64_t k = 0; k < half; ++k) {
          const Complex u = data[i + k], v = data[i + k + half] * twiddle_[k * step];
          data[i + k] = u + v;
          data[i + k + half] = u - v;
        }
      }
    }
  }

  int64_t n_;
  std::vector<Complex> twiddle_;    // e^{-2πi k/n}, k < n (power of two or direct)
  std::vector<Complex> chirp_;      // Bluestein: e^{-πi k²/n}, k < n
  std::vector<Complex> chirp_fft_;  // Bluestein: forward transform of the padded conjugate chirp
  std::unique_ptr<DftPlan> sub_;    // Bluestein: the power-of-two transform of the convolution
};

/// "input i 'name' (the spec's <formal>)" for error messages.
std::string signal_input_label(const ir::Node& node, int index, const char* formal) {
  const std::string name = index < static_cast<int>(node.inputs.size()) ? node.inputs[index] : "?";
  return "input " + std::to_string(index) + " '" + name + "' (" + formal + ")";
}

/// The one value of an int32/int64 scalar input (shape [] or [1]).
Expected<int64_t> signal_scalar_int(const ir::Node& node, const Tensor& t, int index, const char* formal) {
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_int_values(node, index, t));
  if (v.size() != 1) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        signal_input_label(node, index, formal) + " must hold one value, got shape " + shape_to_string(t.shape()));
  }
  return v[0];
}

/// The one value of a float32/float64 scalar input (shape [] or [1]).
Expected<double> signal_scalar_float(const ir::Node& node, const Tensor& t, int index, const char* formal) {
  if (t.dtype() != DataType::kFloat32 && t.dtype() != DataType::kFloat64) {
    return unsupported_dtype(node, index, t.dtype());
  }
  if (t.element_count() != 1) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        signal_input_label(node, index, formal) + " must hold one value, got shape " + shape_to_string(t.shape()));
  }
  return t.dtype() == DataType::kFloat32 ? static_cast<double>(t.data<float>()[0]) : t.data<double>()[0];
}

/// Checks a transform length `n` (described by `what` in the error) against [1, kMaxSignalDftLength].
Status check_dft_length(const ir::Node& node, int64_t n, const std::string& what) {
  if (n <= 0 || n > kMaxSignalDftLength) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        what + " is " + std::to_string(n) + "; it must lie in [1, " + std::to_string(kMaxSignalDftLength) + "]");
  }
  return Status::ok();
}

Expected<bool> signal_flag(const ir::Node& node, const char* key, int64_t fallback) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t v, node.attr_int(key, fallback));
  if (v != 0 && v != 1) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          std::string("attribute ") + key + " must be 0 or 1, got " + std::to_string(v));
  }
  return v == 1;
}

// ---- DFT --------------------------------------------------------------------------------

struct DftAttrs {
  int64_t opset = 17;
  int64_t axis = 1;  // opset 17's attribute
  bool inverse = false;
  bool onesided = false;
};

// One transform per line: `lines` lines of `m` input values (stride `stride` complex elements
// apart, `c` parts each) → `out_len` output values (stride `stride`, `out_c` parts).
struct DftGeometry {
  int64_t outer, m, inner, c, n, out_len, out_c;
};

template <typename T>
void dft_lines(const DftGeometry& g, const DftPlan& plan, bool inverse, bool irfft, const T* x, T* y, int threads) {
  const int64_t lines = g.outer * g.inner;
  const int64_t n = g.n;
  parallel_for(threads, lines, n * 16, [&](int64_t begin, int64_t end) {
    std::vector<Complex> buf(static_cast<size_t>(n)), scratch;
    for (int64_t line = begin; line < end; ++line) {
      const int64_t o = line / g.inner, i = line % g.inner;
      const T* in = x + (o * g.m * g.inner + i) * g.c;
      T* out = y + (o * g.out_len * g.inner + i) * g.out_c;
      std::fill(buf.begin(), buf.end(), Complex(0, 0));
      if (irfft) {
        // Hermitian spectrum from bins 0 .. n/2 (zero where the input has fewer).
        const int64_t bins = std::min(g.m, n / 2 + 1);
        for (int64_t k = 0; k < bins; ++k) {
          const T* p = in + k * g.inner * g.c;
          buf[k] = Complex(static_cast<double>(p[0]), static_cast<double>(p[1]));
        }
        buf[0].imag(0);
        if (n % 2 == 0) buf[n / 2].imag(0);
        for (int64_t k = 1; k <= (n - 1) / 2; ++k) buf[n - k] = std::conj(buf[k]);
      } else {
        const int64_t count = std::min(g.m, n);
        for (int64_t j = 0; j < count; ++j) {
          const T* p = in + j * g.inner * g.c;
          buf[j] = Complex(static_cast<double>(p[0]), g.c == 2 ? static_cast<double>(p[1]) : 0.0);
        }
      }
      plan.run(buf.data(), inverse, scratch);
      const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
      for (int64_t k = 0; k < g.out_len; ++k) {
        T* q = out + k * g.inner * g.out_c;
        q[0] = static_cast<T>(buf[k].real() * scale);
        if (g.out_c == 2) q[1] = static_cast<T>(buf[k].imag() * scale);
      }
    }
  });
}

Status dft_run(KernelContext& ctx, const DftAttrs& at) {
  const ir::Node& node = ctx.node();
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input 'input' is required");
  const DataType dt = x->dtype();
  if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
  const Shape& s = x->shape();
  const int64_t rank = x->rank();
  if (rank < 2 || (s[rank - 1] != 1 && s[rank - 1] != 2)) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        "input 'input' must be [..., signal, 1] (real) or [..., signal, 2] (complex), got shape " + shape_to_string(s));
  }
  const int64_t c = s[rank - 1];
  int64_t axis = at.axis;
  if (at.opset >= 20) {
    axis = -2;
    if (const Tensor* a = ctx.input(2); a != nullptr) {
      EDGEMM_ASSIGN_OR_RETURN(axis, signal_scalar_int(node, *a, 2, "axis"));
    }
  }
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank - 2) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) +
                              ", -2] or [0, " + std::to_string(rank - 2) + "] for input shape " + shape_to_string(s));
  }
  const bool rfft = at.onesided && !at.inverse, irfft = at.onesided && at.inverse;
  if (rfft && c != 1) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "onesided 1 with inverse 0 needs a real input [..., 1], got shape " + shape_to_string(s));
  }
  if (irfft && c != 2) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "onesided 1 with inverse 1 needs a complex input [..., 2], got shape " + shape_to_string(s));
  }
  const int64_t m = s[a];
  int64_t n = irfft ? 2 * (m - 1) : m;
  if (const Tensor* len = ctx.input(1); len != nullptr) {
    EDGEMM_ASSIGN_OR_RETURN(n, signal_scalar_int(node, *len, 1, "dft_length"));
    EDGEMM_RETURN_IF_ERROR(check_dft_length(node, n, signal_input_label(node, 1, "dft_length")));
  } else {
    EDGEMM_RETURN_IF_ERROR(check_dft_length(
        node, n, "the transform length from axis " + std::to_string(a) + " of shape " + shape_to_string(s)));
  }
  DftGeometry g{1, m, 1, c, n, rfft ? n / 2 + 1 : n, irfft ? 1 : 2};
  for (int64_t d = 0; d < a; ++d) g.outer *= s[d];
  for (int64_t d = a + 1; d < rank - 1; ++d) g.inner *= s[d];
  Shape out_shape = s;
  out_shape[a] = g.out_len;
  out_shape[rank - 1] = g.out_c;
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
  if (y->element_count() == 0) return Status::ok();
  const DftPlan plan(n);
  if (dt == DataType::kFloat32) {
    dft_lines<float>(g, plan, at.inverse, irfft, x->data<float>(), y->data<float>(), ctx.threads());
  } else {
    dft_lines<double>(g, plan, at.inverse, irfft, x->data<double>(), y->data<double>(), ctx.threads());
  }
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> make_dft(const KernelInfo& info) {
  DftAttrs at;
  at.opset = info.opset;
  EDGEMM_ASSIGN_OR_RETURN(at.axis, info.node.attr_int("axis", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.inverse, signal_flag(info.node, "inverse", 0));
  EDGEMM_ASSIGN_OR_RETURN(at.onesided, signal_flag(info.node, "onesided", 0));
  return simple_kernel([at](KernelContext& ctx) { return dft_run(ctx, at); })(info);
}

// ---- STFT -------------------------------------------------------------------------------

template <typename T>
void stft_frames(const Tensor& signal, const T* window, int64_t frame_length, int64_t step, int64_t frames,
                 int64_t bins, const DftPlan& plan, T* y, int threads) {
  const int64_t batch = signal.shape()[0], length = signal.shape()[1], c = signal.shape()[2];
  const T* x = signal.data<T>();
  parallel_for(threads, batch * frames, frame_length * 16, [&](int64_t begin, int64_t end) {
    std::vector<Complex> buf(static_cast<size_t>(frame_length)), scratch;
    for (int64_t bf = begin; bf < end; ++bf) {
      const int64_t b = bf / frames, f = bf % frames;
      const T* in = x + (b * length + f * step) * c;
      for (int64_t j = 0; j < frame_length; ++j) {
        const double w = window != nullptr ? static_cast<double>(window[j]) : 1.0;
        const T* p = in + j * c;
        buf[j] = Complex(static_cast<double>(p[0]) * w, c == 2 ? static_cast<double>(p[1]) * w : 0.0);
      }
      plan.run(buf.data(), false, scratch);
      T* out = y + bf * bins * 2;
      for (int64_t k = 0; k < bins; ++k) {
        out[2 * k] = static_cast<T>(buf[k].real());
        out[2 * k + 1] = static_cast<T>(buf[k].imag());
      }
    }
  });
}

Status stft_run(KernelContext& ctx, bool onesided) {
  const ir::Node& node = ctx.node();
  const Tensor* signal = ctx.input(0);
  const Tensor* step_t = ctx.input(1);
  const Tensor* window = ctx.input(2);
  const Tensor* length_t = ctx.input(3);
  if (signal == nullptr || step_t == nullptr) {
    return ir::node_error(node, StatusCode::kInvalidModel, "inputs 'signal' and 'frame_step' are required");
  }
  const DataType dt = signal->dtype();
  if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return unsupported_dtype(node, 0, dt);
  const Shape& s = signal->shape();
  if (signal->rank() != 3 || (s[2] != 1 && s[2] != 2)) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "input 'signal' must be [batch, length, 1] (real) or [batch, length, 2] (complex), got "
                          "shape " +
                              shape_to_string(s));
  }
  if (onesided && s[2] == 2) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "onesided 1 needs a real signal [batch, length, 1], got shape " + shape_to_string(s) +
                              " (set onesided 0 for complex signals)");
  }
  EDGEMM_ASSIGN_OR_RETURN(int64_t step, signal_scalar_int(node, *step_t, 1, "frame_step"));
  if (step <= 0) {
    return ir::node_error(
        node, StatusCode::kInvalidArgument,
        signal_input_label(node, 1, "frame_step") + " is " + std::to_string(step) + "; it must be > 0");
  }
  int64_t frame_length = -1;
  if (window != nullptr) {
    if (window->dtype() != dt) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            signal_input_label(node, 2, "window") + " has dtype " + dtype_name(window->dtype()) +
                                ", expected " + dtype_name(dt) + " as 'signal'");
    }
    if (window->rank() != 1) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          signal_input_label(node, 2, "window") + " must be 1-D, got shape " + shape_to_string(window->shape()));
    }
    frame_length = window->shape()[0];
  }
  if (length_t != nullptr) {
    EDGEMM_ASSIGN_OR_RETURN(int64_t fl, signal_scalar_int(node, *length_t, 3, "frame_length"));
    if (window != nullptr && fl != frame_length) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            signal_input_label(node, 3, "frame_length") + " is " + std::to_string(fl) +
                                " but the window has " + std::to_string(frame_length) + " values");
    }
    frame_length = fl;
  }
  if (window == nullptr && length_t == nullptr) {
    return ir::node_error(node, StatusCode::kInvalidModel, "needs input 'window' or input 'frame_length'");
  }
  EDGEMM_RETURN_IF_ERROR(check_dft_length(node, frame_length, "the frame length"));
  if (frame_length > s[1]) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "the frame length " + std::to_string(frame_length) + " exceeds the signal length " +
                              std::to_string(s[1]) + " of shape " + shape_to_string(s));
  }
  const int64_t frames = (s[1] - frame_length) / step + 1;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, Shape{s[0], frames, bins, 2}));
  if (y->element_count() == 0) return Status::ok();
  const DftPlan plan(frame_length);
  if (dt == DataType::kFloat32) {
    stft_frames<float>(*signal, window != nullptr ? window->data<float>() : nullptr, frame_length, step, frames, bins,
                       plan, y->data<float>(), ctx.threads());
  } else {
    stft_frames<double>(*signal, window != nullptr ? window->data<double>() : nullptr, frame_length, step, frames, bins,
                        plan, y->data<double>(), ctx.threads());
  }
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> make_stft(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(bool onesided, signal_flag(info.node, "onesided", 1));
  return simple_kernel([onesided](KernelContext& ctx) { return stft_run(ctx, onesided); })(info);
}

// ---- Windows and MelWeightMatrix ---------------------------------------------------------

/// Checks an output_datatype attribute (default float32): float32, float64 or an integer type.
Expected<DataType> signal_output_dtype(const ir::Node& node) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t v, node.attr_int("output_datatype", static_cast<int64_t>(DataType::kFloat32)));
  const DataType dt = static_cast<DataType>(v);
  switch (dt) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt8:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
      return dt;
    default:
      return ir::node_error(node, StatusCode::kUnsupported,
                            "attribute output_datatype " + std::to_string(v) +
                                " is not float32, float64 or an integer type supported here");
  }
}

template <typename T, typename Fn>
void signal_fill(Tensor& y, const Fn& value_at) {
  T* p = y.data<T>();
  for (int64_t i = 0; i < y.element_count(); ++i) p[i] = static_cast<T>(value_at(i));
}

/// Sets every element i of `y` (of a dtype signal_output_dtype accepted) to value_at(i) (a
/// double), cast to y's dtype.
template <typename Fn>
void signal_fill_as(Tensor& y, const Fn& value_at) {
  switch (y.dtype()) {
    case DataType::kFloat32:
      return signal_fill<float>(y, value_at);
    case DataType::kFloat64:
      return signal_fill<double>(y, value_at);
    case DataType::kInt8:
      return signal_fill<int8_t>(y, value_at);
    case DataType::kInt16:
      return signal_fill<int16_t>(y, value_at);
    case DataType::kInt32:
      return signal_fill<int32_t>(y, value_at);
    case DataType::kInt64:
      return signal_fill<int64_t>(y, value_at);
    case DataType::kUInt8:
      return signal_fill<uint8_t>(y, value_at);
    case DataType::kUInt16:
      return signal_fill<uint16_t>(y, value_at);
    case DataType::kUInt32:
      return signal_fill<uint32_t>(y, value_at);
    case DataType::kUInt64:
      return signal_fill<uint64_t>(y, value_at);
    default:
      return;
  }
}

/// Cosine-sum window coefficients a0, a1, a2.
struct WindowCoefficients {
  double a0, a1, a2;
};

Status window_run(KernelContext& ctx, WindowCoefficients w, bool periodic, DataType out_dt) {
  const ir::Node& node = ctx.node();
  const Tensor* size_in = ctx.input(0);
  if (size_in == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input 'size' is required");
  EDGEMM_ASSIGN_OR_RETURN(int64_t size, signal_scalar_int(node, *size_in, 0, "size"));
  if (size <= 0) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          signal_input_label(node, 0, "size") + " is " + std::to_string(size) + "; it must be > 0");
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, Shape{size}));
  const int64_t period = periodic ? size : size - 1;
  signal_fill_as(*y, [&](int64_t i) {
    if (period == 0) return 1.0;  // symmetric window of size 1
    const double angle = 2.0 * kSignalPi * static_cast<double>(i) / static_cast<double>(period);
    return w.a0 - w.a1 * std::cos(angle) + w.a2 * std::cos(2.0 * angle);
  });
  return Status::ok();
}

KernelFactory window_factory(WindowCoefficients w) {
  return [w](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(bool periodic, signal_flag(info.node, "periodic", 1));
    EDGEMM_ASSIGN_OR_RETURN(DataType dt, signal_output_dtype(info.node));
    return simple_kernel([w, periodic, dt](KernelContext& ctx) { return window_run(ctx, w, periodic, dt); })(info);
  };
}

Status mel_run(KernelContext& ctx, DataType out_dt) {
  const ir::Node& node = ctx.node();
  static const char* const kFormal[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                        "upper_edge_hertz"};
  for (int i = 0; i < 5; ++i) {
    if (ctx.input(i) == nullptr) {
      return ir::node_error(node, StatusCode::kInvalidModel, std::string("input '") + kFormal[i] + "' is required");
    }
  }
  int64_t ints[3];
  for (int i = 0; i < 3; ++i) {
    EDGEMM_ASSIGN_OR_RETURN(ints[i], signal_scalar_int(node, *ctx.input(i), i, kFormal[i]));
    if (ints[i] <= 0) {
      return ir::node_error(
          node, StatusCode::kInvalidArgument,
          signal_input_label(node, i, kFormal[i]) + " is " + std::to_string(ints[i]) + "; it must be > 0");
    }
  }
  const int64_t mel_bins = ints[0], dft_length = ints[1], sample_rate = ints[2];
  if (mel_bins > kMaxMelBins || dft_length > kMaxSignalDftLength) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "num_mel_bins " + std::to_string(mel_bins) + " or dft_length " + std::to_string(dft_length) +
                              " is too large (limits " + std::to_string(kMaxMelBins) + " and " +
                              std::to_string(kMaxSignalDftLength) + ")");
  }
  EDGEMM_ASSIGN_OR_RETURN(double lower, signal_scalar_float(node, *ctx.input(3), 3, kFormal[3]));
  EDGEMM_ASSIGN_OR_RETURN(double upper, signal_scalar_float(node, *ctx.input(4), 4, kFormal[4]));
  if (!(lower >= 0.0 && upper >= lower && std::isfinite(upper))) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "lower_edge_hertz " + std::to_string(lower) + " and upper_edge_hertz " +
                              std::to_string(upper) + " must satisfy 0 <= lower <= upper (finite)");
  }
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, Shape{spectrogram_bins, mel_bins}));
  // num_mel_bins + 2 points evenly spaced in mel, as spectrogram bins (non-decreasing).
  const auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = to_mel(lower), step = (to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (low_mel + step * static_cast<double>(i)) / 2595.0) - 1.0);
    const double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    if (!(bin >= 0.0 && bin < static_cast<double>(spectrogram_bins))) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "mel filter point " + std::to_string(i) + " (" + std::to_string(hz) +
                                " Hz) falls on spectrogram bin " + std::to_string(bin) + ", outside [0, " +
                                std::to_string(spectrogram_bins) + ") for dft_length " + std::to_string(dft_length) +
                                " and sample_rate " + std::to_string(sample_rate) + "; lower upper_edge_hertz");
    }
    points[i] = static_cast<int64_t>(bin);
  }
  // Filter i rises from points[i] to 1 at points[i + 1] and falls to 0 at points[i + 2]; a point
  // shared by its neighbours is 1 (the reference's second loop overwrites the first there).
  signal_fill_as(*y, [&](int64_t at) {
    const int64_t j = at / mel_bins, i = at % mel_bins;
    const int64_t left = points[i], center = points[i + 1], right = points[i + 2];
    if (j == center) return 1.0;
    if (j > center && j < right) return static_cast<double>(right - j) / static_cast<double>(right - center);
    if (j >= left && j < center) return static_cast<double>(j - left) / static_cast<double>(center - left);
    return 0.0;
  });
  return Status::ok();
}

Expected<std::unique_ptr<Kernel>> make_mel(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(DataType dt, signal_output_dtype(info.node));
  return simple_kernel([dt](KernelContext& ctx) { return mel_run(ctx, dt); })(info);
}

}  // namespace
}  // namespace signal_impl

/// Registers DFT (opsets 17, 20), STFT, BlackmanWindow, HammingWindow, HannWindow and
/// MelWeightMatrix (opset 17) in `registry`.
void register_signal_kernels(KernelRegistry& registry) {
  using signal_impl::WindowCoefficients;
  for (int since : {17, 20}) registry.add("", "DFT", since, signal_impl::make_dft);
  registry.add("", "STFT", 17, signal_impl::make_stft);
  registry.add("", "HannWindow", 17, signal_impl::window_factory(WindowCoefficients{0.5, 0.5, 0.0}));
  registry.add("", "HammingWindow", 17, signal_impl::window_factory(WindowCoefficients{25.0 / 46.0, 21.0 / 46.0, 0.0}));
  registry.add("", "BlackmanWindow", 17, signal_impl::window_factory(WindowCoefficients{0.42, 0.5, 0.08}));
  registry.add("", "MelWeightMatrix", 17, signal_impl::make_mel);
}

}  // namespace edgemm::kernels
