/// \file kv_attention.cc
/// com.edgemm KvAttention (kv_attention.h): append to the cache, then attention over it. A decode
/// step (few query rows per KV head) reads each cached key and value row once for all the query
/// rows that share it; larger steps (prefill) run Q·Kᵀ and P·V as two batched oneDNN matmuls
/// reading the cache through strides. The reference path: plain loops.

#include "kernels/cpu/kv_attention.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/softmax.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/cpu_features.h"

namespace edgemm::kernels {
namespace {

using dnnl::memory;

struct Dims {
  int64_t batch, q_heads, kv_heads, new_len, past_len, total, capacity, head;
  int64_t group() const { return q_heads / kv_heads; }
};

std::string describe(const Tensor* t) {
  return t == nullptr ? std::string("nothing")
                      : std::string(dtype_name(t->dtype())) + " " + shape_to_string(t->shape());
}

Status bad_input(const ir::Node& node, const char* name, const std::string& expected, const Tensor* t) {
  return ir::node_error(node, StatusCode::kInvalidArgument,
                        std::string("input ") + name + " must be float32 " + expected + ", got " + describe(t));
}

bool is_f32_rank4(const Tensor* t) { return t != nullptr && t->dtype() == DataType::kFloat32 && t->rank() == 4; }

Expected<Dims> check_inputs(const KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  const Tensor *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3), *past = ctx.input(4),
               *ck = ctx.input(5), *cv = ctx.input(6);
  if (!is_f32_rank4(q)) return bad_input(node, "Q", "[B, Hq, S, D]", q);
  Dims d{q->dim(0), q->dim(1), 0, q->dim(2), 0, 0, 0, q->dim(3)};
  if (!is_f32_rank4(k) || k->dim(0) != d.batch || k->dim(2) != d.new_len || k->dim(3) != d.head || k->dim(1) < 1 ||
      d.q_heads % k->dim(1) != 0) {
    return bad_input(node, "K", "[B, Hkv, S, D] with Hkv dividing Q's heads (Q is " + shape_to_string(q->shape()) + ")",
                     k);
  }
  d.kv_heads = k->dim(1);
  if (!is_f32_rank4(v) || v->shape() != k->shape()) return bad_input(node, "V", shape_to_string(k->shape()), v);
  if (past == nullptr || past->rank() != 4) return bad_input(node, "past", "[B, Hkv, P, D]", past);
  d.past_len = past->dim(2);
  d.total = d.past_len + d.new_len;
  for (const Tensor* cache : {ck, cv}) {
    if (!is_f32_rank4(cache) || cache->dim(0) != d.batch || cache->dim(1) != d.kv_heads || cache->dim(3) != d.head) {
      return bad_input(node, cache == ck ? "cache_k" : "cache_v", "[B, Hkv, C, D] matching K", cache);
    }
  }
  d.capacity = ck->dim(2);
  if (cv->dim(2) != d.capacity || d.total > d.capacity) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          "the KV cache holds " + std::to_string(d.capacity) + " positions; " +
                              std::to_string(d.past_len) + " cached + " + std::to_string(d.new_len) +
                              " new do not fit");
  }
  if (mask != nullptr) {
    const Shape want = {d.batch, d.q_heads, d.new_len, d.total};
    bool fits = mask->dtype() == DataType::kFloat32 && mask->rank() == 4 && mask->dim(3) == d.total;
    for (int a = 0; fits && a < 3; ++a) fits = mask->dim(a) == 1 || mask->dim(a) == want[a];
    if (!fits) return bad_input(node, "mask", "broadcastable to " + shape_to_string(want), mask);
  }
  return d;
}

/// Copies the S new rows of K and V into rows [P, P + S) of the caches.
void append(const Dims& d, const Tensor& k, const Tensor& v, float* cache_k, float* cache_v) {
  const size_t row_bytes = sizeof(float) * d.head * d.new_len;
  for (int64_t g = 0; g < d.batch * d.kv_heads; ++g) {
    const size_t to = (g * d.capacity + d.past_len) * d.head, from = g * d.new_len * d.head;
    std::memcpy(cache_k + to, k.data<float>() + from, row_bytes);
    std::memcpy(cache_v + to, v.data<float>() + from, row_bytes);
  }
}

