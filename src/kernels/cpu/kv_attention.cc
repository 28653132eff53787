/// \file kv_attention.cc
/// com.edgemm KvAttention (kv_attention.h): append to the cache, then attention over it. A decode
/// step (few query rows per KV head) reads each cached key and value row once for all the query
/// rows that share it; larger steps (prefill) run Q·Kᵀ and P·V as two batched oneDNN matmuls
/// reading the cache through strides. The reference path: plain loops.

#include "kernels/cpu/kv_attention.h"

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
float scale_and_mask(float* x, const float* m, int64_t n, float scale) {
  float top = -INFINITY;
  for (int64_t t = 0; t < n; ++t) {
    x[t] = scale * x[t] + (m != nullptr ? m[t] : 0.0f);
    top = std::max(top, x[t]);
  }
  return top;
}

/// scores[g, r, s, :] ← softmax(scale · scores + mask) in place, with plain loops; g = b · Hkv +
/// kv head. A row masked everywhere (maximum -inf) becomes zeros.
void softmax_rows(const Dims& d, float scale, const Tensor* mask, float* scores, int threads) {
  const std::vector<int64_t> ms = mask_strides(mask);
  const int64_t rows = d.batch * d.q_heads * d.new_len;
  parallel_for(threads, rows, d.total * 8, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t s = row % d.new_len, h = (row / d.new_len) % d.q_heads, b = row / (d.new_len * d.q_heads);
      float* x = scores + row * d.total;
      const float* m = mask == nullptr ? nullptr : mask->data<float>() + b * ms[0] + h * ms[1] + s * ms[2];
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
EDGEMM_AVX512_CLONES void key_scores(const float* q, int64_t rows, const float* k, int64_t total, int64_t head,
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
EDGEMM_AVX512_CLONES void weigh_values(const float* p, int64_t rows, const float* v, int64_t total, int64_t head,
                                       float* y) {
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
        if (scale_and_mask(x, m, d.total, scale) == -INFINITY) {
          std::fill(x, x + d.total, 0.0f);  // masked everywhere: zeros, as softmax_rows gives
        } else {
          softmax_row(x, x, d.total);
        }
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
    softmax_rows(d, scale_, ctx.input(3), scores, ctx.threads());
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
