/// \file tfidf.cc
/// TfIdfVectorizer of the default ONNX domain (Operators.md "TfIdfVectorizer", version 9, the
/// only one).
///
/// X: int32 or int64, [C] (one row) or [N, C] (N rows) → Y: float32 [max(ngram_indexes) + 1] or
/// [N, max(ngram_indexes) + 1]. The pool (`pool_int64s`) holds the n-grams to count, all 1-grams
/// first, then the 2-grams, ...: `ngram_counts[k]` is the pool offset where the (k+1)-grams
/// start (the last group ends at the pool's end), and the i-th n-gram of the pool (in pool order)
/// is counted into output column `ngram_indexes[i]`. In every row, the n-grams of lengths
/// min_gram_length..max_gram_length are taken at every start position with every skip s in
/// 0..max_skip_count (items s+1 apart: [x[j], x[j+s+1], x[j+2(s+1)], ...]); 1-grams are counted
/// once, not once per skip. An n-gram not in the pool is ignored. Output column of pool n-gram i,
/// with c its count in the row and w = weights[i] (1 without `weights`):
///   mode "TF": c; "IDF": w when c > 0, else 0; "TFIDF": w · c
/// (columns that several pool n-grams map to add their contributions). `weights` is indexed by
/// pool n-gram as the spec says, as ONNX Runtime 1.30 does (onnx's Python reference indexes it by
/// output column instead, which agrees only when ngram_indexes is 0, 1, 2, ...).
///
/// Errors: `pool_strings` (string tensors) is kUnsupported; a missing pool, a bad mode, lengths
/// (min_gram_length < 1, max < min, max_skip_count < 0), ngram_counts that do not start at 0,
/// decrease, pass the pool's end or split a group into partial n-grams, ngram_indexes or weights
/// whose size is not the number of pool n-grams, a negative index, an output column count above
/// 2^24, or a repeated n-gram in the pool are kInvalidModel (at kernel creation); X of another
/// rank is kInvalidArgument, of another dtype unsupported_dtype().

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {
// Own namespace: unity builds put this file in one translation unit with other kernels.
namespace tfidf_impl {
namespace {

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// Most output columns (max(ngram_indexes) + 1) a node may ask for.
constexpr int64_t kMaxTfIdfColumns = int64_t{1} << 24;

// A trie of the pool's n-grams: node 0 is the root; an n-gram of length n ends at depth n.
struct TfIdfTrie {
  struct TrieNode {
    std::unordered_map<int64_t, int32_t> children;
    int64_t pool_ngram = -1;  // index of the n-gram ending here (in pool order), or -1
  };
  std::vector<TrieNode> nodes = std::vector<TrieNode>(1);

  // Inserts `items`; returns false when that n-gram is already present.
  bool insert(const int64_t* items, int64_t n, int64_t pool_ngram) {
    int32_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      auto it = nodes[at].children.find(items[k]);
      if (it == nodes[at].children.end()) {
        nodes.emplace_back();
        it = nodes[at].children.emplace(items[k], static_cast<int32_t>(nodes.size() - 1)).first;
      }
      at = it->second;
    }
    if (nodes[at].pool_ngram >= 0) return false;
    nodes[at].pool_ngram = pool_ngram;
    return true;
  }
};

struct TfIdfAttrs {
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_len = 1, max_len = 1, max_skip = 0;
  std::vector<int64_t> ngram_indexes;
  std::vector<float> weights;  // one per pool n-gram (all 1 when the attribute is absent)
  int64_t columns = 0;
  TfIdfTrie trie;
};

class TfIdfKernel final : public Kernel {
 public:
  explicit TfIdfKernel(TfIdfAttrs at) : at_(std::move(at)) {}

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "input 'X' is required");
    if (x->dtype() != DataType::kInt32 && x->dtype() != DataType::kInt64) return unsupported_dtype(node, 0, x->dtype());
    if (x->rank() != 1 && x->rank() != 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "input 'X' must be [C] or [N, C], got shape " + shape_to_string(x->shape()));
    }
    const int64_t rows = x->rank() == 2 ? x->shape()[0] : 1;
    const int64_t length = x->shape().back();
    const Shape out_shape = x->rank() == 2 ? Shape{rows, at_.columns} : Shape{at_.columns};
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out_shape));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> items, read_int_values(node, 0, *x));
    float* out = y->data<float>();
    const int64_t pool_ngrams = static_cast<int64_t>(at_.ngram_indexes.size());
    const int64_t row_cost = length * (std::min<int64_t>(at_.max_skip, 64) + 1);  // a rough estimate
    parallel_for(ctx.threads(), rows, row_cost, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> counts(static_cast<size_t>(pool_ngrams));
      for (int64_t r = begin; r < end; ++r) {
        std::fill(counts.begin(), counts.end(), 0);
        count_row(items.data() + r * length, length, counts);
        float* row = out + r * at_.columns;
        std::fill(row, row + at_.columns, 0.0f);
        for (int64_t i = 0; i < pool_ngrams; ++i) {
          const int64_t c = counts[i];
          const float w = at_.weights[i];
          float v = 0.0f;
          switch (at_.mode) {
            case TfIdfMode::kTf:
              v = static_cast<float>(c);
              break;
            case TfIdfMode::kIdf:
              v = c > 0 ? w : 0.0f;
              break;
            case TfIdfMode::kTfIdf:
              v = w * static_cast<float>(c);
              break;
          }
          row[at_.ngram_indexes[i]] += v;
        }
      }
    });
    return Status::ok();
  }

 private:
  // Counts the pool n-grams of one row of `length` items into `counts` (per pool n-gram).
  void count_row(const int64_t* x, int64_t length, std::vector<int64_t>& counts) const {
    int64_t shortest = at_.min_len;
    if (shortest > length) return;
    // Items `distance` apart: past length - 1 no 2-gram fits (1-grams only need distance 1).
    const int64_t longest_distance = std::max<int64_t>(std::min(at_.max_skip, length - 2) + 1, 1);
    for (int64_t distance = 1; distance <= longest_distance; ++distance) {
      for (int64_t start = 0; start < length; ++start) {
        // Too close to the end for an n-gram of the shortest length with this distance.
        if (start + distance * (shortest - 1) >= length) break;
        int32_t at = 0;
        for (int64_t n = 1, pos = start; n <= at_.max_len && pos < length; ++n, pos += distance) {
          const auto& children = at_.trie.nodes[at].children;
          const auto it = children.find(x[pos]);
          if (it == children.end()) break;
          at = it->second;
          const int64_t id = at_.trie.nodes[at].pool_ngram;
          if (n >= shortest && id >= 0) ++counts[id];
        }
      }
      // 1-grams do not depend on the distance: count them in the first pass only.
      if (shortest == 1) {
        shortest = 2;
        if (shortest > at_.max_len) break;
      }
    }
  }

  TfIdfAttrs at_;
};

