// Tensor-manipulation kernels (shape.cc, transpose.cc, concat_split.cc, slice.cc, gather.cc,
// scatter.cc, pad_tile_expand.cc, generate.cc, trilu_cumsum.cc, nonzero_unique.cc) run through
// runtime::run_node. Expected values are hand-computed or taken from the examples in ONNX
// Operators.md; larger cases compare with a plain index-by-definition loop written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "runtime/single_node.h"
#include "tensor_test_util.h"

namespace edgemm::shapetest {
namespace kernels_shape_test {  // named for the file: unity batches merge anonymous namespaces

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using namespace testutil;  // NOLINT: test helpers

/// Builds a node named "n1" with inputs x0.. and outputs y0...
struct NodeBuilder {
  ir::Node node;
  NodeBuilder(const std::string& op, int inputs, int outputs = 1) {
    node.op_type = op;
    node.name = "n1";
    for (int i = 0; i < inputs; ++i) node.inputs.push_back("x" + std::to_string(i));
    for (int i = 0; i < outputs; ++i) node.outputs.push_back("y" + std::to_string(i));
  }
  NodeBuilder& i(const std::string& k, int64_t v) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kInt;
    a.i = v;
    node.attributes[k] = a;
    return *this;
  }
  NodeBuilder& ints(const std::string& k, std::vector<int64_t> v) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kInts;
    a.ints = std::move(v);
    node.attributes[k] = a;
    return *this;
  }
  NodeBuilder& f(const std::string& k, float v) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kFloat;
    a.f = v;
    node.attributes[k] = a;
    return *this;
  }
  NodeBuilder& s(const std::string& k, const std::string& v) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kString;
    a.s = v;
    node.attributes[k] = a;
    return *this;
  }
  NodeBuilder& t(const std::string& k, Tensor v) {
    ir::Attribute a;
    a.kind = ir::Attribute::Kind::kTensor;
    a.t = std::move(v);
    node.attributes[k] = a;
    return *this;
  }
};

/// Runs and expects success; returns the outputs.
std::vector<Tensor> run_ok(const NodeBuilder& b, const std::vector<Tensor>& in, int64_t opset = 17, int threads = 1) {
  auto r = runtime::run_node(b.node, in, opset, threads);
  EXPECT_TRUE(r.has_value()) << r.status().to_string();
  if (!r.has_value()) return std::vector<Tensor>(b.node.outputs.size());
  return *r;
}

/// Runs and expects failure with `code`; returns the message.
std::string run_err(const NodeBuilder& b, const std::vector<Tensor>& in, StatusCode code, int64_t opset = 17) {
  auto r = runtime::run_node(b.node, in, opset, 1);
  EXPECT_FALSE(r.has_value());
  if (r.has_value()) return "";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  return r.status().message();
}

Shape shape_of(const Tensor& t) { return t.shape(); }

// ---------------------------------------------------------------------------------- shape.cc

TEST(ShapeKernels, ShapeAndSize) {
  Tensor x = f32({2, 3, 4}, std::vector<float>(24, 1.0f));
  auto out = run_ok(NodeBuilder("Shape", 1), {x});
  EXPECT_EQ(out[0].dtype(), DataType::kInt64);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(2, 3, 4));
  out = run_ok(NodeBuilder("Shape", 1).i("start", 1).i("end", -1), {x}, 15);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(3));
  out = run_ok(NodeBuilder("Shape", 1).i("start", -10).i("end", 10), {x}, 15);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(2, 3, 4));
  out = run_ok(NodeBuilder("Shape", 1).i("start", 2).i("end", 1), {x}, 15);
  EXPECT_EQ(out[0].element_count(), 0);
  // Before opset 15 start/end do not exist.
  out = run_ok(NodeBuilder("Shape", 1).i("start", 1), {x}, 13);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(2, 3, 4));
  out = run_ok(NodeBuilder("Size", 1), {x});
  EXPECT_EQ(out[0].rank(), 0);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(24));
}

TEST(ShapeKernels, ReshapeCopiesZeroAndInfersMinusOne) {
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 0.0f);
  Tensor x = f32({2, 3, 4}, v);
  auto out = run_ok(NodeBuilder("Reshape", 2), {x, i64({3}, {4, 0, -1})});
  EXPECT_EQ(shape_of(out[0]), (Shape{4, 3, 2}));
  EXPECT_EQ(values<float>(out[0]), v);
  // allowzero=1 (opset 14): 0 is a real zero extent.
  Tensor empty = f32({0, 3}, {});
  out = run_ok(NodeBuilder("Reshape", 2).i("allowzero", 1), {empty, i64({2}, {3, 0})}, 14);
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 0}));
  // Without allowzero, 0 copies the input extent.
  out = run_ok(NodeBuilder("Reshape", 2), {empty, i64({2}, {0, 3})}, 14);
  EXPECT_EQ(shape_of(out[0]), (Shape{0, 3}));
}

