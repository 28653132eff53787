/// \file onnx_next_schemas.cc
/// The opset 18–21 schemas of ai.onnx ops whose signature or attributes changed after opset 17
/// (onnx_next_schemas.h), each a copy of libonnx's opset-17 schema plus what ONNX added:
/// - Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}-18: axes as an optional input
///   and noop_with_empty_axes, as ReduceSum-13; ReduceMax/ReduceMin-20 add bool.
/// - Split-18: num_outputs (the last chunk may be smaller).
/// - Pad-18/19: the optional `axes` input; mode "wrap" (19).
/// - Resize-18/19: antialias, axes, keep_aspect_ratio_policy; "half_pixel_symmetric" (19).
/// - LpPool-18: ceil_mode, dilations. AveragePool-19: dilations.
/// - Cast-19, CastLike-19: saturate. QuantizeLinear-19/21, DequantizeLinear-19/21: saturate,
///   block_size (21), output_dtype (QuantizeLinear-21).
/// - GridSample-20: N-D, modes "linear" / "cubic". DFT-20: axis as an optional input.

#include "ir/onnx_next_schemas.h"

#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace edgemm::ir {
namespace next_schemas {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

onnx::OpSchema clone(const std::string& base, int base_version, const std::string& name, int since,
                     const std::string& type_param, const std::vector<std::string>& extra_types) {
  const OpSchema* b = onnx::OpSchemaRegistry::Schema(base, base_version, "");
  if (b == nullptr) throw std::logic_error("libonnx has no schema " + base + "-" + std::to_string(base_version));
  OpSchema s = fresh(name, since);
  for (const auto& [key, attr] : b->attributes()) s.Attr(attr);
  int i = 0;
  for (const auto& p : b->inputs()) {
    s.Input(i++, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(), p.GetMinArity(),
            p.GetDifferentiationCategory());
  }
  i = 0;
  for (const auto& p : b->outputs()) {
    s.Output(i++, p.GetName(), p.GetDescription(), p.GetTypeStr(), p.GetOption(), p.GetIsHomogeneous(), p.GetMinArity(),
             p.GetDifferentiationCategory());
  }
  for (const auto& c : b->typeConstraintParams()) {
    std::vector<std::string> types = c.allowed_type_strs;
    if (c.type_param_str == type_param) {
      for (const auto& t : extra_types) {
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
      }
    }
    s.TypeConstraint(c.type_param_str, types, c.description);
  }
  s.TypeAndShapeInferenceFunction(b->GetTypeAndShapeInferenceFunction());
  s.PartialDataPropagationFunction(b->GetDataPropagationFunction());
  return s;
}

onnx::OpSchema fresh(const std::string& name, int since) {
  OpSchema s;
  s.SetName(name).SetDomain(kNextDomain).SinceVersion(since);
  return s;
}

void add(onnx::OpSchema schema) { onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema); }

bool constant_ints(InferenceContext& ctx, size_t input, std::vector<int64_t>& values) {
  if (input >= ctx.getNumInputs()) return false;
  const onnx::TensorProto* data = ctx.getInputData(input);
  if (data == nullptr) return false;
  if (data->data_type() == onnx::TensorProto::INT64) {
    values = onnx::ParseData<int64_t>(data);
  } else if (data->data_type() == onnx::TensorProto::INT32) {
    const auto v = onnx::ParseData<int32_t>(data);
    values.assign(v.begin(), v.end());
  } else {
    return false;
  }
  return true;
}

