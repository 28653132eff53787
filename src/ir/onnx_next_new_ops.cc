/// \file onnx_next_new_ops.cc
/// Schemas of the ai.onnx ops new in opsets 18–20 that edgemm runs (onnx_next_schemas.h;
/// ONNX Operators.md): BitwiseAnd/Or/Xor/Not-18, Mish-18, Gelu-20, GroupNormalization-18/21,
/// Col2Im-18, CenterCropPad-18, AffineGrid-20, DeformConv-19. Their shape inference follows
/// the spec's output shapes; a dimension it cannot know (a non-constant shape input) is left
/// unknown.

#include <onnx/defs/shape_inference.h>

#include "ir/onnx_next_schemas.h"

namespace edgemm::ir::next_schemas {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

void infer_broadcast(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasNInputShapes(ctx, 2)) {
    onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
                                               *onnx::getOutputShape(ctx, 0));
  }
}

void register_bitwise_and_activations() {
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    OpSchema s = fresh(op, 18);
    s.Input(0, "A", "first operand", "T").Input(1, "B", "second operand (numpy broadcasting)", "T");
    s.Output(0, "C", "result", "T").TypeConstraint("T", integer_types(), "integer types");
    s.TypeAndShapeInferenceFunction(infer_broadcast);
    add(std::move(s));
  }
  OpSchema bitwise_not = fresh("BitwiseNot", 18);
  bitwise_not.Input(0, "X", "input", "T")
      .Output(0, "Y", "~X", "T")
      .TypeConstraint("T", integer_types(), "integer types");
  bitwise_not.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  add(std::move(bitwise_not));

  OpSchema mish = fresh("Mish", 18);
  mish.Input(0, "X", "input", "T").Output(0, "Y", "X * tanh(softplus(X))", "T");
  mish.TypeConstraint("T", float_types(), "float types");
  mish.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  add(std::move(mish));

  OpSchema gelu = fresh("Gelu", 20);
  gelu.Attr("approximate", "none | tanh", AttributeProto::STRING, std::string("none"));
  gelu.Input(0, "X", "input", "T").Output(0, "Y", "Gelu(X)", "T");
  gelu.TypeConstraint("T", float_types(), "float types");
  gelu.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  add(std::move(gelu));
}

void register_group_normalization() {
  for (int since : {18, 21}) {
    OpSchema s = fresh("GroupNormalization", since);
    s.Attr("epsilon", "added to the variance", AttributeProto::FLOAT, 1e-5f);
    s.Attr("num_groups", "groups the channels are divided into", AttributeProto::INT, true);
    if (since == 21) {
      s.Attr("stash_type", "type of the mean and variance (1: float)", AttributeProto::INT, static_cast<int64_t>(1));
    }
    const char* per = since == 18 ? "[num_groups]" : "[C]";
    s.Input(0, "X", "[N, C, D1, ...]", "T").Input(1, "scale", per, "T").Input(2, "bias", per, "T");
    s.Output(0, "Y", "the shape of X", "T").TypeConstraint("T", float_types(), "float types");
    s.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
    add(std::move(s));
  }
}

/// Col2Im-18: input [N, C·prod(block_shape), L] -> [N, C, *image_shape].
void infer_col2im(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> image, block;
  const bool image_known = constant_ints(ctx, 1, image);
  const bool block_known = constant_ints(ctx, 2, block);
  if (image_known && block_known && image.size() != block.size()) {
    fail_shape_inference("Col2Im: image_shape has ", image.size(), " values but block_shape has ", block.size());
  }
  if (!image_known) return;
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  auto* n = out->add_dim();
  auto* c = out->add_dim();
  if (onnx::hasInputShape(ctx, 0)) {
    const auto& in = onnx::getInputShape(ctx, 0);
    if (in.dim_size() != 3) fail_shape_inference("Col2Im: the input needs rank 3, got ", in.dim_size());
    *n = in.dim(0);
    int64_t block_size = 1;
    for (int64_t b : block) block_size *= b;
    if (block_known && block_size > 0 && in.dim(1).has_dim_value()) {
      if (in.dim(1).dim_value() % block_size != 0) {
        fail_shape_inference("Col2Im: input channels ", in.dim(1).dim_value(), " are not a multiple of ", block_size);
      }
      c->set_dim_value(in.dim(1).dim_value() / block_size);
    }
  }
  for (int64_t d : image) out->add_dim()->set_dim_value(d);
}

