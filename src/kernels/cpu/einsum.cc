/// \file einsum.cc
/// Einsum of the default ONNX domain (version 12).
///
/// Follows the ONNX operator spec (Operators.md, "Einsum") with numpy.einsum semantics:
/// terms of letters [a-zA-Z] separated by ',', an optional "->" output, whitespace ignored.
/// A label repeated inside one term takes the diagonal; labels missing from the output are
/// summed over. "..." stands for the leading broadcast axes (numpy broadcasting, aligned
/// from the right across inputs). Without "->", the output is the ellipsis axes followed by
/// the labels that occur exactly once, in alphabetical (ASCII) order.
///
/// Implementation: inputs are contracted pairwise from left to right. Each pair is mapped to
/// a batched matrix product: labels are classified as batch (both inputs, kept), M (first
/// only, kept), N (second only, kept), K (both, summed) or single-input sums. Inputs already
/// laid out as [batch, M, K] and [batch, K, N] or [batch, N, K] are used in place; others are
/// gathered once (strided copy that also takes diagonals and single-input sums). float32
/// products run on oneDNN matmul unless oneDNN is disabled (onednn::enabled()); the plain
/// loops are the reference and serve the other dtypes.
///
/// dtypes: float32, float64, int32, int64.

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/onednn.h"

namespace edgemm::kernels {
namespace {

constexpr int kLetterLabels = 52;  // a-z, A-Z; ellipsis axes get ids from 52 on
constexpr int kEllipsis = -1;      // marker inside a parsed term

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -2;
}

// ASCII order of labels (uppercase before lowercase) for the implicit output.
int ascii_rank(int label) { return label >= 26 ? label - 26 : label + 26; }

struct Equation {
  std::vector<std::vector<int>> terms;  // letter labels or kEllipsis
  bool explicit_output = false;
  std::vector<int> output;  // letter labels or kEllipsis
};

Expected<Equation> parse_equation(const ir::Node& node, const std::string& text) {
  std::string eq;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') eq.push_back(c);
  }
  auto bad = [&](const std::string& why) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "equation '" + text + "' is malformed: " + why);
  };
  Equation out;
  std::string lhs = eq, rhs;
  if (const size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    out.explicit_output = true;
  }
  auto parse_term = [&](const std::string& term, std::vector<int>& labels) -> Status {
    for (size_t i = 0; i < term.size();) {
      if (term.compare(i, 3, "...") == 0) {
        if (std::count(labels.begin(), labels.end(), kEllipsis) > 0) {
          return bad("'...' appears twice in one term");
        }
        labels.push_back(kEllipsis);
        i += 3;
        continue;
      }
      const int label = letter_label(term[i]);
      if (label < 0) return bad(std::string("unexpected character '") + term[i] + "'");
      labels.push_back(label);
      ++i;
    }
    return Status::ok();
  };
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    out.terms.emplace_back();
    EDGEMM_RETURN_IF_ERROR(parse_term(lhs.substr(start, comma - start), out.terms.back()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.explicit_output) {
    if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos) {
      return bad("the output must be a single term");
    }
    EDGEMM_RETURN_IF_ERROR(parse_term(rhs, out.output));
    for (size_t i = 0; i < out.output.size(); ++i) {
      for (size_t j = i + 1; j < out.output.size(); ++j) {
        if (out.output[i] == out.output[j]) return bad("a label repeats in the output");
      }
    }
  }
  return out;
}

/// A view of one operand: its distinct labels, their element strides (summed over repeated
/// occurrences; 0 where the operand broadcasts) and the data.
template <typename T>
struct Operand {
  const T* data = nullptr;
  std::vector<int> labels;
  std::vector<int64_t> strides;
  std::vector<T> storage;  // owns intermediate results

  int find(int label) const {
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == label) return static_cast<int>(i);
    }
    return -1;
  }
  int64_t stride_of(int label) const {
    const int i = find(label);
    return i < 0 ? 0 : strides[i];
  }
};

struct Axis {
  int64_t size;
  int64_t stride;
};