const std::vector<std::string>& float_types() {
  static const std::vector<std::string> types{"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
  return types;
}

const std::vector<std::string>& integer_types() {
  static const std::vector<std::string> types{"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
                                              "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};
  return types;
}

namespace {

/// Whether optional input `n` is present (named) on the node.
bool has_input(InferenceContext& ctx, size_t n) { return n < ctx.getNumInputs() && ctx.getInputType(n) != nullptr; }

/// Output `out` gets input 0's rank with every dimension unknown except those `keep` marks.
void same_rank_output(InferenceContext& ctx, size_t out, const std::vector<bool>& keep) {
  const auto& in = onnx::getInputShape(ctx, 0);
  auto* shape = onnx::getOutputShape(ctx, out);
  shape->clear_dim();
  for (int d = 0; d < in.dim_size(); ++d) {
    auto* dim = shape->add_dim();
    if (d < static_cast<int>(keep.size()) && keep[d]) *dim = in.dim(d);
  }
}

/// `axis` in [-rank, rank) made non-negative; fails shape inference naming `what` otherwise.
int64_t normalize_axis(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) fail_shape_inference(what, ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// ---- Reduce*-18 ---------------------------------------------------------------------------

void register_reductions() {
  const std::vector<std::string> eight_bit{"tensor(int8)", "tensor(uint8)"};
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    const bool min_max = std::string(op) == "ReduceMax" || std::string(op) == "ReduceMin";
    // ReduceSum-13 is the opset-18 signature of every reduction: data, optional axes input.
    add(clone("ReduceSum", 13, op, 18, "T", min_max ? eight_bit : std::vector<std::string>{}));
    if (min_max) add(clone("ReduceSum", 13, op, 20, "T", {"tensor(int8)", "tensor(uint8)", "tensor(bool)"}));
  }
}

// ---- Split-18 -----------------------------------------------------------------------------

/// Split-18: sizes from the constant `split` input, else num_outputs chunks of ceil(dim / n)
/// with a smaller last one.
void infer_split(InferenceContext& ctx) {
  const size_t n = ctx.getNumOutputs();
  for (size_t i = 0; i < n; ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  const AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  const bool has_split = has_input(ctx, 1);
  if (has_split && num_outputs != nullptr) {
    fail_shape_inference("Split: give either the 'split' input or the 'num_outputs' attribute, not both");
  }
  if (num_outputs != nullptr && num_outputs->i() != static_cast<int64_t>(n)) {
    fail_shape_inference("Split: num_outputs is ", num_outputs->i(), " but the node has ", n, " outputs");
  }
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const int64_t axis = normalize_axis(onnx::getAttribute(ctx, "axis", 0), rank, "Split");
  std::vector<bool> keep(rank, true);
  keep[axis] = false;
  std::vector<int64_t> sizes;
  const bool known = in.dim(static_cast<int>(axis)).has_dim_value();
  if (has_split) {
    if (!constant_ints(ctx, 1, sizes)) sizes.clear();
    if (!sizes.empty() && sizes.size() != n)
      fail_shape_inference("Split: 'split' has ", sizes.size(), " sizes for ", n, " outputs");
  } else if (known) {
    const int64_t dim = in.dim(static_cast<int>(axis)).dim_value();
    const int64_t chunk = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
    const int64_t last = dim - chunk * static_cast<int64_t>(n - 1);
    if (last < 0) fail_shape_inference("Split: a dimension of ", dim, " cannot be cut into ", n, " chunks of ", chunk);
    sizes.assign(n - 1, chunk);
    sizes.push_back(last);
  }
  for (size_t i = 0; i < n; ++i) {
    same_rank_output(ctx, i, keep);
    if (!sizes.empty()) onnx::getOutputShape(ctx, i)->mutable_dim(static_cast<int>(axis))->set_dim_value(sizes[i]);
  }
}

// ---- Pad-18/19 ----------------------------------------------------------------------------

/// Pad-18: pads has 2·len(axes) values (begins, then ends) for the constant `axes` input, or
/// for every axis without it.
void infer_pad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  std::vector<bool> none(rank, false);
  same_rank_output(ctx, 0, none);
  std::vector<int64_t> pads, axes;
  if (!constant_ints(ctx, 1, pads)) return;
  if (has_input(ctx, 3)) {
    if (!constant_ints(ctx, 3, axes)) return;
  } else {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    fail_shape_inference("Pad: 'pads' has ", pads.size(), " values for ", axes.size(), " axes (2 per axis)");
  }
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], rank, "Pad");
    begin[a] = pads[i];
    end[a] = pads[i + axes.size()];
  }
  auto* out = onnx::getOutputShape(ctx, 0);
  for (int d = 0; d < rank; ++d) {
    if (!in.dim(d).has_dim_value()) {
      if (begin[d] == 0 && end[d] == 0) *out->mutable_dim(d) = in.dim(d);
      continue;
    }
    const int64_t size = in.dim(d).dim_value() + begin[d] + end[d];
    if (size < 0) fail_shape_inference("Pad: axis ", d, " of size ", in.dim(d).dim_value(), " padded to ", size);
    out->mutable_dim(d)->set_dim_value(size);
  }
}

