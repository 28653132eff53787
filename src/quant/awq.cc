/// \file awq.cc
/// Activation statistics and the AWQ scale search (see awq.h).

#include "quant/awq.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/matmul_nbits.h"

namespace edgemm::quant {

void ActivationStats::add(const Tensor& a) {
  if (a.dtype() != DataType::kFloat32 || a.rank() < 1 || a.dim(-1) != k_) return;
  const float* v = a.data<float>();
  const int64_t rows = a.element_count() / k_;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = v + r * k_;
    for (int64_t c = 0; c < k_; ++c) sum_abs_[c] += std::abs(row[c]);
    if (rows_kept() < max_rows_) rows_.insert(rows_.end(), row, row + k_);
  }
  rows_seen_ += rows;
}

std::vector<double> ActivationStats::mean_abs() const {
  std::vector<double> m(sum_abs_.size(), 0.0);
  if (rows_seen_ == 0) return m;
  for (size_t c = 0; c < m.size(); ++c) m[c] = sum_abs_[c] / static_cast<double>(rows_seen_);
  return m;
}

namespace {

// The weight [K, N] that packed codes stand for: (code − zero point) · scale.
std::vector<float> dequantize(const kernels::PackedNBits& p) {
  const auto& s = p.shape;
  std::vector<float> w(static_cast<size_t>(s.k * s.n));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t k = 0; k < s.k; ++k) {
      const int64_t block = k / s.block_size, in_block = k % s.block_size;
      const uint8_t byte = p.b[static_cast<size_t>((n * s.k_blocks() + block) * s.blob_size() + in_block / 2)];
      const int code = in_block % 2 == 0 ? byte & 0xF : byte >> 4;
      const uint8_t zp_byte = p.zero_points[static_cast<size_t>(n * s.zero_point_row_bytes() + block / 2)];
      const int zp = block % 2 == 0 ? zp_byte & 0xF : zp_byte >> 4;
      w[k * s.n + n] = static_cast<float>(code - zp) * p.scales[static_cast<size_t>(n * s.k_blocks() + block)];
    }
  }
  return w;
}

// Σ over rows of ||x · delta||², delta [K, N].
double product_error(const ActivationStats& stats, const std::vector<double>& delta, int64_t n) {
  const int64_t k = stats.k();
  std::vector<double> y(static_cast<size_t>(n));
  double error = 0;
  for (int64_t r = 0; r < stats.rows_kept(); ++r) {
    std::fill(y.begin(), y.end(), 0.0);
    const float* x = stats.rows().data() + r * k;
    for (int64_t i = 0; i < k; ++i) {
      if (x[i] == 0) continue;
      const double* d = delta.data() + i * n;
      for (int64_t j = 0; j < n; ++j) y[j] += x[i] * d[j];
    }
    for (double v : y) error += v * v;
  }
  return error;
}

}  // namespace

Expected<AwqChoice> choose_awq_scales(const ActivationStats& stats, const Tensor& weight, int64_t block_size) {
  const int64_t k = weight.dim(0), n = weight.dim(1);
  const float* w = weight.data<float>();
  const std::vector<double> mean = stats.mean_abs();
  constexpr double kFloor = 1e-8;  // channels never active keep a finite scale
  AwqChoice best;
  best.error = std::numeric_limits<double>::infinity();
  for (int step = 0; step <= 10; ++step) {
    const double alpha = step / 10.0;
    std::vector<double> s(static_cast<size_t>(k));
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int64_t i = 0; i < k; ++i) {
      s[i] = std::pow(std::max(mean[i], kFloor), alpha);
      lo = std::min(lo, s[i]);
      hi = std::max(hi, s[i]);
    }
    const double norm = std::sqrt(lo * hi);
    std::vector<float> scaled(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k; ++i) {
      s[i] /= norm;
      for (int64_t j = 0; j < n; ++j) scaled[i * n + j] = static_cast<float>(w[i * n + j] * s[i]);
    }
    EDGEMM_ASSIGN_OR_RETURN(kernels::PackedNBits packed, kernels::pack_matmul_nbits(scaled.data(), k, n, block_size));
    const std::vector<float> q = dequantize(packed);
    std::vector<double> delta(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < n; ++j) delta[i * n + j] = w[i * n + j] - q[i * n + j] / s[i];
    }
    const double error = product_error(stats, delta, n);
    if (step == 0) best.plain_error = error;
    if (error < best.error) {
      best.error = error;
      best.alpha = alpha;
      best.scales.assign(s.begin(), s.end());
    }
  }
  if (best.alpha == 0) best.scales.assign(static_cast<size_t>(k), 1.0f);
  return best;
}

}  // namespace edgemm::quant