/// dst (dense over `out`, row-major) = sum over `sum` of src at the combined offsets.
template <typename T>
void gather_sum(const T* src, const std::vector<Axis>& out, const std::vector<Axis>& sum, T* dst,
                int threads) {
  int64_t out_count = 1, sum_count = 1;
  for (const Axis& a : out) out_count *= a.size;
  for (const Axis& a : sum) sum_count *= a.size;
  auto offset_of = [](const std::vector<Axis>& axes, int64_t linear) {
    int64_t offset = 0;
    for (int64_t i = static_cast<int64_t>(axes.size()) - 1; i >= 0; --i) {
      offset += (linear % axes[i].size) * axes[i].stride;
      linear /= axes[i].size;
    }
    return offset;
  };
  const bool table = sum_count <= (1 << 16);
  std::vector<int64_t> sum_offsets(static_cast<size_t>(table ? sum_count : 0));
  if (table) {
    for (int64_t s = 0; s < sum_count; ++s) sum_offsets[s] = offset_of(sum, s);
  }
  parallel_for(threads, out_count, sum_count, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const T* base = src + offset_of(out, o);
      T acc = T(0);
      for (int64_t s = 0; s < sum_count; ++s) {
        acc += base[table ? sum_offsets[s] : offset_of(sum, s)];
      }
      dst[o] = acc;
    }
  });
}

/// c[bt] (m x n) = a[bt] (m x k) * b[bt] (k x n, or n x k when b_transposed).
template <typename T>
void batched_gemm(const T* a, const T* b, T* c, int64_t batch, int64_t m, int64_t n, int64_t k,
                  bool b_transposed, int threads) {
  parallel_for(threads, batch * m, n * k, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t bt = row / m;
      const T* arow = a + row * k;
      const T* bm = b + bt * k * n;
      T* crow = c + row * n;
      if (b_transposed) {
        for (int64_t j = 0; j < n; ++j) {
          const T* bcol = bm + j * k;
          constexpr int kLanes = 8;
          T acc[kLanes] = {};
          int64_t p = 0;
          for (; p + kLanes <= k; p += kLanes) {
            for (int l = 0; l < kLanes; ++l) acc[l] += arow[p + l] * bcol[p + l];
          }
          for (; p < k; ++p) acc[0] += arow[p] * bcol[p];
          T total = T(0);
          for (T v : acc) total += v;
          crow[j] = total;
        }
      } else {
        std::fill(crow, crow + n, T(0));
        for (int64_t p = 0; p < k; ++p) {
          const T av = arow[p];
          const T* brow = bm + p * n;
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
      }
    }
  });
}

/// How a contraction runs its matrix products: oneDNN matmul for float32 when enabled (the
/// kernel decides at creation), else the loops above.
struct GemmConfig {
  const ir::Node* node;
  bool use_onednn;
  int threads;
};

/// oneDNN batched matmul over dense [bt, m, k] x [bt, k, n] (or [bt, n, k]) buffers. Returns
/// false when oneDNN cannot run it, so the caller falls back to the loops.
bool gemm_onednn(const GemmConfig& cfg, const float* a, const float* b, float* c, int64_t bt,
                 int64_t m, int64_t n, int64_t k, bool b_transposed) {
  using dnnl::memory;
  try {
    const memory::desc a_md({bt, m, k}, memory::data_type::f32, memory::dims{m * k, k, 1});
    const memory::desc b_md({bt, k, n}, memory::data_type::f32,
                            b_transposed ? memory::dims{n * k, 1, k} : memory::dims{k * n, n, 1});
    const memory::desc c_md({bt, m, n}, memory::data_type::f32, memory::dims{m * n, n, 1});
    const dnnl::matmul::desc desc(a_md, b_md, c_md);
    const dnnl::matmul::primitive_desc pd(desc, onednn::user_scratchpad_attr(), onednn::engine());
    const dnnl::matmul primitive(pd);
    onednn::set_threads(cfg.threads);
    return onednn::execute(*cfg.node, primitive,
                           {{DNNL_ARG_SRC, onednn::wrap(a_md, a)},
                            {DNNL_ARG_WEIGHTS, onednn::wrap(b_md, b)},
                            {DNNL_ARG_DST, onednn::wrap(c_md, c)}},
                           pd.scratchpad_desc())
        .is_ok();
  } catch (const dnnl::error&) {
    return false;
  }
}