void register_pad() {
  for (int since : {18, 19}) {
    OpSchema s = clone("Pad", 13, "Pad", since);
    s.Input(3, "axes", "axes the pads apply to (negative counts from the back)", "Tind", OpSchema::Optional);
    s.TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "axes type");
    s.TypeAndShapeInferenceFunction(infer_pad);
    add(std::move(s));
  }
}

// ---- Resize-18/19 -------------------------------------------------------------------------

/// Resize-18/19 with `axes` or keep_aspect_ratio_policy: the listed axes' output extents when
/// `sizes` or `scales` is constant and those input extents are known (floor(in · scale); with
/// not_larger / not_smaller one scale, min or max of sizes / in, rounded half up), the other
/// axes as the input's.
void infer_resize_axes(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes)) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = normalize_axis(a, rank, "Resize");
  auto* out = onnx::getOutputShape(ctx, 0);
  *out = in;
  for (int64_t a : axes) out->mutable_dim(static_cast<int>(a))->Clear();
  const std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy", std::string("stretch"));
  std::vector<int64_t> sizes;
  std::vector<float> scales;
  const bool have_sizes = has_input(ctx, 3) && constant_ints(ctx, 3, sizes) && sizes.size() == axes.size();
  const onnx::TensorProto* scale_data = has_input(ctx, 2) ? ctx.getInputData(2) : nullptr;
  if (!have_sizes && scale_data != nullptr && scale_data->data_type() == onnx::TensorProto::FLOAT) {
    scales = onnx::ParseData<float>(scale_data);
  }
  if (have_sizes && policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(sizes[i]);
    return;
  }
  std::vector<int64_t> extent;
  for (int64_t a : axes) {
    if (!in.dim(static_cast<int>(a)).has_dim_value() || in.dim(static_cast<int>(a)).dim_value() <= 0) return;
    extent.push_back(in.dim(static_cast<int>(a)).dim_value());
  }
  if (have_sizes) {
    double common = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const double r = static_cast<double>(sizes[i]) / static_cast<double>(extent[i]);
      if (i == 0 || (policy == "not_larger" ? r < common : r > common)) common = r;
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      out->mutable_dim(static_cast<int>(axes[i]))
          ->set_dim_value(static_cast<int64_t>(std::floor(static_cast<double>(extent[i]) * common + 0.5)));
    }
  } else if (scales.size() == axes.size() && onnx::getAttribute(ctx, "coordinate_transformation_mode",
                                                                std::string("half_pixel")) != "tf_crop_and_resize") {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(scales[i] > 0)) fail_shape_inference("Resize: scale ", scales[i], " must be positive");
      out->mutable_dim(static_cast<int>(axes[i]))
          ->set_dim_value(static_cast<int64_t>(std::floor(static_cast<double>(extent[i]) * scales[i])));
    }
  }
}

void register_resize() {
  const auto base = onnx::OpSchemaRegistry::Schema("Resize", 13, "")->GetTypeAndShapeInferenceFunction();
  for (int since : {18, 19}) {
    OpSchema s = clone("Resize", 13, "Resize", since);
    s.Attr("antialias", "1: an antialiasing filter when downscaling (linear, cubic)", AttributeProto::INT,
           static_cast<int64_t>(0));
    s.Attr("axes", "axes that scales / sizes apply to", AttributeProto::INTS, false);
    s.Attr("keep_aspect_ratio_policy", "stretch | not_larger | not_smaller", AttributeProto::STRING,
           std::string("stretch"));
    s.TypeAndShapeInferenceFunction([base](InferenceContext& ctx) {
      if (ctx.getAttribute("axes") == nullptr &&
          onnx::getAttribute(ctx, "keep_aspect_ratio_policy", std::string("stretch")) == "stretch") {
        base(ctx);  // Resize-13's rule: every axis from scales or sizes
        return;
      }
      infer_resize_axes(ctx);
    });
    add(std::move(s));
  }
}

// ---- LpPool-18, AveragePool-19 ------------------------------------------------------------