TEST(ShapeKernels, ReshapeErrors) {
  Tensor x = f32({2, 3}, std::vector<float>(6, 0.0f));
  EXPECT_THAT(run_err(NodeBuilder("Reshape", 2), {x, i64({2}, {-1, -1})}, StatusCode::kInvalidArgument),
              HasSubstr("more than one -1"));
  EXPECT_THAT(run_err(NodeBuilder("Reshape", 2), {x, i64({2}, {4, 2})}, StatusCode::kInvalidArgument),
              HasSubstr("cannot reshape"));
  EXPECT_THAT(run_err(NodeBuilder("Reshape", 2), {x, i64({3}, {1, 6, 0})}, StatusCode::kInvalidArgument),
              HasSubstr("Reshape 'n1'"));
  run_err(NodeBuilder("Reshape", 2), {x, i64({2}, {-2, 3})}, StatusCode::kInvalidArgument);
  run_err(NodeBuilder("Reshape", 2).i("allowzero", 1), {x, i64({2}, {0, -1})}, StatusCode::kInvalidArgument, 14);
  run_err(NodeBuilder("Reshape", 2), {x, f32({2}, {3, 2})}, StatusCode::kInvalidArgument);
}

TEST(ShapeKernels, FlattenSqueezeUnsqueeze) {
  Tensor x = f32({2, 3, 4}, std::vector<float>(24, 0.5f));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Flatten", 1).i("axis", 0), {x})[0]), (Shape{1, 24}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Flatten", 1), {x})[0]), (Shape{2, 12}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Flatten", 1).i("axis", -1), {x})[0]), (Shape{6, 4}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Flatten", 1).i("axis", 3), {x})[0]), (Shape{24, 1}));
  run_err(NodeBuilder("Flatten", 1).i("axis", 4), {x}, StatusCode::kInvalidArgument);

  Tensor y = f32({1, 3, 1, 2}, std::vector<float>(6, 1.0f));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Squeeze", 1), {y})[0]), (Shape{3, 2}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Squeeze", 1).ints("axes", {-2}), {y}, 11)[0]), (Shape{1, 3, 2}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Squeeze", 2), {y, i64({1}, {0})}, 13)[0]), (Shape{3, 1, 2}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Squeeze", 2), {y, i64({0}, {})}, 13)[0]),
            (Shape{3, 2}));  // empty axes: every unit axis, as ONNX Runtime
  EXPECT_THAT(run_err(NodeBuilder("Squeeze", 2), {y, i64({1}, {1})}, StatusCode::kInvalidArgument, 13),
              HasSubstr("cannot squeeze axis 1 of extent 3"));

  Tensor z = f32({2, 3}, std::vector<float>(6, 1.0f));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Unsqueeze", 2), {z, i64({2}, {0, -1})}, 13)[0]), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(shape_of(run_ok(NodeBuilder("Unsqueeze", 1).ints("axes", {3, 1}), {z}, 11)[0]), (Shape{2, 1, 3, 1}));
  EXPECT_THAT(run_err(NodeBuilder("Unsqueeze", 2), {z, i64({2}, {1, 1})}, StatusCode::kInvalidArgument, 13),
              HasSubstr("repeated"));
  run_err(NodeBuilder("Unsqueeze", 2), {z, i64({1}, {4})}, StatusCode::kInvalidArgument, 13);
}

TEST(ShapeKernels, IdentityAndDropout) {
  Tensor x = make<int8_t>(DataType::kInt8, {3}, {-1, 0, 7});
  EXPECT_THAT(values<int8_t>(run_ok(NodeBuilder("Identity", 1), {x})[0]), ElementsAre(-1, 0, 7));
  Tensor f = f32({2}, {1.5f, -2.0f});
  auto out = run_ok(NodeBuilder("Dropout", 1, 2), {f}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1.5f, -2.0f));
  EXPECT_EQ(out[1].dtype(), DataType::kBool);
  EXPECT_THAT(values<uint8_t>(out[1]), ElementsAre(1, 1));
  out = run_ok(NodeBuilder("Dropout", 1, 2).f("ratio", 0.3f), {f}, 7);
  EXPECT_EQ(out[1].dtype(), DataType::kFloat32);
  EXPECT_THAT(values<float>(out[1]), ElementsAre(1.0f, 1.0f));
  Tensor train = make<uint8_t>(DataType::kBool, {}, {1});
  out = run_ok(NodeBuilder("Dropout", 3), {f, f32({}, {0.0f}), train}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1.5f, -2.0f));
}

// Training-mode Dropout with a seed draws NumPy's stream: np.random.seed(7);
// np.random.uniform(0, 1, 6) = [0.0763, 0.7799, 0.4384, 0.7235, 0.9780, 0.5385], so ratio 0.5
// keeps elements 1, 3, 4, 5, scaled by 1 / (1 - 0.5).
TEST(ShapeKernels, TrainingDropoutFollowsTheSeed) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor train = make<uint8_t>(DataType::kBool, {}, {1});
  auto out = run_ok(NodeBuilder("Dropout", 3, 2).i("seed", 7), {x, f32({}, {0.5f}), train}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 4, 0, 8, 10, 12));
  EXPECT_THAT(values<uint8_t>(out[1]), ElementsAre(0, 1, 0, 1, 1, 1));
  out = run_ok(NodeBuilder("Dropout", 3), {x, f32({}, {0.5f}), train}, 13);  // unseeded: 0 or 2x
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(values<float>(out[0])[i] == 0 || values<float>(out[0])[i] == 2 * (i + 1));
  EXPECT_THAT(run_err(NodeBuilder("Dropout", 3), {x, f32({}, {1.0f}), train}, StatusCode::kInvalidArgument, 13),
              HasSubstr("[0, 1)"));
  run_err(NodeBuilder("Dropout", 3), {make<int8_t>(DataType::kInt8, {1}, {1}), f32({}, {0.5f}), train},
          StatusCode::kUnsupported, 13);
}

// ------------------------------------------------------------------------------ transpose.cc