template <typename T>
void run_gemm(const GemmConfig& cfg, const T* a, const T* b, T* c, int64_t bt, int64_t m, int64_t n,
              int64_t k, bool b_transposed) {
  if constexpr (std::is_same_v<T, float>) {
    if (cfg.use_onednn && bt > 0 && m > 0 && n > 0 && k > 0 &&
        gemm_onednn(cfg, a, b, c, bt, m, n, k, b_transposed)) {
      return;
    }
  }
  batched_gemm(a, b, c, bt, m, n, k, b_transposed, cfg.threads);
}

/// True when `op` is densely laid out (row-major) in the label order `order`, ignoring
/// extent-1 labels.
template <typename T>
bool dense_in_order(const Operand<T>& op, const std::vector<int>& order,
                    const std::vector<int64_t>& sizes) {
  if (op.labels.size() != order.size()) return false;
  int64_t expected = 1;
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
    const int idx = op.find(order[i]);
    if (idx < 0) return false;
    const int64_t size = sizes[order[i]];
    if (size != 1 && op.strides[idx] != expected) return false;
    expected *= size;
  }
  return true;
}

/// Makes `op` dense in `order` (summing its labels missing from `order`); returns a pointer
/// to its data, copying only when needed.
template <typename T>
const T* densify(const Operand<T>& op, const std::vector<int>& order,
                 const std::vector<int64_t>& sizes, std::vector<T>& buffer, int threads) {
  if (dense_in_order(op, order, sizes)) return op.data;
  std::vector<Axis> out, sum;
  int64_t count = 1;
  for (int label : order) {
    out.push_back({sizes[label], op.stride_of(label)});
    count *= sizes[label];
  }
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (std::find(order.begin(), order.end(), op.labels[i]) == order.end()) {
      sum.push_back({sizes[op.labels[i]], op.strides[i]});
    }
  }
  buffer.resize(static_cast<size_t>(count));
  gather_sum(op.data, out, sum, buffer.data(), threads);
  return buffer.data();
}