/// Output size of one pooled axis (Operators.md, AveragePool): explicit pads, floor or ceil.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                    const std::string& auto_pad, bool ceil_mode) {
  const int64_t effective = (kernel - 1) * dilation + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + stride - 1) / stride;
  if (auto_pad == "VALID") return (in - effective) / stride + 1;
  const int64_t span = in + pad_begin + pad_end - effective;
  if (span < 0)
    fail_shape_inference("pool: the window of ", effective, " is larger than the padded input of ",
                         in + pad_begin + pad_end);
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

void infer_pool(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  std::vector<int64_t> kernel, strides, dilations, pads;
  onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel);
  const int spatial = rank - 2;
  if (spatial < 1 || static_cast<int>(kernel.size()) != spatial) {
    fail_shape_inference("pool: kernel_shape has ", kernel.size(), " values for an input of rank ", rank);
  }
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides)) strides.assign(spatial, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations)) dilations.assign(spatial, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads)) pads.assign(2 * spatial, 0);
  if (static_cast<int>(strides.size()) != spatial || static_cast<int>(dilations.size()) != spatial ||
      static_cast<int>(pads.size()) != 2 * spatial) {
    fail_shape_inference("pool: strides, dilations or pads do not match kernel_shape's ", spatial, " axes");
  }
  for (int i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) {
      fail_shape_inference("pool: kernel_shape, strides and dilations must be positive");
    }
  }
  const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", 0) != 0;
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = in.dim(0);
  *out->add_dim() = in.dim(1);
  for (int i = 0; i < spatial; ++i) {
    auto* dim = out->add_dim();
    if (!in.dim(i + 2).has_dim_value()) continue;
    dim->set_dim_value(pooled_size(in.dim(i + 2).dim_value(), kernel[i], strides[i], dilations[i], pads[i],
                                   pads[i + spatial], auto_pad, ceil_mode));
  }
}

void register_pools() {
  OpSchema lp = clone("LpPool", 11, "LpPool", 18);
  lp.Attr("ceil_mode", "1: ceil instead of floor for the output size", AttributeProto::INT, static_cast<int64_t>(0));
  lp.Attr("dilations", "dilation of each spatial axis", AttributeProto::INTS, false);
  lp.TypeAndShapeInferenceFunction(infer_pool);
  add(std::move(lp));
  OpSchema average = clone("AveragePool", 11, "AveragePool", 19);
  average.Attr("dilations", "dilation of each spatial axis", AttributeProto::INTS, false);
  average.TypeAndShapeInferenceFunction(infer_pool);
  add(std::move(average));
}

// ---- Cast, CastLike, QuantizeLinear, DequantizeLinear ------------------------------------

void register_casts_and_qdq() {
  const char* saturate_doc = "float8 targets: 1 clamps to the largest finite value";
  OpSchema cast = clone("Cast", 13, "Cast", 19);
  cast.Attr("saturate", saturate_doc, AttributeProto::INT, static_cast<int64_t>(1));
  add(std::move(cast));
  OpSchema cast_like = clone("CastLike", 15, "CastLike", 19);
  cast_like.Attr("saturate", saturate_doc, AttributeProto::INT, static_cast<int64_t>(1));
  add(std::move(cast_like));

  const std::vector<std::string> half{"tensor(float16)", "tensor(bfloat16)"};
  for (int since : {19, 21}) {
    OpSchema q = clone("QuantizeLinear", 13, "QuantizeLinear", since, "T1", half);
    q.Attr("saturate", saturate_doc, AttributeProto::INT, static_cast<int64_t>(1));
    OpSchema dq = clone("DequantizeLinear", 13, "DequantizeLinear", since);
    if (since == 21) {
      const char* block_doc = "> 0: blocked quantization along axis, blocks of this many elements";
      q.Attr("block_size", block_doc, AttributeProto::INT, static_cast<int64_t>(0));
      q.Attr("output_dtype", "output type when there is no zero point (0: uint8)", AttributeProto::INT,
             static_cast<int64_t>(0));
      dq.Attr("block_size", block_doc, AttributeProto::INT, static_cast<int64_t>(0));
      const auto base = onnx::OpSchemaRegistry::Schema("QuantizeLinear", 13, "")->GetTypeAndShapeInferenceFunction();
      q.TypeAndShapeInferenceFunction([base](InferenceContext& ctx) {
        base(ctx);
        const int64_t dtype = onnx::getAttribute(ctx, "output_dtype", 0);
        if (dtype != 0 && !has_input(ctx, 2)) onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype));
      });
    }
    add(std::move(q));
    add(std::move(dq));
  }
}