TEST(TransposeKernels, SmallPermutations) {
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  auto out = run_ok(NodeBuilder("Transpose", 1), {x});
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 3, 1, 4, 2, 5));
  // [2,2,3] with perm [1,2,0]: out[j][k][i] = x[i][j][k] = 6i + 3j + k.
  std::vector<int16_t> v(12);
  std::iota(v.begin(), v.end(), int16_t{0});
  out = run_ok(NodeBuilder("Transpose", 1).ints("perm", {1, 2, 0}), {make(DataType::kInt16, {2, 2, 3}, v)});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 3, 2}));
  EXPECT_THAT(values<int16_t>(out[0]), ElementsAre(0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11));
  run_err(NodeBuilder("Transpose", 1).ints("perm", {0, 0}), {x}, StatusCode::kInvalidArgument);
  run_err(NodeBuilder("Transpose", 1).ints("perm", {0}), {x}, StatusCode::kInvalidArgument);
}

/// Checks a 4-D transpose against the definition out[i] = x[perm-mapped i], several dtypes,
/// one and two threads (large enough to take the tiled and the parallel paths).
template <typename T>
void check_transpose_4d(DataType dt, Shape shape, std::vector<int64_t> perm, int threads) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 7919) % 251);
  auto out = run_ok(NodeBuilder("Transpose", 1).ints("perm", perm), {make(dt, shape, v)}, 17, threads);
  Shape os(4);
  for (int k = 0; k < 4; ++k) os[k] = shape[perm[k]];
  ASSERT_EQ(shape_of(out[0]), os);
  std::vector<T> got = values<T>(out[0]);
  int64_t stride[4] = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
  int64_t o = 0, mismatches = 0;
  for (int64_t a = 0; a < os[0]; ++a)
    for (int64_t b = 0; b < os[1]; ++b)
      for (int64_t c = 0; c < os[2]; ++c)
        for (int64_t d = 0; d < os[3]; ++d, ++o) {
          const int64_t idx[4] = {a, b, c, d};
          int64_t src = 0;
          for (int k = 0; k < 4; ++k) src += idx[k] * stride[perm[k]];
          if (got[o] != v[src]) ++mismatches;
        }
  EXPECT_EQ(mismatches, 0) << "perm " << perm[0] << perm[1] << perm[2] << perm[3];
}

TEST(TransposeKernels, LargeMatchesDefinition) {
  check_transpose_4d<float>(DataType::kFloat32, {2, 16, 40, 48}, {0, 2, 3, 1}, 2);  // NCHW→NHWC
  check_transpose_4d<float>(DataType::kFloat32, {2, 40, 48, 16}, {0, 3, 1, 2}, 2);  // NHWC→NCHW
  check_transpose_4d<uint16_t>(DataType::kFloat16, {3, 5, 64, 33}, {0, 1, 3, 2}, 2);
  check_transpose_4d<int8_t>(DataType::kInt8, {4, 9, 10, 11}, {3, 1, 0, 2}, 1);
  check_transpose_4d<int64_t>(DataType::kInt64, {2, 3, 50, 60}, {2, 0, 3, 1}, 2);
  check_transpose_4d<uint8_t>(DataType::kUInt8, {1, 2, 3, 4}, {0, 1, 2, 3}, 1);
}

TEST(TransposeKernels, DepthToSpaceAndSpaceToDepth) {
  std::vector<float> v(8);
  std::iota(v.begin(), v.end(), 0.0f);
  Tensor x = f32({1, 8, 1, 1}, v);
  // DCR: out[c][i][j] = x[(i*2 + j)*2 + c]; CRD: out[c][i][j] = x[c*4 + i*2 + j].
  auto out = run_ok(NodeBuilder("DepthToSpace", 1).i("blocksize", 2), {x}, 13);
  EXPECT_EQ(shape_of(out[0]), (Shape{1, 2, 2, 2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  out = run_ok(NodeBuilder("DepthToSpace", 1).i("blocksize", 2).s("mode", "CRD"), {x}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  // SpaceToDepth [1,2,2,2]: out channel (i*2 + j)*2 + c = x[c][i][j].
  out = run_ok(NodeBuilder("SpaceToDepth", 1).i("blocksize", 2), {f32({1, 2, 2, 2}, v)});
  EXPECT_EQ(shape_of(out[0]), (Shape{1, 8, 1, 1}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  run_err(NodeBuilder("DepthToSpace", 1).i("blocksize", 3), {x}, StatusCode::kInvalidArgument);
  run_err(NodeBuilder("SpaceToDepth", 1).i("blocksize", 2), {f32({1, 1, 3, 2}, {0, 1, 2, 3, 4, 5})},
          StatusCode::kInvalidArgument);
}

// --------------------------------------------------------------------------- concat_split.cc

TEST(ConcatSplitKernels, Concat) {
  Tensor a = f32({2, 1}, {1, 2});
  Tensor b = f32({2, 2}, {3, 4, 5, 6});
  auto out = run_ok(NodeBuilder("Concat", 2).i("axis", 1), {a, b});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 3}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 3, 4, 2, 5, 6));
  out = run_ok(NodeBuilder("Concat", 3).i("axis", -2), {b, f32({0, 2}, {}), b});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(3, 4, 5, 6, 3, 4, 5, 6));
  Tensor t = make<uint8_t>(DataType::kBool, {2}, {1, 0});
  out = run_ok(NodeBuilder("Concat", 2).i("axis", 0), {t, t});
  EXPECT_THAT(values<uint8_t>(out[0]), ElementsAre(1, 0, 1, 0));
  EXPECT_THAT(run_err(NodeBuilder("Concat", 2).i("axis", 0), {a, b}, StatusCode::kInvalidArgument),
              HasSubstr("incompatible"));
  run_err(NodeBuilder("Concat", 2).i("axis", 1), {a, i64({2, 1}, {1, 2})}, StatusCode::kInvalidArgument);
}

TEST(ConcatSplitKernels, SplitAllVersions) {
  Tensor x = f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto out = run_ok(NodeBuilder("Split", 1, 2).i("axis", 1).ints("split", {2, 3}), {x}, 11);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 1, 5, 6));
  EXPECT_THAT(values<float>(out[1]), ElementsAre(2, 3, 4, 7, 8, 9));
  out = run_ok(NodeBuilder("Split", 2, 3).i("axis", -1), {x, i64({3}, {1, 0, 4})}, 13);
  EXPECT_EQ(shape_of(out[1]), (Shape{2, 0}));
  EXPECT_THAT(values<float>(out[2]), ElementsAre(1, 2, 3, 4, 6, 7, 8, 9));
  out = run_ok(NodeBuilder("Split", 1, 2), {x}, 13);  // equal parts on axis 0
  EXPECT_THAT(values<float>(out[1]), ElementsAre(5, 6, 7, 8, 9));
  run_err(NodeBuilder("Split", 1, 2).i("axis", 1), {x}, StatusCode::kInvalidArgument, 13);
  EXPECT_THAT(run_err(NodeBuilder("Split", 2, 2).i("axis", 1), {x, i64({2}, {2, 2})}, StatusCode::kInvalidArgument, 13),
              HasSubstr("do not sum to 5"));
}

