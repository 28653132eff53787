#pragma once
/// \file families.h
/// One registration function per op family file in src/kernels/cpu (see registry.cc).

#include "kernels/kernel.h"

namespace edgemm::kernels {

void register_shape_kernels(
    KernelRegistry& registry);  // shape.cc: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
void register_transpose_kernels(KernelRegistry& registry);     // transpose.cc: Transpose, DepthToSpace, SpaceToDepth
void register_concat_split_kernels(KernelRegistry& registry);  // concat_split.cc: Concat, Split
void register_slice_kernels(KernelRegistry& registry);         // slice.cc: Slice, Compress, ReverseSequence
void register_gather_kernels(KernelRegistry& registry);        // gather.cc: Gather, GatherElements, GatherND
void register_scatter_kernels(KernelRegistry& registry);       // scatter.cc: Scatter, ScatterElements, ScatterND
void register_pad_tile_expand_kernels(
    KernelRegistry& registry);  // pad_tile_expand.cc: Pad, Tile, Expand, CenterCropPad
void register_generate_kernels(
    KernelRegistry& registry);  // generate.cc: Constant, ConstantOfShape, Range, EyeLike, OneHot
void register_trilu_cumsum_kernels(KernelRegistry& registry);    // trilu_cumsum.cc: Trilu, CumSum
void register_nonzero_unique_kernels(KernelRegistry& registry);  // nonzero_unique.cc: NonZero, Unique
void register_reduce_kernels(KernelRegistry& registry);          // reduce.cc: Reduce*, ArgMax, ArgMin
void register_softmax_kernels(KernelRegistry& registry);         // softmax.cc: Softmax, LogSoftmax, Hardmax
void register_topk_kernels(KernelRegistry& registry);            // topk.cc: TopK
void register_loss_kernels(KernelRegistry& registry);  // loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_normalization_kernels(
    KernelRegistry& registry);  // normalization.cc: *Normalization (and com.edgemm LayerNormalization)
void register_einsum_kernels(KernelRegistry& registry);  // einsum.cc: Einsum
void register_unary_kernels(
    KernelRegistry& registry);  // unary.cc: Abs, Neg, Sqrt, Exp, Log, Erf, trig, Round, Sign, IsNaN, IsInf, Not, ...
void register_activation_kernels(
    KernelRegistry& registry);  // activation.cc: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid,
                                // HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Shrink, Clip, Mish, Gelu
void register_binary_kernels(
    KernelRegistry& registry);  // binary.cc: Add, Sub, Mul, Div, Pow, Mod, BitShift, And, Or,
                                // Xor, Bitwise*, Equal, Less, Greater, LessOrEqual, GreaterOrEqual
void register_variadic_kernels(KernelRegistry& registry);  // variadic.cc: Sum, Mean, Max, Min, Where
void register_cast_kernels(KernelRegistry& registry);      // cast.cc: Cast, CastLike
void register_conv_kernels(KernelRegistry& registry);      // conv.cc: Conv, ConvTranspose
void register_matmul_kernels(KernelRegistry& registry);    // matmul.cc: MatMul, Gemm, com.edgemm FusedMatMul
void register_quantize_kernels(
    KernelRegistry& registry);  // quantize.cc: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
void register_quant_matmul_kernels(KernelRegistry& registry);  // quant_matmul.cc: MatMulInteger, QLinearMatMul
void register_quant_conv_kernels(KernelRegistry& registry);    // quant_conv.cc: ConvInteger, QLinearConv
void register_matmul_nbits_kernels(KernelRegistry& registry);  // matmul_nbits.cc: com.microsoft MatMulNBits
void register_pool_kernels(KernelRegistry& registry);  // pool.cc: MaxPool, AveragePool, LpPool, Global*Pool, MaxUnpool
void register_resize_kernels(KernelRegistry& registry);             // resize.cc: Resize, Upsample
void register_detection_kernels(KernelRegistry& registry);          // detection.cc: NonMaxSuppression, RoiAlign
void register_grid_sample_kernels(KernelRegistry& registry);        // grid_sample.cc: GridSample, AffineGrid
void register_control_flow_kernels(KernelRegistry& registry);       // control_flow.cc: If, Loop, Scan (8, 9+)
void register_elementwise_chain_kernels(KernelRegistry& registry);  // elementwise_chain.cc: com.edgemm ElementwiseChain
void register_layout_kernels(KernelRegistry& registry);             // layout.cc: com.edgemm Reorder (NCHW <-> nChw8c)
void register_attention_kernels(KernelRegistry& registry);          // kv_attention.cc: com.edgemm KvAttention
void register_encoder_attention_kernels(KernelRegistry& registry);  // attention.cc: com.edgemm Attention
void register_recurrent_kernels(KernelRegistry& registry);          // recurrent.cc: LSTM, GRU, RNN
void register_signal_kernels(KernelRegistry& registry);             // signal.cc: DFT, STFT, *Window, MelWeightMatrix
void register_linalg_kernels(KernelRegistry& registry);             // linalg.cc: Det
void register_tfidf_kernels(KernelRegistry& registry);              // tfidf.cc: TfIdfVectorizer
void register_training_optimizer_kernels(
    KernelRegistry& registry);  // training_optimizers.cc: ai.onnx.preview.training Adagrad, Adam, Momentum
void register_group_norm_kernels(KernelRegistry& registry);   // group_norm.cc: GroupNormalization
void register_lrn_kernels(KernelRegistry& registry);          // lrn.cc: LRN
void register_col2im_kernels(KernelRegistry& registry);       // col2im.cc: Col2Im
void register_deform_conv_kernels(KernelRegistry& registry);  // deform_conv.cc: DeformConv
// The "fp16" precision's kernels (fp16_kernels()): conv.cc's Conv and FusedConv, matmul.cc's
// MatMul and FusedMatMul.
void register_fp16_conv_kernels(KernelRegistry& registry);
void register_fp16_matmul_kernels(KernelRegistry& registry);
}  // namespace edgemm::kernels