// ---- GridSample-20, DFT-20 ----------------------------------------------------------------

/// GridSample-20: X [N, C, D1..Dr], grid [N, H1..Hr, r] -> [N, C, H1..Hr].
void infer_grid_sample(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& grid = onnx::getInputShape(ctx, 1);
  if (x.dim_size() < 3 || grid.dim_size() != x.dim_size()) {
    fail_shape_inference("GridSample: X of rank ", x.dim_size(), " needs a grid of the same rank, got ",
                         grid.dim_size());
  }
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = x.dim(0);
  *out->add_dim() = x.dim(1);
  for (int d = 1; d + 1 < grid.dim_size(); ++d) *out->add_dim() = grid.dim(d);
}

/// DFT-20: input [..., 1 | 2], optional dft_length and axis inputs (axis default -2) -> the same
/// rank with a last axis of 2; the transformed axis has dft_length (or its size), halved plus
/// one when onesided.
void infer_dft(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  if (rank < 2) fail_shape_inference("DFT: the input needs rank >= 2, got ", rank);
  std::vector<bool> keep(rank, true);
  std::vector<int64_t> axis_value{-2};
  if (has_input(ctx, 2) && !constant_ints(ctx, 2, axis_value)) {
    std::vector<bool> none(rank, false);
    same_rank_output(ctx, 0, none);
    return;
  }
  if (axis_value.size() != 1) fail_shape_inference("DFT: 'axis' must be a scalar");
  const int64_t axis = normalize_axis(axis_value[0], rank, "DFT");
  if (axis == rank - 1) fail_shape_inference("DFT: the axis cannot be the last (real/imaginary) axis");
  keep[axis] = false;
  same_rank_output(ctx, 0, keep);
  auto* out = onnx::getOutputShape(ctx, 0);
  out->mutable_dim(rank - 1)->set_dim_value(2);
  std::vector<int64_t> length;
  int64_t n = -1;
  if (has_input(ctx, 1)) {
    if (constant_ints(ctx, 1, length) && length.size() == 1) n = length[0];
  } else if (in.dim(static_cast<int>(axis)).has_dim_value()) {
    n = in.dim(static_cast<int>(axis)).dim_value();
  }
  if (n < 0) return;
  const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
  out->mutable_dim(static_cast<int>(axis))->set_dim_value(onesided ? n / 2 + 1 : n);
}

void register_signal_and_sampling() {
  OpSchema grid = clone("GridSample", 16, "GridSample", 20);
  grid.TypeAndShapeInferenceFunction(infer_grid_sample);
  add(std::move(grid));

  OpSchema dft = fresh("DFT", 20);
  dft.Attr("inverse", "1: the inverse transform", AttributeProto::INT, static_cast<int64_t>(0));
  dft.Attr("onesided", "1: only the first n/2 + 1 frequencies", AttributeProto::INT, static_cast<int64_t>(0));
  dft.Input(0, "input", "[..., n, ..., 1 | 2] real or complex", "T1");
  dft.Input(1, "dft_length", "length of the transform (scalar)", "T2", OpSchema::Optional);
  dft.Input(2, "axis", "axis transformed (scalar, default -2)", "tensor(int64)", OpSchema::Optional);
  dft.Output(0, "output", "[..., m, ..., 2] complex", "T1");
  dft.TypeConstraint("T1", float_types(), "signal type");
  dft.TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "length type");
  dft.TypeAndShapeInferenceFunction(infer_dft);
  add(std::move(dft));
}

}  // namespace
}  // namespace next_schemas

void register_onnx_next_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(kNextDomain, 1, kMaxImportOpset);
    next_schemas::register_reductions();
    onnx::OpSchema split = next_schemas::clone("Split", 13, "Split", 18);
    split.Attr("num_outputs", "number of equal chunks (the last may be smaller)", onnx::AttributeProto::INT, false);
    split.TypeAndShapeInferenceFunction(next_schemas::infer_split);
    next_schemas::add(std::move(split));
    next_schemas::register_pad();
    next_schemas::register_resize();
    next_schemas::register_pools();
    next_schemas::register_casts_and_qdq();
    next_schemas::register_signal_and_sampling();
    next_schemas::register_new_ops();
  });
}

}  // namespace edgemm::ir
