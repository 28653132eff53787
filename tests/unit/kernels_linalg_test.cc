// Det (src/kernels/cpu/linalg.cc) and TfIdfVectorizer (src/kernels/cpu/tfidf.cc) run through
// runtime::run_node, errors through the kernel directly (nntest::run_direct) so that messages
// name the node. Expected values are worked out by hand in the comments next to each case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "nn_test_util.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm {
namespace kernels_linalg_test {  // named for the file: unity batches merge anonymous namespaces

using namespace testutil;  // NOLINT: test helpers
using nntest::expect_error;
using nntest::expect_near;
using nntest::run_direct;
using nntest::set_floats;
using nntest::set_int;
using nntest::set_ints;
using nntest::set_string;

/// Runs `node` at `opset` and returns its only output.
Tensor linalg_run(const ir::Node& node, const std::vector<Tensor>& inputs, int64_t opset, int threads = 1) {
  auto out = runtime::run_node(node, inputs, opset, threads);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  return out.has_value() ? (*out)[0] : Tensor();
}

// ---- Det --------------------------------------------------------------------------------

ir::Node det_node() { return nntest::make_node("Det", {"x"}, {"y"}); }

TEST(LinalgDet, TwoByTwoGivesAScalar) {
  // 0·3 − 1·2 = −2 (the first pivot is 0: rows swap).
  const Tensor y = linalg_run(det_node(), {f32({2, 2}, {0, 1, 2, 3})}, 11);
  expect_near(y, Shape{}, {-2.0f});
}

TEST(LinalgDet, ThreeByThreeAndPermutation) {
  // [[2,0,1],[1,3,2],[1,1,2]]: 2·(3·2 − 2·1) − 0 + 1·(1·1 − 3·1) = 8 − 2 = 6.
  // [[0,0,1],[0,1,0],[1,0,0]]: one row swap of the identity: −1.
  const Tensor y = linalg_run(det_node(), {f32({2, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2, 0, 0, 1, 0, 1, 0, 1, 0, 0})}, 11);
  expect_near(y, Shape{2}, {6.0f, -1.0f}, 1e-5f);
}

TEST(LinalgDet, Float64BatchesSingularAndEmpty) {
  // [[1,2],[3,4]]: −2; [[2,0],[0,3]]: 6; [[1,2],[2,4]]: singular, 0; batch dims [3] kept.
  const Tensor y = linalg_run(det_node(), {f64({3, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3, 1, 2, 2, 4})}, 11);
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  const auto v = values<double>(y);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NEAR(v[0], -2.0, 1e-12);
  EXPECT_NEAR(v[1], 6.0, 1e-12);
  EXPECT_EQ(v[2], 0.0);
  // The determinant of a 0x0 matrix is 1.
  const Tensor e = linalg_run(det_node(), {f32({2, 1, 0, 0}, {})}, 11);
  expect_near(e, Shape{2, 1}, {1.0f, 1.0f});
}

TEST(LinalgDet, NanPropagates) {
  const Tensor y = linalg_run(det_node(), {f32({2, 2}, {1, NAN, 1, 1})}, 11);
  ASSERT_EQ(y.element_count(), 1);
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
}

TEST(LinalgDet, TwoThreadsMatchOne) {
  // 4096 diagonal 4x4 matrices diag(1, 2, 3, k % 5): det 6·(k % 5).
  const int64_t n = 4096;
  std::vector<float> x(static_cast<size_t>(n * 16), 0.0f);
  for (int64_t k = 0; k < n; ++k) {
    float* a = x.data() + k * 16;
    a[0] = 1;
    a[5] = 2;
    a[10] = 3;
    a[15] = static_cast<float>(k % 5);
  }
  const Tensor y = linalg_run(det_node(), {f32({n, 4, 4}, x)}, 11, 2);
  const auto v = values<float>(y);
  for (int64_t k = 0; k < n; ++k) ASSERT_NEAR(v[k], 6.0f * static_cast<float>(k % 5), 1e-5f) << k;
}

TEST(LinalgDet, BadShapesAndDtypesAreErrors) {
  expect_error(run_direct(det_node(), {f32({4}, {1, 2, 3, 4})}, 11), StatusCode::kInvalidArgument,
               {"Det", "square", "[4]"});
  expect_error(run_direct(det_node(), {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, 11), StatusCode::kInvalidArgument, {"[2,3]"});
  const auto r = run_direct(det_node(), {i32({2, 2}, {1, 2, 3, 4})}, 11);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("int32"), std::string::npos) << r.status().to_string();
}

// ---- TfIdfVectorizer -------------------------------------------------------------------

ir::Node tfidf_node(int64_t min_len, int64_t max_len, int64_t skip, const std::string& mode,
                    const std::vector<int64_t>& counts, const std::vector<int64_t>& indexes,
                    const std::vector<int64_t>& pool) {
  ir::Node node = nntest::make_node("TfIdfVectorizer", {"x"}, {"y"});
  set_int(node, "min_gram_length", min_len);
  set_int(node, "max_gram_length", max_len);
  set_int(node, "max_skip_count", skip);
  set_string(node, "mode", mode);
  set_ints(node, "ngram_counts", counts);
  set_ints(node, "ngram_indexes", indexes);
  set_ints(node, "pool_int64s", pool);
  return node;
}

TEST(LinalgTfIdf, SpecExampleBigramsMapThroughNgramIndexes) {
  // The spec's pool [94, 17, 17, 36] of two 2-grams with ngram_indexes [1, 0]: Y[1] counts
  // [94, 17], Y[0] counts [17, 36]. X's bigrams: [94,17] [17,36] [36,94] [94,17] → Y = [1, 2].
  const ir::Node node = tfidf_node(2, 2, 0, "TF", {0, 0}, {1, 0}, {94, 17, 17, 36});
  expect_near(linalg_run(node, {i32({5}, {94, 17, 36, 94, 17})}, 9), Shape{2}, {1, 2});
}

TEST(LinalgTfIdf, SkipsUpToMaxSkipCount) {
  // The spec's example: X = [94, 17, 36, 12, 28]; with 2 skips (items 3 apart) the 2-grams are
  // [94, 12] and [17, 28]; with none, [94, 17] among others. Pool: [94,12] [17,28] [94,17].
  const std::vector<int64_t> pool = {94, 12, 17, 28, 94, 17};
  const Tensor x = i64({5}, {94, 17, 36, 12, 28});
  expect_near(linalg_run(tfidf_node(2, 2, 2, "TF", {0, 0}, {0, 1, 2}, pool), {x}, 9), Shape{3}, {1, 1, 1});
  // At most 1 skip: items 1 or 2 apart; [94, 36], [17, 12], [36, 28] are not in the pool.
  expect_near(linalg_run(tfidf_node(2, 2, 1, "TF", {0, 0}, {0, 1, 2}, pool), {x}, 9), Shape{3}, {0, 0, 1});
}

TEST(LinalgTfIdf, UnigramsCountOncePerRowWhateverTheSkips) {
  // Pool: 1-grams [1], [2] then the 2-gram [1, 2]. X = [1, 2, 1, 2], skips 0..1: 1-grams 2 and
  // 2 (not 4 and 4); 2-grams 1 apart: [1,2] [2,1] [1,2] → 2; 2 apart: [1,1] [2,2] → 0.
  const ir::Node node = tfidf_node(1, 2, 1, "TF", {0, 2}, {0, 1, 2}, {1, 2, 1, 2});
  expect_near(linalg_run(node, {i32({4}, {1, 2, 1, 2})}, 9), Shape{3}, {2, 2, 2});
  // min_gram_length 2: the 1-grams are not counted.
  const ir::Node bigrams = tfidf_node(2, 2, 1, "TF", {0, 2}, {0, 1, 2}, {1, 2, 1, 2});
  expect_near(linalg_run(bigrams, {i32({4}, {1, 2, 1, 2})}, 9), Shape{3}, {0, 0, 2});
}

TEST(LinalgTfIdf, TrigramsNeedTheirWholePath) {
  // Pool: 3-grams [1,2,3] and [2,3,4] only (ngram_counts [0, 0, 0]). X = [1, 2, 3, 4, 1, 2]:
  // [1,2,3] once, [2,3,4] once, [3,4,1] [4,1,2] not in the pool.
  const ir::Node node = tfidf_node(3, 3, 0, "TF", {0, 0, 0}, {0, 1}, {1, 2, 3, 2, 3, 4});
  expect_near(linalg_run(node, {i64({6}, {1, 2, 3, 4, 1, 2})}, 9), Shape{2}, {1, 1});
}

TEST(LinalgTfIdf, ModesWeightPoolNgramsInBatches) {
  // Pool 1-grams [5], [6], [7] → columns 2, 0, 1, weights 0.5, 2, 4.
  // Row 0 [5, 5, 6]: counts 5→2, 6→1. Row 1 [7, 0, 0]: 7→1.
  // TF: row 0 col2 = 2, col0 = 1; row 1 col1 = 1.
  // IDF: row 0 col2 = 0.5, col0 = 2; row 1 col1 = 4.  TFIDF: row 0 col2 = 0.5·2, col0 = 2·1.
  const Tensor x = i64({2, 3}, {5, 5, 6, 7, 0, 0});
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"TF", {1, 0, 2, 0, 1, 0}}, {"IDF", {2, 0, 0.5f, 0, 4, 0}}, {"TFIDF", {2, 0, 1, 0, 4, 0}}};
  for (const auto& [mode, want] : cases) {
    SCOPED_TRACE(mode);
    ir::Node node = tfidf_node(1, 1, 0, mode, {0}, {2, 0, 1}, {5, 6, 7});
    set_floats(node, "weights", {0.5f, 2.0f, 4.0f});
    expect_near(linalg_run(node, {x}, 9), Shape{2, 3}, want);
  }
  // IDF without weights: 1 where the n-gram occurs.
  const ir::Node idf = tfidf_node(1, 1, 0, "IDF", {0}, {2, 0, 1}, {5, 6, 7});
  expect_near(linalg_run(idf, {x}, 9), Shape{2, 3}, {1, 0, 1, 0, 1, 0});
}