/// Contracts a and b, keeping the labels in `keep` (any order); the result is dense with
/// labels in the order batch, M, N. When that order is `final_order`, the result is written to
/// `final_dst` instead of new storage.
template <typename T>
Operand<T> contract_pair(const Operand<T>& a, const Operand<T>& b, const std::vector<int>& keep,
                         const std::vector<int64_t>& sizes, const GemmConfig& cfg,
                         const std::vector<int>* final_order, T* final_dst) {
  const int threads = cfg.threads;
  auto kept = [&](int l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); };
  std::vector<int> batch, ms, ns, ks;
  for (int l : a.labels) {
    const bool in_b = b.find(l) >= 0;
    if (in_b && kept(l)) batch.push_back(l);
    if (!in_b && kept(l)) ms.push_back(l);
    if (in_b && !kept(l)) ks.push_back(l);
  }
  for (int l : b.labels) {
    if (a.find(l) < 0 && kept(l)) ns.push_back(l);
  }
  auto product = [&](const std::vector<int>& ls) {
    int64_t p = 1;
    for (int l : ls) p *= sizes[l];
    return p;
  };
  const int64_t bt = product(batch), m = product(ms), n = product(ns), k = product(ks);
  std::vector<int> a_order = batch, b_kn = batch, b_nk = batch;
  a_order.insert(a_order.end(), ms.begin(), ms.end());
  a_order.insert(a_order.end(), ks.begin(), ks.end());
  b_kn.insert(b_kn.end(), ks.begin(), ks.end());
  b_kn.insert(b_kn.end(), ns.begin(), ns.end());
  b_nk.insert(b_nk.end(), ns.begin(), ns.end());
  b_nk.insert(b_nk.end(), ks.begin(), ks.end());
  std::vector<T> a_buf, b_buf;
  const T* ad = densify(a, a_order, sizes, a_buf, threads);
  const bool b_transposed = !dense_in_order(b, b_kn, sizes) && dense_in_order(b, b_nk, sizes);
  const T* bd = densify(b, b_transposed ? b_nk : b_kn, sizes, b_buf, threads);
  Operand<T> result;
  result.labels = batch;
  result.labels.insert(result.labels.end(), ms.begin(), ms.end());
  result.labels.insert(result.labels.end(), ns.begin(), ns.end());
  result.strides.resize(result.labels.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(result.labels.size()) - 1; i >= 0; --i) {
    result.strides[i] = stride;
    stride *= sizes[result.labels[i]];
  }
  T* dst = nullptr;
  if (final_order != nullptr && dense_in_order(result, *final_order, sizes)) {
    dst = final_dst;
  } else {
    result.storage.resize(static_cast<size_t>(bt * m * n));
    dst = result.storage.data();
  }
  run_gemm(cfg, ad, bd, dst, bt, m, n, k, b_transposed);
  result.data = dst;
  return result;
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(Equation eq, std::string text, bool use_onednn)
      : eq_(std::move(eq)), text_(std::move(text)), use_onednn_(use_onednn) {}

  const char* name() const override { return use_onednn_ ? "einsum__onednn" : "reference"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const int inputs = ctx.input_count();
    if (inputs != static_cast<int>(eq_.terms.size())) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "equation '" + text_ + "' has " + std::to_string(eq_.terms.size()) +
                                " input terms but the node has " + std::to_string(inputs) +
                                " inputs");
    }
    std::vector<const Tensor*> xs;
    for (int i = 0; i < inputs; ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) {
        return ir::node_error(node, StatusCode::kInvalidModel,
                              "input " + std::to_string(i) + " is missing");
      }
      if (t->dtype() != ctx.input(0)->dtype()) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input " + std::to_string(i) + " has dtype " +
                                  dtype_name(t->dtype()) + " but input 0 has " +
                                  dtype_name(ctx.input(0)->dtype()));
      }
      xs.push_back(t);
    }
    switch (xs[0]->dtype()) {
      case DataType::kFloat32:
        return run_typed<float>(ctx, xs);
      case DataType::kFloat64:
        return run_typed<double>(ctx, xs);
      case DataType::kInt32:
        return run_typed<int32_t>(ctx, xs);
      case DataType::kInt64:
        return run_typed<int64_t>(ctx, xs);
      default:
        return unsupported_dtype(node, 0, xs[0]->dtype());
    }
  }

 private:
  template <typename T>
  Status run_typed(KernelContext& ctx, const std::vector<const Tensor*>& xs) const {
    const ir::Node& node = ctx.node();
    const int count = static_cast<int>(xs.size());
    // Ellipsis axes: input i contributes its leading rank - letters axes, right-aligned.
    std::vector<int64_t> ell_rank(count, 0);
    int64_t max_ell = 0;
    for (int i = 0; i < count; ++i) {
      const auto& term = eq_.terms[i];
      const bool has_ell = std::count(term.begin(), term.end(), kEllipsis) > 0;
      const int64_t letters = static_cast<int64_t>(term.size()) - (has_ell ? 1 : 0);
      const int64_t extra = xs[i]->rank() - letters;
      if (extra < 0 || (!has_ell && extra != 0)) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "input " + std::to_string(i) + " has shape " +
                                  shape_to_string(xs[i]->shape()) + " but term " +
                                  std::to_string(i) + " of equation '" + text_ + "' names " +
                                  std::to_string(letters) + " axes");
      }
      ell_rank[i] = extra;
      max_ell = std::max(max_ell, extra);
    }
    // Axis labels of every input and the extent of every label (1 broadcasts).
    std::vector<std::vector<int>> axis_labels(count);
    std::vector<int64_t> sizes(static_cast<size_t>(kLetterLabels + max_ell), -1);
    for (int i = 0; i < count; ++i) {
      for (int l : eq_.terms[i]) {
        if (l != kEllipsis) {
          axis_labels[i].push_back(l);
          continue;
        }
        for (int64_t e = max_ell - ell_rank[i]; e < max_ell; ++e) {
          axis_labels[i].push_back(kLetterLabels + static_cast<int>(e));
        }
      }
      for (size_t ax = 0; ax < axis_labels[i].size(); ++ax) {
        const int l = axis_labels[i][ax];
        const int64_t d = xs[i]->shape()[ax];
        if (sizes[l] == -1 || sizes[l] == 1) {
          sizes[l] = d;
        } else if (d != sizes[l] && d != 1) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "input " + std::to_string(i) + " axis " + std::to_string(ax) +
                                    " has extent " + std::to_string(d) + " but label '" +
                                    label_name(l) + "' already has extent " +
                                    std::to_string(sizes[l]) + " in equation '" + text_ + "'");
        }
      }
    }
    // Output labels.
    std::vector<int> out_labels;
    if (eq_.explicit_output) {
      for (int l : eq_.output) {
        if (l == kEllipsis) {
          for (int64_t e = 0; e < max_ell; ++e) out_labels.push_back(kLetterLabels + int(e));
        } else if (sizes[l] == -1) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "output label '" + label_name(l) + "' of equation '" + text_ +
                                    "' appears in no input");
        } else {
          out_labels.push_back(l);
        }
      }
    } else {
      for (int64_t e = 0; e < max_ell; ++e) out_labels.push_back(kLetterLabels + int(e));
      std::vector<int> once;
      for (int l = 0; l < kLetterLabels; ++l) {
        int occurrences = 0;
        for (const auto& term : eq_.terms) occurrences += std::count(term.begin(), term.end(), l);
        if (occurrences == 1) once.push_back(l);
      }
      std::sort(once.begin(), once.end(),
                [](int p, int q) { return ascii_rank(p) < ascii_rank(q); });
      out_labels.insert(out_labels.end(), once.begin(), once.end());
    }
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(sizes[l]);
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, xs[0]->dtype(), out_shape));
    T* out = y->data<T>();

    // Operand views of the inputs.
    std::vector<Operand<T>> ops(count);
    for (int i = 0; i < count; ++i) {
      Operand<T>& op = ops[i];
      op.data = xs[i]->data<T>();
      const auto strides = contiguous_strides(xs[i]->shape());
      for (size_t ax = 0; ax < axis_labels[i].size(); ++ax) {
        const int l = axis_labels[i][ax];
        const int64_t s = xs[i]->shape()[ax] == 1 && sizes[l] != 1 ? 0 : strides[ax];
        const int idx = op.find(l);
        if (idx >= 0) {
          op.strides[idx] += s;
        } else {
          op.labels.push_back(l);
          op.strides.push_back(s);
        }
      }
    }
    const int threads = ctx.threads();
    if (y->element_count() == 0) return Status::ok();
    for (const Tensor* x : xs) {
      if (x->element_count() == 0) {  // an empty sum
        std::fill(out, out + y->element_count(), T(0));
        return Status::ok();
      }
    }
    // Left-to-right pairwise contraction, keeping what later inputs or the output need.
    const GemmConfig gemm{&node, use_onednn_, threads};
    Operand<T> current = std::move(ops[0]);
    for (int i = 1; i < count; ++i) {
      std::vector<int> keep = out_labels;
      for (int j = i + 1; j < count; ++j) {
        for (int l : ops[j].labels) {
          if (std::find(keep.begin(), keep.end(), l) == keep.end()) keep.push_back(l);
        }
      }
      const bool last = i + 1 == count;
      current = contract_pair(current, ops[i], keep, sizes, gemm, last ? &out_labels : nullptr,
                              last ? out : nullptr);
    }
    // Final layout (and sums for a single input).
    std::vector<T> unused;
    const T* result = densify(current, out_labels, sizes, unused, threads);
    if (result != out) {
      std::memcpy(out, result, static_cast<size_t>(y->element_count()) * sizeof(T));
    }
    return Status::ok();
  }

  static std::string label_name(int l) {
    if (l < 26) return std::string(1, static_cast<char>('a' + l));
    if (l < kLetterLabels) return std::string(1, static_cast<char>('A' + l - 26));
    return "...";
  }

  Equation eq_;
  std::string text_;
  bool use_onednn_;
};

Expected<std::unique_ptr<Kernel>> make_einsum(const KernelInfo& info) {
  const ir::Node& node = info.node;
  if (!node.has_attr("equation")) {
    return ir::node_error(node, StatusCode::kInvalidModel, "attribute 'equation' is missing");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string text, node.attr_string("equation", ""));
  EDGEMM_ASSIGN_OR_RETURN(Equation eq, parse_equation(node, text));
  if (eq.terms.size() != node.inputs.size()) {
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "equation '" + text + "' has " + std::to_string(eq.terms.size()) +
                              " input terms but the node has " +
                              std::to_string(node.inputs.size()) + " inputs");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<EinsumKernel>(std::move(eq), text, onednn::enabled()));
}

}  // namespace

void register_einsum_kernels(KernelRegistry& registry) {
  registry.add("", "Einsum", 12, make_einsum);
}

}  // namespace edgemm::kernels