/// CenterCropPad-18: the input's shape with `shape`'s values on `axes` (default: every axis).
void infer_center_crop_pad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  std::vector<int64_t> axes, shape;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes)) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  auto* out = onnx::getOutputShape(ctx, 0);
  *out = in;
  const bool known = constant_ints(ctx, 1, shape);
  if (known && shape.size() != axes.size()) {
    fail_shape_inference("CenterCropPad: 'shape' has ", shape.size(), " values for ", axes.size(), " axes");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) fail_shape_inference("CenterCropPad: axis ", axes[i], " is out of range for rank ", rank);
    out->mutable_dim(static_cast<int>(a))->Clear();
    if (known) out->mutable_dim(static_cast<int>(a))->set_dim_value(shape[i]);
  }
}

/// AffineGrid-20: theta [N, 2, 3] with size [N, C, H, W] -> [N, H, W, 2]; theta [N, 3, 4]
/// with size [N, C, D, H, W] -> [N, D, H, W, 3].
void infer_affine_grid(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> size;
  if (!constant_ints(ctx, 1, size)) return;
  if (size.size() != 4 && size.size() != 5)
    fail_shape_inference("AffineGrid: 'size' needs 4 or 5 values, got ", size.size());
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  out->add_dim()->set_dim_value(size[0]);
  for (size_t d = 2; d < size.size(); ++d) out->add_dim()->set_dim_value(size[d]);
  out->add_dim()->set_dim_value(static_cast<int64_t>(size.size()) - 2);
}

/// DeformConv-19: X [N, C, *spatial], W [oC, C/group, *kernel] -> [N, oC, *out] by Conv's
/// output-size rule.
void infer_deform_conv(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& w = onnx::getInputShape(ctx, 1);
  const int spatial = x.dim_size() - 2;
  if (spatial < 1 || w.dim_size() != x.dim_size()) {
    fail_shape_inference("DeformConv: X of rank ", x.dim_size(), " and W of rank ", w.dim_size());
  }
  std::vector<int64_t> kernel, strides, dilations, pads;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) {
    for (int i = 0; i < spatial; ++i) kernel.push_back(w.dim(i + 2).has_dim_value() ? w.dim(i + 2).dim_value() : -1);
  }
  if (!onnx::getRepeatedAttribute(ctx, "strides", strides)) strides.assign(spatial, 1);
  if (!onnx::getRepeatedAttribute(ctx, "dilations", dilations)) dilations.assign(spatial, 1);
  if (!onnx::getRepeatedAttribute(ctx, "pads", pads)) pads.assign(2 * spatial, 0);
  if (static_cast<int>(kernel.size()) != spatial || static_cast<int>(strides.size()) != spatial ||
      static_cast<int>(dilations.size()) != spatial || static_cast<int>(pads.size()) != 2 * spatial) {
    fail_shape_inference("DeformConv: kernel_shape, strides, dilations or pads do not fit ", spatial, " axes");
  }
  auto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = x.dim(0);
  *out->add_dim() = w.dim(0);
  for (int i = 0; i < spatial; ++i) {
    auto* dim = out->add_dim();
    if (!x.dim(i + 2).has_dim_value() || kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) continue;
    const int64_t span = x.dim(i + 2).dim_value() + pads[i] + pads[i + spatial] - (kernel[i] - 1) * dilations[i] - 1;
    if (span < 0) fail_shape_inference("DeformConv: the kernel is larger than the padded input on axis ", i + 2);
    dim->set_dim_value(span / strides[i] + 1);
  }
}