/// Element strides of the mask over its batch, head and query axes (0 where it broadcasts).
std::vector<int64_t> mask_strides(const Tensor* mask) {
  std::vector<int64_t> ms = {0, 0, 0};
  if (mask != nullptr) {
    const std::vector<int64_t> strides = contiguous_strides(mask->shape());
    for (int a = 0; a < 3; ++a) ms[a] = mask->dim(a) == 1 ? 0 : strides[a];
  }
  return ms;
}

/// x ← scale · x + m over n scores (m may be null); returns their maximum.
EDGEMM_AVX512_CLONES float scale_and_mask(float* x, const float* m, int64_t n, float scale) {
  float top = -INFINITY;
#pragma omp simd reduction(max : top)
  for (int64_t t = 0; t < n; ++t) {
    x[t] = scale * x[t] + (m != nullptr ? m[t] : 0.0f);
    top = std::max(top, x[t]);
  }
  return top;
}

/// x ← softmax(scale · x + m) over n scores with the vectorized softmax_row() (m may be null); a
/// row masked everywhere (maximum -inf) becomes zeros, as softmax_rows() gives.
void softmax_masked_row(float* x, const float* m, int64_t n, float scale) {
  if (scale_and_mask(x, m, n, scale) == -INFINITY) {
    std::fill(x, x + n, 0.0f);
  } else {
    softmax_row(x, x, n);
  }
}

/// scores[g, r, s, :] ← softmax(scale · scores + mask) in place; g = b · Hkv + kv head. `plain`:
/// with plain loops (the reference path), a row masked everywhere (maximum -inf) becoming zeros;
/// else by softmax_masked_row().
void softmax_rows(const Dims& d, float scale, const Tensor* mask, float* scores, int threads, bool plain) {
  const std::vector<int64_t> ms = mask_strides(mask);
  const int64_t rows = d.batch * d.q_heads * d.new_len;
  parallel_for(threads, rows, d.total * 8, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t s = row % d.new_len, h = (row / d.new_len) % d.q_heads, b = row / (d.new_len * d.q_heads);
      float* x = scores + row * d.total;
      const float* m = mask == nullptr ? nullptr : mask->data<float>() + b * ms[0] + h * ms[1] + s * ms[2];
      if (!plain) {
        softmax_masked_row(x, m, d.total, scale);
        continue;
      }
      const float top = scale_and_mask(x, m, d.total, scale);
      double sum = 0;
      for (int64_t t = 0; t < d.total; ++t) {
        x[t] = top == -INFINITY ? 0.0f : std::exp(x[t] - top);
        sum += x[t];
      }
      const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.0f;
      for (int64_t t = 0; t < d.total; ++t) x[t] *= inv;
    }
  });
}

/// Query rows per KV head (grouped-query heads × new positions) up to which a step is attended
/// by attend_decode.
constexpr int64_t kDecodeRows = 16;

/// s[i · total + t] = q_i · k_t for `rows` query rows q_i and `total` key rows k_t of `head`
/// floats each, key row by key row (each read once).
EDGEMM_AVX512_CLONES void key_scores_portable(const float* q, int64_t rows, const float* k, int64_t total, int64_t head,
                                              float* s) {
  for (int64_t t = 0; t < total; ++t) {
    const float* kt = k + t * head;
    for (int64_t i = 0; i < rows; ++i) {
      const float* qi = q + i * head;
      float acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int64_t j = 0; j < head; ++j) acc += qi[j] * kt[j];
      s[i * total + t] = acc;
    }
  }
}

/// y_i = Σ_t p[i · total + t] · v_t for `rows` rows, value row by value row (each read once).
EDGEMM_AVX512_CLONES void weigh_values_portable(const float* p, int64_t rows, const float* v, int64_t total,
                                                int64_t head, float* y) {
  std::fill(y, y + rows * head, 0.0f);
  for (int64_t t = 0; t < total; ++t) {
    const float* vt = v + t * head;
    for (int64_t i = 0; i < rows; ++i) {
      const float w = p[i * total + t];
      float* yi = y + i * head;
#pragma omp simd
      for (int64_t j = 0; j < head; ++j) yi[j] += w * vt[j];
    }
  }
}

#if defined(__x86_64__)