Expected<std::unique_ptr<Kernel>> make_tfidf(const KernelInfo& info) {
  const ir::Node& node = info.node;
  auto invalid = [&node](const std::string& msg) { return ir::node_error(node, StatusCode::kInvalidModel, msg); };
  if (node.has_attr("pool_strings")) {
    return ir::node_error(node, StatusCode::kUnsupported,
                          "attribute 'pool_strings' (string n-grams) is not supported: edgemm has no string "
                          "tensors; use pool_int64s");
  }
  if (!node.has_attr("pool_int64s")) return invalid("attribute 'pool_int64s' is required");
  for (const char* required :
       {"min_gram_length", "max_gram_length", "max_skip_count", "mode", "ngram_counts", "ngram_indexes"}) {
    if (!node.has_attr(required)) return invalid(std::string("attribute '") + required + "' is required");
  }
  TfIdfAttrs at;
  EDGEMM_ASSIGN_OR_RETURN(at.min_len, node.attr_int("min_gram_length", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.max_len, node.attr_int("max_gram_length", 1));
  EDGEMM_ASSIGN_OR_RETURN(at.max_skip, node.attr_int("max_skip_count", 0));
  if (at.min_len < 1 || at.max_len < at.min_len || at.max_skip < 0) {
    return invalid("needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got min_gram_length " +
                   std::to_string(at.min_len) + ", max_gram_length " + std::to_string(at.max_len) +
                   ", max_skip_count " + std::to_string(at.max_skip));
  }
  EDGEMM_ASSIGN_OR_RETURN(std::string mode, node.attr_string("mode", ""));
  if (mode == "TF") {
    at.mode = TfIdfMode::kTf;
  } else if (mode == "IDF") {
    at.mode = TfIdfMode::kIdf;
  } else if (mode == "TFIDF") {
    at.mode = TfIdfMode::kTfIdf;
  } else {
    return invalid("attribute 'mode' must be TF, IDF or TFIDF, got '" + mode + "'");
  }
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> pool, node.attr_ints("pool_int64s"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> counts, node.attr_ints("ngram_counts"));
  EDGEMM_ASSIGN_OR_RETURN(at.ngram_indexes, node.attr_ints("ngram_indexes"));
  const int64_t pool_size = static_cast<int64_t>(pool.size());
  if (counts.empty() || counts[0] != 0) return invalid("attribute 'ngram_counts' must start with 0");
  // Pool n-grams in pool order; those of lengths outside [min, max] are never counted.
  int64_t pool_ngrams = 0;
  std::vector<std::pair<int64_t, int64_t>> to_insert;  // (pool offset, length) per n-gram
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t begin = counts[k], end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size) {
      return invalid("attribute 'ngram_counts' must be non-decreasing offsets into the pool of " +
                     std::to_string(pool_size) + " items, got " + std::to_string(begin) + " then " +
                     std::to_string(end) + " at " + std::to_string(n) + "-grams");
    }
    if ((end - begin) % n != 0) {
      return invalid("the " + std::to_string(n) + "-grams of the pool (" + std::to_string(end - begin) +
                     " items from offset " + std::to_string(begin) + ") are not a whole number of " +
                     std::to_string(n) + "-grams");
    }
    for (int64_t off = begin; off < end; off += n) to_insert.emplace_back(off, n);
    pool_ngrams += (end - begin) / n;
  }
  if (static_cast<int64_t>(at.ngram_indexes.size()) != pool_ngrams) {
    return invalid("attribute 'ngram_indexes' has " + std::to_string(at.ngram_indexes.size()) +
                   " entries; the pool holds " + std::to_string(pool_ngrams) + " n-grams");
  }
  at.columns = 0;
  for (size_t i = 0; i < at.ngram_indexes.size(); ++i) {
    const int64_t c = at.ngram_indexes[i];
    if (c < 0 || c >= kMaxTfIdfColumns) {
      return invalid("ngram_indexes[" + std::to_string(i) + "] = " + std::to_string(c) + " is outside [0, " +
                     std::to_string(kMaxTfIdfColumns) + ")");
    }
    at.columns = std::max(at.columns, c + 1);
  }
  EDGEMM_ASSIGN_OR_RETURN(at.weights, node.attr_floats("weights"));
  if (!node.has_attr("weights")) {
    at.weights.assign(static_cast<size_t>(pool_ngrams), 1.0f);
  } else if (static_cast<int64_t>(at.weights.size()) != pool_ngrams) {
    return invalid("attribute 'weights' has " + std::to_string(at.weights.size()) + " entries; the pool holds " +
                   std::to_string(pool_ngrams) + " n-grams");
  }
  for (size_t i = 0; i < to_insert.size(); ++i) {
    const auto [off, n] = to_insert[i];
    if (n < at.min_len || n > at.max_len) continue;
    if (!at.trie.insert(pool.data() + off, n, static_cast<int64_t>(i))) {
      return invalid("the pool holds the " + std::to_string(n) + "-gram at offset " + std::to_string(off) +
                     " more than once");
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<TfIdfKernel>(std::move(at)));
}

}  // namespace
}  // namespace tfidf_impl

void register_tfidf_kernels(KernelRegistry& registry) {
  registry.add("", "TfIdfVectorizer", 9, tfidf_impl::make_tfidf);
}

}  // namespace edgemm::kernels