// -------------------------------------------------------------------------------- slice.cc

TEST(SliceKernels, SliceStepsAndClamping) {
  std::vector<float> v(10);
  std::iota(v.begin(), v.end(), 0.0f);
  Tensor x = f32({10}, v);
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  auto out = run_ok(NodeBuilder("Slice", 5), {x, i64({1}, {-1}), i64({1}, {kMin}), i64({1}, {0}), i64({1}, {-3})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(9, 6, 3, 0));
  out = run_ok(NodeBuilder("Slice", 5), {x, i64({1}, {2}), i64({1}, {kMax}), i64({1}, {0}), i64({1}, {kMax})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(2));
  out = run_ok(NodeBuilder("Slice", 3), {x, i64({1}, {20}), i64({1}, {30})});
  EXPECT_EQ(out[0].element_count(), 0);
  // 2-D, axes given, int32 starts/ends, negative axis.
  std::vector<float> m(12);
  std::iota(m.begin(), m.end(), 0.0f);
  out = run_ok(NodeBuilder("Slice", 5),
               {f32({3, 4}, m), i32({2}, {1, 3}), i32({2}, {3, 0}), i32({2}, {-2, -1}), i32({2}, {1, -2})});
  // rows [1,3) → 1,2 ; cols from 3 down to >0 step -2 → 3,1.
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(7, 5, 11, 9));
  // Opset 9: attributes.
  out = run_ok(NodeBuilder("Slice", 1).ints("starts", {0, 1}).ints("ends", {1, 100}), {f32({3, 4}, m)}, 9);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 2, 3));
  run_err(NodeBuilder("Slice", 5), {x, i64({1}, {0}), i64({1}, {5}), i64({1}, {0}), i64({1}, {0})},
          StatusCode::kInvalidArgument);
  run_err(NodeBuilder("Slice", 4), {x, i64({1}, {0}), i64({1}, {5}), i64({1}, {1})}, StatusCode::kInvalidArgument);
}

TEST(SliceKernels, CompressAndReverseSequence) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor cond = make<uint8_t>(DataType::kBool, {3}, {0, 1, 1});
  auto out = run_ok(NodeBuilder("Compress", 2).i("axis", 0), {x, cond});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(3, 4, 5, 6));
  Tensor cond5 = make<uint8_t>(DataType::kBool, {5}, {0, 1, 0, 0, 1});
  out = run_ok(NodeBuilder("Compress", 2), {x, cond5});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(2, 5));
  out = run_ok(NodeBuilder("Compress", 2).i("axis", -1), {x, make<uint8_t>(DataType::kBool, {1}, {1})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 3, 5));
  run_err(NodeBuilder("Compress", 2), {x, i64({1}, {1})}, StatusCode::kInvalidArgument);

  // Operators.md ReverseSequence example (time_axis 0, batch_axis 1).
  std::vector<float> v(16);
  std::iota(v.begin(), v.end(), 0.0f);
  out = run_ok(NodeBuilder("ReverseSequence", 2).i("time_axis", 0).i("batch_axis", 1),
               {f32({4, 4}, v), i64({4}, {4, 3, 2, 1})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15));
  out = run_ok(NodeBuilder("ReverseSequence", 2).i("time_axis", 1).i("batch_axis", 0),
               {f32({4, 4}, v), i64({4}, {1, 2, 3, 4})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12));
  EXPECT_THAT(run_err(NodeBuilder("ReverseSequence", 2), {f32({4, 4}, v), i64({4}, {1, 5, 1, 1})},
                      StatusCode::kInvalidArgument),
              HasSubstr("sequence length 5"));
}

// ------------------------------------------------------------------------------- gather.cc