#define EDGEMM_AVX512F __attribute__((target("avx512f,avx2,fma")))

/// The lane sums of v[0 .. 15], in order, by a tree of in-lane shuffles and adds (v is clobbered).
EDGEMM_AVX512F inline __m512 sum_lanes16(__m512 v[16]) {
  for (int j = 0; j < 8; ++j) {  // per 128-bit lane: [a0 + a2, b0 + b2, a1 + a3, b1 + b3]
    v[j] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * j], v[2 * j + 1]), _mm512_unpackhi_ps(v[2 * j], v[2 * j + 1]));
  }
  for (int j = 0; j < 4; ++j) {  // per 128-bit lane: that lane's sums of vectors 4j .. 4j + 3
    const __m512d c = _mm512_castps_pd(v[2 * j]), d = _mm512_castps_pd(v[2 * j + 1]);
    v[j] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(c, d)), _mm512_castpd_ps(_mm512_unpackhi_pd(c, d)));
  }
  for (int j = 0; j < 2; ++j) {  // 128-bit lanes 0 + 2 and 1 + 3 of vectors 8j .. 8j + 3, then 8j + 4 ..
    v[j] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0x44),
                         _mm512_shuffle_f32x4(v[2 * j], v[2 * j + 1], 0xEE));
  }
  return _mm512_add_ps(_mm512_shuffle_f32x4(v[0], v[1], 0x88), _mm512_shuffle_f32x4(v[0], v[1], 0xDD));
}

/// key_scores_portable() for head % 16 == 0: per 16 key rows (in L1 after the first row) and
/// query row, one vector of products per key, summed across lanes by sum_lanes16().
EDGEMM_AVX512F void key_scores_avx512(const float* q, int64_t rows, const float* k, int64_t total, int64_t head,
                                      float* s) {
  const int64_t vectors = head / 16;
  for (int64_t t0 = 0; t0 < total; t0 += 16) {
    const int64_t count = std::min<int64_t>(16, total - t0);
    for (int64_t i = 0; i < rows; ++i) {
      const float* qi = q + i * head;
      __m512 part[16];
      for (int64_t j = 0; j < 16; ++j) {
        part[j] = _mm512_setzero_ps();
        if (j >= count) continue;
        const float* kt = k + (t0 + j) * head;
        for (int64_t x = 0; x < vectors; ++x) {
          part[j] = _mm512_fmadd_ps(_mm512_loadu_ps(qi + 16 * x), _mm512_loadu_ps(kt + 16 * x), part[j]);
        }
      }
      _mm512_mask_storeu_ps(s + i * total + t0, static_cast<__mmask16>((1u << count) - 1), sum_lanes16(part));
    }
  }
}

