#pragma once
/// \file awq.h
/// Activation-aware weight quantization for int4 MatMul weights (Lin et al., "AWQ:
/// Activation-aware Weight Quantization for LLM Compression and Acceleration", MLSys 2024): input
/// channels that carry large activations are scaled up in the weight before quantization and the
/// activation is divided by the same factor, so their weights lose less precision. The scale is
/// s_k = m_k^α / sqrt(max m^α · min m^α), m_k the mean |x_k| over calibration, with α chosen on a
/// grid by the output error of the quantized product on calibration rows (α = 0: plain rounding).

#include <cstdint>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::quant {

/// Calibration statistics of one MatMul input A [..., K].
class ActivationStats {
 public:
  /// `max_rows`: rows of A kept (the first ones seen) for the α search.
  explicit ActivationStats(int64_t k, int64_t max_rows = 64) : k_(k), max_rows_(max_rows), sum_abs_(k, 0.0) {}
  /// Adds every row of a float32 tensor whose last axis is K (other tensors are ignored).
  void add(const Tensor& a);
  int64_t k() const { return k_; }
  int64_t rows_seen() const { return rows_seen_; }
  /// Mean |x| per input channel over every row seen (zeros before any).
  std::vector<double> mean_abs() const;
  /// The kept rows, [rows_kept(), K] row-major.
  const std::vector<float>& rows() const { return rows_; }
  int64_t rows_kept() const { return static_cast<int64_t>(rows_.size()) / k_; }

 private:
  int64_t k_, max_rows_;
  std::vector<double> sum_abs_;
  std::vector<float> rows_;
  int64_t rows_seen_ = 0;
};

/// The AWQ scale of one weight.
struct AwqChoice {
  double alpha = 0;           ///< 0 means no scaling was better
  std::vector<float> scales;  ///< s [K] (all 1 when alpha is 0)
  double error = 0;           ///< Σ over kept rows of ||x·W − (x/s)·deq(q(diag(s)·W))||² at alpha
  double plain_error = 0;     ///< the same at alpha 0
};

/// Searches α in {0, 0.1, …, 1} for `weight` (float32 [K, N]) quantized with
/// kernels::pack_matmul_nbits at `block_size`. Errors: those of the packer.
Expected<AwqChoice> choose_awq_scales(const ActivationStats& stats, const Tensor& weight, int64_t block_size);

}  // namespace edgemm::quant