void register_image_ops() {
  OpSchema col2im = fresh("Col2Im", 18);
  col2im.Attr("dilations", "dilation of each spatial axis", AttributeProto::INTS, false);
  col2im.Attr("pads", "begin and end pads of each spatial axis", AttributeProto::INTS, false);
  col2im.Attr("strides", "stride of each spatial axis", AttributeProto::INTS, false);
  col2im.Input(0, "input", "[N, C * prod(block_shape), L]", "T");
  col2im.Input(1, "image_shape", "spatial shape of the image", "tensor(int64)");
  col2im.Input(2, "block_shape", "shape of the sliding block", "tensor(int64)");
  col2im.Output(0, "output", "[N, C, *image_shape]", "T");
  col2im.TypeConstraint("T", OpSchema::all_tensor_types(), "any tensor type");
  col2im.TypeAndShapeInferenceFunction(infer_col2im);
  add(std::move(col2im));

  OpSchema crop = fresh("CenterCropPad", 18);
  crop.Attr("axes", "axes `shape` applies to", AttributeProto::INTS, false);
  crop.Input(0, "input_data", "input", "T").Input(1, "shape", "target sizes", "Tind");
  crop.Output(0, "output_data", "centre-cropped or padded input", "T");
  crop.TypeConstraint("T", OpSchema::all_tensor_types(), "any tensor type");
  crop.TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "shape type");
  crop.TypeAndShapeInferenceFunction(infer_center_crop_pad);
  add(std::move(crop));

  OpSchema affine = fresh("AffineGrid", 20);
  affine.Attr("align_corners", "1: -1 and 1 are the centres of the corner pixels", AttributeProto::INT,
              static_cast<int64_t>(0));
  affine.Input(0, "theta", "[N, 2, 3] or [N, 3, 4]", "T1").Input(1, "size", "[N, C, H, W] or [N, C, D, H, W]", "T2");
  affine.Output(0, "grid", "[N, H, W, 2] or [N, D, H, W, 3]", "T1");
  affine.TypeConstraint("T1", float_types(), "float types");
  affine.TypeConstraint("T2", {"tensor(int64)"}, "size type");
  affine.TypeAndShapeInferenceFunction(infer_affine_grid);
  add(std::move(affine));

  OpSchema deform = fresh("DeformConv", 19);
  deform.Attr("dilations", "dilation of each spatial axis", AttributeProto::INTS, false);
  deform.Attr("group", "groups of input channels", AttributeProto::INT, static_cast<int64_t>(1));
  deform.Attr("kernel_shape", "kernel's spatial shape", AttributeProto::INTS, false);
  deform.Attr("offset_group", "groups of offsets", AttributeProto::INT, static_cast<int64_t>(1));
  deform.Attr("pads", "begin and end pads of each spatial axis", AttributeProto::INTS, false);
  deform.Attr("strides", "stride of each spatial axis", AttributeProto::INTS, false);
  deform.Input(0, "X", "[N, C, *spatial]", "T").Input(1, "W", "[oC, C / group, *kernel]", "T");
  deform.Input(2, "offset", "[N, offset_group * 2 * prod(kernel), *out]", "T");
  deform.Input(3, "B", "[oC]", "T", OpSchema::Optional);
  deform.Input(4, "mask", "[N, offset_group * prod(kernel), *out]", "T", OpSchema::Optional);
  deform.Output(0, "Y", "[N, oC, *out]", "T").TypeConstraint("T", float_types(), "float types");
  deform.TypeAndShapeInferenceFunction(infer_deform_conv);
  add(std::move(deform));
}

}  // namespace

void register_new_ops() {
  register_bitwise_and_activations();
  register_group_normalization();
  register_image_ops();
}

}  // namespace edgemm::ir::next_schemas