TEST(GatherKernels, GatherAxesAndNegativeIndices) {
  Tensor data = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  auto out = run_ok(NodeBuilder("Gather", 2), {data, i64({2, 2}, {0, 1, 1, 2})});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 2, 2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f));
  out = run_ok(NodeBuilder("Gather", 2).i("axis", 1), {data, i32({1}, {-1})});
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 1}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1.2f, 3.4f, 5.7f));
  out = run_ok(NodeBuilder("Gather", 2), {data, i64({}, {-3})});  // scalar index
  EXPECT_EQ(shape_of(out[0]), (Shape{2}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1.0f, 1.2f));
  Tensor h = make<uint16_t>(DataType::kFloat16, {4}, {0x3C00, 0x4000, 0x4200, 0x4400});
  out = run_ok(NodeBuilder("Gather", 2), {h, i64({3}, {3, 0, 3})});
  EXPECT_THAT(values<uint16_t>(out[0]), ElementsAre(0x4400, 0x3C00, 0x4400));
}

TEST(GatherKernels, OutOfRangeIndexIsAnError) {
  Tensor data = f32({5}, {0, 1, 2, 3, 4});
  NodeBuilder g("Gather", 2);
  g.node.name = "g1";
  EXPECT_EQ(run_err(g, {data, i64({2}, {1, 7})}, StatusCode::kInvalidArgument),
            "Gather 'g1': index 7 is out of range for axis 0 of size 5 (input 'indices')");
  EXPECT_THAT(run_err(g, {data, i32({1}, {-6})}, StatusCode::kInvalidArgument), HasSubstr("index -6 is out of range"));
  EXPECT_THAT(run_err(g, {data, f32({1}, {0})}, StatusCode::kInvalidArgument), HasSubstr("must be int32 or int64"));
}

TEST(GatherKernels, GatherElementsAndGatherND) {
  // Operators.md GatherElements example 1.
  Tensor d = f32({2, 2}, {1, 2, 3, 4});
  auto out = run_ok(NodeBuilder("GatherElements", 2).i("axis", 1), {d, i64({2, 2}, {0, 0, 1, 0})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 1, 4, 3));
  out = run_ok(NodeBuilder("GatherElements", 2),
               {f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), i32({2, 3}, {1, 2, 0, 2, 0, -1})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(4, 8, 3, 7, 2, 9));
  EXPECT_THAT(
      run_err(NodeBuilder("GatherElements", 2).i("axis", 1), {d, i64({2, 1}, {0, 2})}, StatusCode::kInvalidArgument),
      HasSubstr("index 2 is out of range for axis 1 of size 2"));

  Tensor g = make<int32_t>(DataType::kInt32, {2, 2}, {0, 1, 2, 3});
  out = run_ok(NodeBuilder("GatherND", 2), {g, i64({2, 2}, {0, 0, 1, 1})});
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(0, 3));
  out = run_ok(NodeBuilder("GatherND", 2), {g, i64({2, 1}, {1, 0})});
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(2, 3, 0, 1));
  Tensor g3 = make<int32_t>(DataType::kInt32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  out = run_ok(NodeBuilder("GatherND", 2).i("batch_dims", 1), {g3, i64({2, 1}, {1, 0})}, 12);
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 2}));
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(run_err(NodeBuilder("GatherND", 2), {g, i64({1, 2}, {0, -3})}, StatusCode::kInvalidArgument),
              HasSubstr("index -3 is out of range for axis 1 of size 2"));
}

// ------------------------------------------------------------------------------ scatter.cc

TEST(ScatterKernels, ScatterElementsAndAlias) {
  // Operators.md ScatterElements example 1.
  Tensor data = f32({3, 3}, std::vector<float>(9, 0.0f));
  Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor upd = f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  const std::vector<float> want = {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f};
  EXPECT_EQ(values<float>(run_ok(NodeBuilder("ScatterElements", 3), {data, idx, upd})[0]), want);
  EXPECT_EQ(values<float>(run_ok(NodeBuilder("Scatter", 3), {data, idx, upd}, 9)[0]), want);
  // Reduction add with duplicate (negative) indices, opset 16.
  Tensor row = f32({1, 5}, {1, 2, 3, 4, 5});
  auto out = run_ok(NodeBuilder("ScatterElements", 3).i("axis", 1).s("reduction", "add"),
                    {row, i64({1, 2}, {1, -4}), f32({1, 2}, {1.5f, 2.25f})}, 16);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 5.75f, 3, 4, 5));
  out = run_ok(NodeBuilder("ScatterElements", 3).i("axis", 1).s("reduction", "mul"),
               {row, i64({1, 2}, {4, 4}), f32({1, 2}, {2, 3})}, 16);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 2, 3, 4, 30));
  EXPECT_THAT(run_err(NodeBuilder("ScatterElements", 3).i("axis", 1), {row, i64({1, 1}, {5}), f32({1, 1}, {0})},
                      StatusCode::kInvalidArgument),
              HasSubstr("index 5 is out of range for axis 1 of size 5"));
  run_err(NodeBuilder("ScatterElements", 3).s("reduction", "sum"), {row, i64({1, 1}, {0}), f32({1, 1}, {0})},
          StatusCode::kInvalidArgument, 16);
}

