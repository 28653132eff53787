#pragma once
/// \file epilogue.h
/// The elementwise epilogue of com.edgemm FusedConv / FusedConvTranspose / FusedMatMul
/// (ir::Step lists, see ir/elementwise_steps.h) as oneDNN post-ops ("Primitive Attributes:
/// Post-ops", oneDNN v2.6: eltwise and binary post-ops), and in loops for the paths oneDNN does
/// not take.

#include <dnnl.hpp>
#include <optional>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/elementwise_steps.h"
#include "kernels/cpu/layout.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// How a binary step's operand broadcasts against the output [N, M, spatial...].
enum class OperandBroadcast {
  kScalar,      ///< one element
  kPerChannel,  ///< varies only along axis 1 (e.g. [1, M, 1, 1], [M, 1, 1])
  kFull,        ///< exactly the output's shape
  kOther        ///< anything else: only the reference epilogue handles it
};

/// Classifies `operand` against `output` (numpy alignment from the right).
OperandBroadcast classify_operand(const Shape& operand, const Shape& output);

/// A binary post-op's runtime argument: which post-op it feeds, from which node input, and
/// the memory descriptor oneDNN reads it through.
struct BinaryPostOpArg {
  int post_op = 0;  ///< index in the post-op list (DNNL_ARG_ATTR_MULTIPLE_POST_OP)
  int input = 0;    ///< node input index of the operand
  OperandBroadcast broadcast = OperandBroadcast::kScalar;
  dnnl::memory::desc md;  ///< scalar/per-channel: plain; full: the destination's layout
};

/// The steps as oneDNN post-ops.
struct EpiloguePostOps {
  bool supported = true;  ///< false: some step or operand has no oneDNN post-op here
  dnnl::post_ops ops;
  std::vector<BinaryPostOpArg> binaries;
};

/// Logical shapes of the node inputs that binary `steps` read (nullopt for the other inputs),
/// indexed like the node's inputs. Operands of an output stored nChw8c or NHWC (`layout`) are
/// stored like it ([N, C/8, H, W, 8] or [1, C/8, 1, 1, 8]; [N, H, W, C] or [1, 1, 1, C]): their
/// logical shape is [N, C, H, W] or [1, C, 1, 1]; other shapes are taken as they are.
std::vector<std::optional<Shape>> epilogue_operand_shapes(const std::vector<ir::Step>& steps, const KernelContext& ctx,
                                                          ActivationLayout layout);

/// Builds post-ops for `steps` on an output of `output` shape whose oneDNN layout is `dst_md`.
/// `operand_shapes[i]` is the shape of node input i (nullptr when absent). Steps whose oneDNN
/// post-op would lose a NaN (Relu, Clip, HardSigmoid, Sigmoid, Tanh, Exp: oneDNN's clamps return
/// the bound for NaN; Max, Min) leave the result unsupported (the loops run the epilogue then),
/// unless `finite_input` says the primitive's result is always finite (Int8Conv: int32 sums
/// times normal scales plus a finite bias) and only steps that keep finite values finite come
/// before them, so that no NaN can reach them.
EpiloguePostOps make_post_ops(const std::vector<ir::Step>& steps, const std::vector<const Shape*>& operand_shapes,
                              const Shape& output, const dnnl::memory::desc& dst_md, bool finite_input = false);

/// Finishes float32 `y` [N, M, ...] in place (stored in `layout`, kernels/cpu/layout.h: nChw8c
/// [N, M/8, H, W, 8] or NHWC [N, H, W, M], and so are its full-shape operands, its per-channel
/// operands [1, M/8, 1, 1, 8] or [1, 1, 1, M]): adds `bias` ([M], nullable) per channel, then
/// applies `steps` (operands read from `ctx` inputs) in one pass over memory with the
/// ElementwiseChain loop. Used when oneDNN does not run the epilogue (deconvolution, shapes
/// without post-op support, the reference path). Errors: a missing or non-float32 operand, or
/// one that does not broadcast to y's shape (InvalidArgument naming the node and input).
Status apply_epilogue(const std::vector<ir::Step>& steps, KernelContext& ctx, Tensor& y, const Tensor* bias,
                      ActivationLayout layout, int threads);

}  // namespace edgemm::kernels