TEST(LinalgTfIdf, HugeSkipAndGramLengthsStayBounded) {
  // max_skip_count far beyond the row: the skips stop at the row's length. X = [1, 9, 9, 2]:
  // [1, 2] is 3 apart (2 skips); the 1-grams [1], [2] are counted once each.
  const ir::Node node = tfidf_node(1, 2, int64_t{1} << 62, "TF", {0, 2}, {0, 1, 2}, {1, 2, 1, 2});
  expect_near(linalg_run(node, {i64({4}, {1, 9, 9, 2})}, 9), Shape{3}, {1, 1, 1});
  // min_gram_length longer than the row: nothing to count.
  const ir::Node longer = tfidf_node(5, int64_t{1} << 62, 0, "TF", {0, 0, 0, 0, 0}, {0}, {1, 9, 9, 2, 2});
  expect_near(linalg_run(longer, {i64({4}, {1, 9, 9, 2})}, 9), Shape{1}, {0});
}

TEST(LinalgTfIdf, EmptyInputGivesZeros) {
  const ir::Node node = tfidf_node(1, 1, 0, "TF", {0}, {0, 1}, {5, 6});
  expect_near(linalg_run(node, {i32({0}, {})}, 9), Shape{2}, {0, 0});
}

TEST(LinalgTfIdf, BadAttributesAndInputsAreErrors) {
  const Tensor x = i64({3}, {1, 2, 3});
  ir::Node strings = nntest::make_node("TfIdfVectorizer", {"x"}, {"y"});
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kStrings;
  a.strings = {"a", "b"};
  strings.attributes["pool_strings"] = a;
  set_int(strings, "min_gram_length", 1);
  set_int(strings, "max_gram_length", 1);
  set_int(strings, "max_skip_count", 0);
  set_string(strings, "mode", "TF");
  set_ints(strings, "ngram_counts", {0});
  set_ints(strings, "ngram_indexes", {0, 1});
  expect_error(run_direct(strings, {x}, 9), StatusCode::kUnsupported, {"TfIdfVectorizer", "pool_strings"});

  expect_error(run_direct(tfidf_node(1, 1, 0, "BM25", {0}, {0, 1}, {5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"mode", "BM25"});
  expect_error(run_direct(tfidf_node(2, 1, 0, "TF", {0}, {0, 1}, {5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"min_gram_length 2", "max_gram_length 1"});
  expect_error(run_direct(tfidf_node(1, 1, -1, "TF", {0}, {0, 1}, {5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"max_skip_count -1"});
  // Three pool n-grams (two 1-grams, one 2-gram) but two indexes.
  expect_error(run_direct(tfidf_node(1, 2, 0, "TF", {0, 2}, {0, 1}, {5, 6, 5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"ngram_indexes", "3 n-grams"});
  // Three items from offset 1 are not whole 2-grams.
  expect_error(run_direct(tfidf_node(1, 2, 0, "TF", {0, 1}, {0, 1}, {5, 6, 7, 8}), {x}, 9), StatusCode::kInvalidModel,
               {"2-grams", "3 items"});
  expect_error(run_direct(tfidf_node(1, 1, 0, "TF", {0, 5}, {0, 1}, {5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"ngram_counts"});
  expect_error(run_direct(tfidf_node(1, 1, 0, "TF", {0}, {0, -1}, {5, 6}), {x}, 9), StatusCode::kInvalidModel,
               {"ngram_indexes[1] = -1"});
  expect_error(run_direct(tfidf_node(1, 1, 0, "TF", {0}, {0, 1}, {5, 5}), {x}, 9), StatusCode::kInvalidModel,
               {"more than once"});
  ir::Node weights = tfidf_node(1, 1, 0, "TFIDF", {0}, {0, 1}, {5, 6});
  set_floats(weights, "weights", {1.0f});
  expect_error(run_direct(weights, {x}, 9), StatusCode::kInvalidModel, {"weights", "2 n-grams"});

  const ir::Node ok = tfidf_node(1, 1, 0, "TF", {0}, {0, 1}, {5, 6});
  expect_error(run_direct(ok, {i64({1, 1, 3}, {1, 2, 3})}, 9), StatusCode::kInvalidArgument, {"[1,1,3]"});
  const auto r = run_direct(ok, {f32({3}, {1, 2, 3})}, 9);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("float32"), std::string::npos) << r.status().to_string();
}

}  // namespace kernels_linalg_test
}  // namespace edgemm