/// y_i[64 floats from `col`] for R rows, accumulated in registers over all the value rows.
template <int R>
EDGEMM_AVX512F void weigh_values_tile(const float* p, const float* v, int64_t total, int64_t head, int64_t col,
                                      float* y) {
  __m512 acc[R][4];
  for (int r = 0; r < R; ++r) {
    for (int x = 0; x < 4; ++x) acc[r][x] = _mm512_setzero_ps();
  }
  for (int64_t t = 0; t < total; ++t) {
    const float* vt = v + t * head + col;
    const __m512 v0 = _mm512_loadu_ps(vt), v1 = _mm512_loadu_ps(vt + 16);
    const __m512 v2 = _mm512_loadu_ps(vt + 32), v3 = _mm512_loadu_ps(vt + 48);
    for (int r = 0; r < R; ++r) {
      const __m512 w = _mm512_set1_ps(p[r * total + t]);
      acc[r][0] = _mm512_fmadd_ps(w, v0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(w, v1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(w, v2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(w, v3, acc[r][3]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int x = 0; x < 4; ++x) _mm512_storeu_ps(y + r * head + col + 16 * x, acc[r][x]);
  }
}

/// weigh_values_portable() for head % 64 == 0: up to 4 rows and 64 columns at a time in
/// registers (the running sums of the portable loop went through memory every value row).
EDGEMM_AVX512F void weigh_values_avx512(const float* p, int64_t rows, const float* v, int64_t total, int64_t head,
                                        float* y) {
  using Tile = void (*)(const float*, const float*, int64_t, int64_t, int64_t, float*);
  constexpr Tile kTiles[4] = {weigh_values_tile<1>, weigh_values_tile<2>, weigh_values_tile<3>, weigh_values_tile<4>};
  for (int64_t r0 = 0; r0 < rows; r0 += 4) {
    const int64_t count = std::min<int64_t>(4, rows - r0);
    for (int64_t col = 0; col < head; col += 64) kTiles[count - 1](p + r0 * total, v, total, head, col, y + r0 * head);
  }
}

#undef EDGEMM_AVX512F

#endif  // __x86_64__

/// Scores of `rows` query rows against `total` cached keys (key_scores_portable()).
void key_scores(const float* q, int64_t rows, const float* k, int64_t total, int64_t head, float* s) {
#if defined(__x86_64__)
  if (head % 16 == 0 && cpu_features().avx512f) return key_scores_avx512(q, rows, k, total, head, s);
#endif
  key_scores_portable(q, rows, k, total, head, s);
}

/// Outputs of `rows` rows of weights over `total` cached values (weigh_values_portable()).
void weigh_values(const float* p, int64_t rows, const float* v, int64_t total, int64_t head, float* y) {
#if defined(__x86_64__)
  if (head % 64 == 0 && cpu_features().avx512f) return weigh_values_avx512(p, rows, v, total, head, y);
#endif
  weigh_values_portable(p, rows, v, total, head, y);
}

/// Attention for a decode-sized step, KV head by KV head: the scores of all the query rows that
/// share the head (in `scores`, [rows][total] per head) from one pass over its cached keys, then
/// their outputs from one pass over its cached values, so that each cache row is read once.
void attend_decode(const Dims& d, float scale, const Tensor* mask, const float* q, const float* cache_k,
                   const float* cache_v, float* scores, float* y, int threads) {
  const std::vector<int64_t> ms = mask_strides(mask);
  const int64_t reps = d.group(), rows = reps * d.new_len, groups = d.batch * d.kv_heads;
  parallel_for(threads, groups, 2 * rows * d.total * d.head, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const int64_t b = g / d.kv_heads, first_head = (g % d.kv_heads) * reps;
      // Row i = (r, s): query head first_head + r, new position s; Q and Y rows of it are
      // contiguous: ((b · Hq + first_head) · S + i) · D.
      const float* qg = q + (b * d.q_heads + first_head) * d.new_len * d.head;
      float* yg = y + (b * d.q_heads + first_head) * d.new_len * d.head;
      const float* kg = cache_k + g * d.capacity * d.head;
      const float* vg = cache_v + g * d.capacity * d.head;
      float* sg = scores + g * rows * d.total;
      key_scores(qg, rows, kg, d.total, d.head, sg);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t r = i / d.new_len, s = i % d.new_len;
        const float* m =
            mask == nullptr ? nullptr : mask->data<float>() + b * ms[0] + (first_head + r) * ms[1] + s * ms[2];
        float* x = sg + i * d.total;
        softmax_masked_row(x, m, d.total, scale);
      }
      weigh_values(sg, rows, vg, d.total, d.head, yg);
    }
  });
}

/// y[g, r] = a[g, r] (rows × inner) · b[g] where b's element (i, j) sits at b + g·bg + i·bi + j·bj.
void batched_matmul_reference(int64_t groups, int64_t reps, int64_t rows, int64_t inner, int64_t cols, const float* a,
                              const float* b, int64_t bg, int64_t bi, int64_t bj, float* y) {
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t r = 0; r < reps; ++r) {
      const float* ar = a + (g * reps + r) * rows * inner;
      float* yr = y + (g * reps + r) * rows * cols;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < inner; ++k)
            acc += static_cast<double>(ar[i * inner + k]) * b[g * bg + k * bi + j * bj];
          yr[i * cols + j] = static_cast<float>(acc);
        }
      }
    }
  }
}