TEST(ScatterKernels, ScatterND) {
  // Operators.md ScatterND example 1.
  Tensor data = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto out = run_ok(NodeBuilder("ScatterND", 3), {data, i64({4, 1}, {4, 3, 1, 7}), f32({4}, {9, 10, 11, 12})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
  // Slices of a 2-D tensor, add reduction with a duplicate.
  Tensor m = make<int64_t>(DataType::kInt64, {3, 2}, {1, 1, 1, 1, 1, 1});
  out = run_ok(NodeBuilder("ScatterND", 3).s("reduction", "add"),
               {m, i64({2, 1}, {2, -1}), i64({2, 2}, {5, 6, 10, 20})}, 16);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(1, 1, 1, 1, 16, 27));
  out = run_ok(NodeBuilder("ScatterND", 3).s("reduction", "mul"), {m, i64({1, 2}, {0, 1}), i64({1}, {7})}, 16);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(1, 7, 1, 1, 1, 1));
  EXPECT_THAT(
      run_err(NodeBuilder("ScatterND", 3), {data, i64({1, 1}, {8}), f32({1}, {0})}, StatusCode::kInvalidArgument),
      HasSubstr("index 8 is out of range for axis 0 of size 8"));
  run_err(NodeBuilder("ScatterND", 3), {data, i64({1, 1}, {0}), f32({2}, {0, 0})}, StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------- pad_tile_expand.cc

TEST(PadTileExpandKernels, Expand) {
  Tensor x = f32({3, 1}, {1, 2, 3});
  auto out = run_ok(NodeBuilder("Expand", 2), {x, i64({3}, {2, 1, 4})});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 3, 4}));
  std::vector<float> want;
  for (int r = 0; r < 2; ++r)
    for (float v : {1.0f, 2.0f, 3.0f})
      for (int c = 0; c < 4; ++c) want.push_back(v);
  EXPECT_EQ(values<float>(out[0]), want);
  out = run_ok(NodeBuilder("Expand", 2), {x, i64({1}, {1})});  // shape smaller than input
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 1}));
  EXPECT_THAT(run_err(NodeBuilder("Expand", 2), {x, i64({2}, {-1, 1})}, StatusCode::kInvalidArgument),
              HasSubstr("negative extent -1"));
  run_err(NodeBuilder("Expand", 2), {x, i64({2}, {2, 3})}, StatusCode::kInvalidArgument);
  const int64_t big = int64_t{1} << 40;
  run_err(NodeBuilder("Expand", 2), {x, i64({3}, {big, big, 1})}, StatusCode::kOutOfMemory);
  run_err(NodeBuilder("Expand", 2), {x, i64({2}, {big, 1})}, StatusCode::kOutOfMemory);
}

TEST(PadTileExpandKernels, Tile) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto out = run_ok(NodeBuilder("Tile", 2), {x, i64({2}, {2, 3})});
  EXPECT_EQ(shape_of(out[0]), (Shape{4, 6}));
  EXPECT_THAT(values<float>(out[0]),
              ElementsAreArray({1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  out = run_ok(NodeBuilder("Tile", 2), {x, i64({2}, {0, 1})});
  EXPECT_EQ(shape_of(out[0]), (Shape{0, 2}));
  run_err(NodeBuilder("Tile", 2), {x, i64({2}, {-1, 1})}, StatusCode::kInvalidArgument);
  run_err(NodeBuilder("Tile", 2), {x, i64({1}, {2})}, StatusCode::kInvalidArgument);
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  run_err(NodeBuilder("Tile", 2), {x, i64({2}, {kMax, 1})}, StatusCode::kOutOfMemory);
  run_err(NodeBuilder("Tile", 2), {x, i64({2}, {int64_t{1} << 20, int64_t{1} << 20})}, StatusCode::kOutOfMemory);
}

TEST(PadTileExpandKernels, PadModes) {
  // Operators.md Pad examples (pads [0, 2, 0, 0]).
  Tensor x = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  Tensor pads = i64({4}, {0, 2, 0, 0});
  auto out = run_ok(NodeBuilder("Pad", 3), {x, pads, f32({}, {0.0f})}, 11);
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 4}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f));
  out = run_ok(NodeBuilder("Pad", 2).s("mode", "reflect"), {x, pads}, 13);
  EXPECT_THAT(values<float>(out[0]),
              ElementsAre(1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f));
  out = run_ok(NodeBuilder("Pad", 2).s("mode", "edge"), {x, pads}, 13);
  EXPECT_THAT(values<float>(out[0]),
              ElementsAre(1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f));
  // Opset 2: attributes; value converted to the data dtype; negative pads crop.
  Tensor xi = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  out = run_ok(NodeBuilder("Pad", 1).ints("pads", {1, -1, 0, 0}).f("value", 9.0f), {xi}, 7);
  EXPECT_EQ(shape_of(out[0]), (Shape{3, 2}));
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(9, 9, 2, 3, 5, 6));
  // Reflect on both sides of a length-3 axis, and wrap (Pad-19 semantics).
  Tensor r = f32({3}, {1, 2, 3});
  out = run_ok(NodeBuilder("Pad", 2).s("mode", "reflect"), {r, i64({2}, {2, 2})}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  out = run_ok(NodeBuilder("Pad", 2).s("mode", "wrap"), {r, i64({2}, {1, 2})}, 13);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(3, 1, 2, 3, 1, 2));
  run_err(NodeBuilder("Pad", 2), {r, i64({2}, {-2, -2})}, StatusCode::kInvalidArgument, 13);
  run_err(NodeBuilder("Pad", 2), {r, i64({1}, {1})}, StatusCode::kInvalidArgument, 13);
  run_err(NodeBuilder("Pad", 2), {r, i64({2}, {int64_t{1} << 40, 0})}, StatusCode::kOutOfMemory, 13);
  run_err(NodeBuilder("Pad", 2).s("mode", "mirror"), {r, i64({2}, {1, 1})}, StatusCode::kInvalidArgument, 13);
}

