/// \file matmul_neon.cc
/// The NEON float32 product with B read in place (matmul_neon.h): the 4×16 register tile, its
/// narrower forms for the last columns and rows, blocks of K, the batch loop.

#include "kernels/cpu/matmul_neon.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/common.h"

namespace edgemm::kernels {
namespace {

constexpr int kRows = 4;      // rows of A per tile
constexpr int kColumns = 16;  // columns of B per tile: 4 float32x4

/// acc[r][c] += b[4c .. 4c + 4) · lane Q of av[r], for one row `b` of B.
template <int Q, int R, int C>
inline void fma_row(float32x4_t (&acc)[R][C], const float32x4_t (&av)[R], const float* b) {
  float32x4_t bv[C];
  for (int c = 0; c < C; ++c) bv[c] = vld1q_f32(b + 4 * c);
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = vfmaq_laneq_f32(acc[r][c], bv[c], av[r], Q);
  }
}

/// y[r·ldy + j] = (y[r·ldy + j] if `accumulate`) + Σ_{p<k} a[r·lda + p] · b[p·ldb + j], for r < R
/// and j < 4C.
template <int R, int C>
void tile(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, float* y, int64_t ldy, bool accumulate) {
  float32x4_t acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = accumulate ? vld1q_f32(y + r * ldy + 4 * c) : vdupq_n_f32(0.f);
  }
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    float32x4_t av[R];
    for (int r = 0; r < R; ++r) av[r] = vld1q_f32(a + r * lda + p);
    const float* bp = b + p * ldb;
    fma_row<0>(acc, av, bp);
    fma_row<1>(acc, av, bp + ldb);
    fma_row<2>(acc, av, bp + 2 * ldb);
    fma_row<3>(acc, av, bp + 3 * ldb);
  }
  for (; p < k; ++p) {
    float32x4_t av[R];
    for (int r = 0; r < R; ++r) av[r] = vdupq_n_f32(a[r * lda + p]);
    fma_row<0>(acc, av, b + p * ldb);
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) vst1q_f32(y + r * ldy + 4 * c, acc[r][c]);
  }
}

/// R rows of y [·, n] (row stride n) from R rows of A (stride lda) and k rows of B [·, n]: whole
/// tiles, then one of 4, 8 or 12 columns, then the last 1-3 columns from `b_tail` (those columns
/// of the same k rows of B, zero-padded to 4: [k, 4]) through a padded copy of y's columns.
template <int R>
void row_block(const float* a, int64_t lda, const float* b, const float* b_tail, int64_t k, int64_t n, float* y,
               bool accumulate) {
  int64_t j = 0;
  for (; j + kColumns <= n; j += kColumns) tile<R, 4>(a, lda, b + j, n, k, y + j, n, accumulate);
  switch ((n - j) / 4) {
    case 3:
      tile<R, 3>(a, lda, b + j, n, k, y + j, n, accumulate), j += 12;
      break;
    case 2:
      tile<R, 2>(a, lda, b + j, n, k, y + j, n, accumulate), j += 8;
      break;
    case 1:
      tile<R, 1>(a, lda, b + j, n, k, y + j, n, accumulate), j += 4;
      break;
    default:
      break;
  }
  const int64_t width = n - j;
  if (width == 0) return;
  float y_pad[kRows * 4] = {};
  for (int r = 0; r < R && accumulate; ++r) {
    for (int64_t c = 0; c < width; ++c) y_pad[r * 4 + c] = y[r * n + j + c];
  }
  tile<R, 1>(a, lda, b_tail, 4, k, y_pad, 4, accumulate);
  for (int r = 0; r < R; ++r) {
    for (int64_t c = 0; c < width; ++c) y[r * n + j + c] = y_pad[r * 4 + c];
  }
}

/// `rows` (1..4) rows of one product: y [rows, n] = a [rows, k] (stride k) · b [k, n], with
/// b_tail as row_block() reads it (null when n is a multiple of 4).
void rows_product(const float* a, const float* b, const float* b_tail, int64_t rows, int64_t k, int64_t n, float* y) {
  if (k == 0) {
    std::fill(y, y + rows * n, 0.f);
    return;
  }
  for (int64_t p = 0; p < k; p += kNeonDepthBlock) {
    const int64_t depth = std::min(kNeonDepthBlock, k - p);
    const bool accumulate = p > 0;
    const float* ap = a + p;
    const float* bp = b + p * n;
    const float* tp = b_tail != nullptr ? b_tail + p * 4 : nullptr;
    switch (rows) {
      case 4:
        row_block<4>(ap, k, bp, tp, depth, n, y, accumulate);
        break;
      case 3:
        row_block<3>(ap, k, bp, tp, depth, n, y, accumulate);
        break;
      case 2:
        row_block<2>(ap, k, bp, tp, depth, n, y, accumulate);
        break;
      default:
        row_block<1>(ap, k, bp, tp, depth, n, y, accumulate);
        break;
    }
  }
}

/// The last n % 4 (1-3) columns of each of B's `matrices` [k, n] matrices, zero-padded to 4:
/// [matrices, k, 4].
std::vector<float> pad_tails(const float* b, int64_t matrices, int64_t k, int64_t n) {
  const int64_t first = n / 4 * 4;
  std::vector<float> tails(static_cast<size_t>(matrices * k * 4), 0.f);
  for (int64_t row = 0; row < matrices * k; ++row) {
    for (int64_t c = first; c < n; ++c) tails[row * 4 + c - first] = b[row * n + c];
  }
  return tails;
}

}  // namespace

void neon_matmul(const MatMulShape& s, const float* a, const float* b, float* y, int threads) {
  // Batch-matrix strides of A and B read as broadcast to the output's batch axes.
  const std::vector<int64_t> sa = broadcast_strides(Shape(s.a.begin(), s.a.end() - 2), s.batch);
  const std::vector<int64_t> sb = broadcast_strides(Shape(s.b.begin(), s.b.end() - 2), s.batch);
  int64_t batches = 1;
  for (int64_t d : s.batch) batches *= d;
  int64_t b_matrices = 1;
  for (size_t d = 0; d + 2 < s.b.size(); ++d) b_matrices *= s.b[d];
  const std::vector<float> tails = s.n % 4 != 0 ? pad_tails(b, b_matrices, s.k, s.n) : std::vector<float>();
  const int64_t blocks = (s.m + kRows - 1) / kRows;
  parallel_for(threads, batches * blocks, kRows * s.k * s.n, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t batch = item / blocks, row = item % blocks * kRows;
      int64_t rem = batch, a_matrix = 0, b_matrix = 0;
      for (int64_t d = static_cast<int64_t>(s.batch.size()) - 1; d >= 0; --d) {
        a_matrix += rem % s.batch[d] * sa[d];
        b_matrix += rem % s.batch[d] * sb[d];
        rem /= s.batch[d];
      }
      rows_product(a + (a_matrix * s.m + row) * s.k, b + b_matrix * s.k * s.n,
                   tails.empty() ? nullptr : tails.data() + b_matrix * s.k * 4, std::min<int64_t>(kRows, s.m - row),
                   s.k, s.n, y + (batch * s.m + row) * s.n);
    }
  });
}

}  // namespace edgemm::kernels

#endif