/// The same product as one oneDNN matmul: a {G, R, rows, inner} dense, b {G, 1, inner, cols}
/// strided (broadcast over R), y {G, R, rows, cols} dense.
Status batched_matmul_onednn(const ir::Node& node, int64_t groups, int64_t reps, int64_t rows, int64_t inner,
                             int64_t cols, const float* a, const float* b, int64_t bg, int64_t bi, int64_t bj,
                             float* y) {
  try {
    const memory::desc a_md({groups, reps, rows, inner}, memory::data_type::f32, memory::format_tag::abcd);
    const memory::desc b_md({groups, 1, inner, cols}, memory::data_type::f32, memory::dims{bg, bg, bi, bj});
    const memory::desc y_md({groups, reps, rows, cols}, memory::data_type::f32, memory::format_tag::abcd);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, y_md), onednn::user_scratchpad_attr(),
                                          onednn::engine());
    return onednn::execute(node, dnnl::matmul(pd),
                           {{DNNL_ARG_SRC, onednn::wrap(a_md, a)},
                            {DNNL_ARG_WEIGHTS, onednn::wrap(b_md, b)},
                            {DNNL_ARG_DST, onednn::wrap(y_md, y)}},
                           pd.scratchpad_desc());
  } catch (const dnnl::error& e) {
    return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN error: ") + e.what());
  }
}

class KvAttentionKernel final : public Kernel {
 public:
  explicit KvAttentionKernel(float scale) : scale_(scale) {}
  const char* name() const override { return onednn::enabled() ? "kv_attention__onednn" : "kv_attention__reference"; }

  Status run(KernelContext& ctx) const override {
    EDGEMM_ASSIGN_OR_RETURN(const Dims d, check_inputs(ctx));
    // The caches are caller-owned buffers lent for in-place appends (kv_attention.h).
    float* cache_k = const_cast<float*>(ctx.input(5)->data<float>());
    float* cache_v = const_cast<float*>(ctx.input(6)->data<float>());
    append(d, *ctx.input(1), *ctx.input(2), cache_k, cache_v);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.allocate_output(0, DataType::kFloat32, {d.batch, d.q_heads, d.new_len, d.head}));
    const int64_t groups = d.batch * d.kv_heads, reps = d.group();
    const size_t score_count = static_cast<size_t>(groups * reps * d.new_len * d.total);
    float* scores = static_cast<float*>(onednn::thread_buffer(onednn::Slot::kExtra, score_count * sizeof(float)));
    const float* q = ctx.input(0)->data<float>();
    const int64_t cg = d.capacity * d.head;  // one head's cache
    const bool fast = onednn::enabled();
    if (fast && reps * d.new_len <= kDecodeRows) {
      attend_decode(d, scale_, ctx.input(3), q, cache_k, cache_v, scores, y->data<float>(), ctx.threads());
      return Status::ok();
    }
    onednn::set_threads(ctx.threads());
    // scores = Q · Kᵀ: Kᵀ element (i = d, j = t) at cache_k[t · D + d].
    if (fast) {
      EDGEMM_RETURN_IF_ERROR(batched_matmul_onednn(ctx.node(), groups, reps, d.new_len, d.head, d.total, q, cache_k, cg,
                                                   1, d.head, scores));
    } else {
      batched_matmul_reference(groups, reps, d.new_len, d.head, d.total, q, cache_k, cg, 1, d.head, scores);
    }
    softmax_rows(d, scale_, ctx.input(3), scores, ctx.threads(), !fast);
    // Y = P · V: V element (i = t, j = d) at cache_v[t · D + d].
    if (fast) {
      return batched_matmul_onednn(ctx.node(), groups, reps, d.new_len, d.total, d.head, scores, cache_v, cg, d.head, 1,
                                   y->data<float>());
    }
    batched_matmul_reference(groups, reps, d.new_len, d.total, d.head, scores, cache_v, cg, d.head, 1,
                             y->data<float>());
    return Status::ok();
  }

 private:
  float scale_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_kv_attention(const KernelInfo& info) {
  EDGEMM_ASSIGN_OR_RETURN(const float scale, info.node.attr_float("scale", 0));
  if (!(scale > 0) || !std::isfinite(scale)) {
    return ir::node_error(info.node, StatusCode::kInvalidModel,
                          "attribute scale must be a positive number, got " + std::to_string(scale));
  }
  return std::unique_ptr<Kernel>(std::make_unique<KvAttentionKernel>(scale));
}

void register_attention_kernels(KernelRegistry& registry) {
  registry.add(ir::kEdgemmDomain, "KvAttention", 1, make_kv_attention);
}

}  // namespace edgemm::kernels