// ----------------------------------------------------------------------------- generate.cc

TEST(GenerateKernels, ConstantAllValueKinds) {
  auto out = run_ok(NodeBuilder("Constant", 0).ints("value_ints", {3, -1}), {});
  EXPECT_EQ(out[0].dtype(), DataType::kInt64);
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(3, -1));
  out = run_ok(NodeBuilder("Constant", 0).f("value_float", 2.5f), {});
  EXPECT_EQ(out[0].rank(), 0);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(2.5f));
  out = run_ok(NodeBuilder("Constant", 0).i("value_int", 7), {});
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(7));
  NodeBuilder fl("Constant", 0);
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloats;
  a.floats = {1.5f, 2.5f};
  fl.node.attributes["value_floats"] = a;
  EXPECT_THAT(values<float>(run_ok(fl, {})[0]), ElementsAre(1.5f, 2.5f));
  out = run_ok(NodeBuilder("Constant", 0).t("value", i32({2, 1}, {4, 5})), {});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 1}));
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(4, 5));
  run_err(NodeBuilder("Constant", 0).s("value_string", "hi"), {}, StatusCode::kUnsupported);
  run_err(NodeBuilder("Constant", 0), {}, StatusCode::kInvalidModel);
}

TEST(GenerateKernels, ConstantOfShape) {
  auto out = run_ok(NodeBuilder("ConstantOfShape", 1), {i64({2}, {2, 3})});
  EXPECT_EQ(out[0].dtype(), DataType::kFloat32);
  EXPECT_EQ(values<float>(out[0]), std::vector<float>(6, 0.0f));
  out = run_ok(NodeBuilder("ConstantOfShape", 1).t("value", i32({1}, {7})), {i64({1}, {3})});
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(7, 7, 7));
  out = run_ok(NodeBuilder("ConstantOfShape", 1), {i64({0}, {})});
  EXPECT_EQ(out[0].rank(), 0);
  out = run_ok(NodeBuilder("ConstantOfShape", 1), {i64({2}, {0, 5})});
  EXPECT_EQ(out[0].element_count(), 0);
  EXPECT_THAT(run_err(NodeBuilder("ConstantOfShape", 1), {i64({2}, {2, -3})}, StatusCode::kInvalidArgument),
              HasSubstr("negative extent -3 at axis 1"));
  run_err(NodeBuilder("ConstantOfShape", 1), {i64({3}, {1 << 30, 1 << 30, 1 << 30})}, StatusCode::kOutOfMemory);
  run_err(NodeBuilder("ConstantOfShape", 1), {i64({1}, {int64_t{1} << 40})}, StatusCode::kOutOfMemory);
}

TEST(GenerateKernels, Range) {
  auto out = run_ok(NodeBuilder("Range", 3), {i32({}, {3}), i32({}, {9}), i32({}, {3})});
  EXPECT_EQ(out[0].dtype(), DataType::kInt32);
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(3, 6));
  out = run_ok(NodeBuilder("Range", 3), {i32({}, {10}), i32({}, {6}), i32({}, {-3})});
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(10, 7));
  out = run_ok(NodeBuilder("Range", 3), {f32({}, {10}), f32({}, {4}), f32({}, {-2.5f})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(10.0f, 7.5f, 5.0f));
  out = run_ok(NodeBuilder("Range", 3), {i64({}, {5}), i64({}, {1}), i64({}, {2})});
  EXPECT_EQ(out[0].element_count(), 0);
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  out = run_ok(NodeBuilder("Range", 3), {i64({}, {kMin}), i64({}, {kMax}), i64({}, {kMax})});
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(kMin, -1, kMax - 1));
  EXPECT_THAT(
      run_err(NodeBuilder("Range", 3), {i64({}, {0}), i64({}, {5}), i64({}, {0})}, StatusCode::kInvalidArgument),
      HasSubstr("'delta' is 0"));
  run_err(NodeBuilder("Range", 3), {i64({}, {0}), i64({}, {kMax}), i64({}, {1})}, StatusCode::kOutOfMemory);
  run_err(NodeBuilder("Range", 3), {f32({}, {0}), f32({}, {1e30f}), f32({}, {1})}, StatusCode::kOutOfMemory);
  run_err(NodeBuilder("Range", 3), {i64({}, {0}), i32({}, {5}), i64({}, {1})}, StatusCode::kInvalidArgument);
}

TEST(GenerateKernels, EyeLikeAndOneHot) {
  auto out = run_ok(NodeBuilder("EyeLike", 1).i("k", 1).i("dtype", 6), {f32({3, 4}, std::vector<float>(12, 5.0f))});
  EXPECT_EQ(out[0].dtype(), DataType::kInt32);
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1));
  out = run_ok(NodeBuilder("EyeLike", 1).i("k", -1), {f32({2, 2}, {9, 9, 9, 9})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 0, 1, 0));

  // Out-of-range index 5 gives an all-off row (Operators.md OneHot).
  Tensor idx = i64({4}, {0, 2, -1, 5});
  out = run_ok(NodeBuilder("OneHot", 3), {idx, f32({}, {3}), f32({2}, {0, 1})});
  EXPECT_EQ(shape_of(out[0]), (Shape{4, 3}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0));
  out = run_ok(NodeBuilder("OneHot", 3).i("axis", 0), {f32({2}, {1.0f, 0.0f}), i64({1}, {2}), i32({2}, {-1, 8})});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 2}));
  EXPECT_THAT(values<int32_t>(out[0]), ElementsAre(-1, 8, 8, -1));
  run_err(NodeBuilder("OneHot", 3), {idx, i64({}, {0}), f32({2}, {0, 1})}, StatusCode::kInvalidArgument);
  run_err(NodeBuilder("OneHot", 3), {idx, i64({}, {3}), f32({3}, {0, 1, 2})}, StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------------- trilu_cumsum.cc

TEST(TriluCumSumKernels, Trilu) {
  std::vector<float> v(12);
  std::iota(v.begin(), v.end(), 1.0f);
  Tensor x = f32({3, 4}, v);
  auto out = run_ok(NodeBuilder("Trilu", 2), {x, i64({}, {1})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12));
  out = run_ok(NodeBuilder("Trilu", 2).i("upper", 0), {x, i64({}, {-1})});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0));
  out = run_ok(NodeBuilder("Trilu", 1).i("upper", 0), {x});
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0));
  out = run_ok(NodeBuilder("Trilu", 2), {x, i64({}, {std::numeric_limits<int64_t>::min()})});
  EXPECT_EQ(values<float>(out[0]), v);
  run_err(NodeBuilder("Trilu", 1), {f32({3}, {1, 2, 3})}, StatusCode::kInvalidArgument);
}

TEST(TriluCumSumKernels, CumSum) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  Tensor axis = i32({}, {0});
  EXPECT_THAT(values<float>(run_ok(NodeBuilder("CumSum", 2), {x, axis})[0]), ElementsAre(1, 3, 6, 10, 15));
  EXPECT_THAT(values<float>(run_ok(NodeBuilder("CumSum", 2).i("exclusive", 1), {x, axis})[0]),
              ElementsAre(0, 1, 3, 6, 10));
  EXPECT_THAT(values<float>(run_ok(NodeBuilder("CumSum", 2).i("reverse", 1), {x, axis})[0]),
              ElementsAre(15, 14, 12, 9, 5));
  EXPECT_THAT(values<float>(run_ok(NodeBuilder("CumSum", 2).i("reverse", 1).i("exclusive", 1), {x, axis})[0]),
              ElementsAre(14, 12, 9, 5, 0));
  Tensor m = make<int64_t>(DataType::kInt64, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(values<int64_t>(run_ok(NodeBuilder("CumSum", 2), {m, i64({}, {-1})})[0]), ElementsAre(1, 3, 6, 4, 9, 15));
  EXPECT_THAT(values<int64_t>(run_ok(NodeBuilder("CumSum", 2), {m, i64({1}, {0})})[0]), ElementsAre(1, 2, 3, 5, 7, 9));
  Tensor h = make<uint16_t>(DataType::kFloat16, {3}, {0x3C00, 0x3C00, 0x4000});  // 1, 1, 2
  EXPECT_THAT(values<uint16_t>(run_ok(NodeBuilder("CumSum", 2), {h, axis})[0]),
              ElementsAre(0x3C00, 0x4000, 0x4400));  // 1, 2, 4
  run_err(NodeBuilder("CumSum", 2), {m, i64({}, {2})}, StatusCode::kInvalidArgument);
}

// ----------------------------------------------------------------------- nonzero_unique.cc

TEST(NonZeroUniqueKernels, NonZero) {
  Tensor x = make<uint8_t>(DataType::kBool, {2, 2}, {1, 0, 1, 1});
  auto out = run_ok(NodeBuilder("NonZero", 1), {x});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 3}));
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(0, 1, 1, 0, 0, 1));
  out = run_ok(NodeBuilder("NonZero", 1), {f32({4}, {0.0f, -0.0f, 3.0f, 0.0f})});
  EXPECT_EQ(shape_of(out[0]), (Shape{1, 1}));
  EXPECT_THAT(values<int64_t>(out[0]), ElementsAre(2));
  out = run_ok(NodeBuilder("NonZero", 1), {f32({2, 0}, {})});
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 0}));
}

TEST(NonZeroUniqueKernels, Unique) {
  // Operators.md Unique examples.
  Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  auto out = run_ok(NodeBuilder("Unique", 1, 4), {x}, 11);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(values<int64_t>(out[1]), ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(values<int64_t>(out[2]), ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(values<int64_t>(out[3]), ElementsAre(2, 1, 2, 1));
  out = run_ok(NodeBuilder("Unique", 1, 4).i("sorted", 0), {x}, 11);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(values<int64_t>(out[1]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(values<int64_t>(out[2]), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(values<int64_t>(out[3]), ElementsAre(1, 2, 2, 1));
  Tensor m = f32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  out = run_ok(NodeBuilder("Unique", 1, 4).i("axis", 0), {m}, 11);
  EXPECT_EQ(shape_of(out[0]), (Shape{2, 3}));
  EXPECT_THAT(values<float>(out[0]), ElementsAre(1, 0, 0, 2, 3, 4));
  EXPECT_THAT(values<int64_t>(out[1]), ElementsAre(0, 2));
  EXPECT_THAT(values<int64_t>(out[2]), ElementsAre(0, 0, 1));
  EXPECT_THAT(values<int64_t>(out[3]), ElementsAre(2, 1));
  // Slices along axis 1 compared lexicographically: columns [1,1,2], [0,0,3], [0,0,4].
  out = run_ok(NodeBuilder("Unique", 1, 1).i("axis", 1), {m}, 11);
  EXPECT_THAT(values<float>(out[0]), ElementsAre(0, 0, 1, 0, 0, 1, 3, 4, 2));
}

}  // namespace kernels_shape_test
}  // namespace edgemm::shapetest
