#pragma once
/// \file recurrent.h
/// The LSTM, GRU and RNN kernels of recurrent.cc with a chosen computation, so that tests can run
/// the GEMM paths against the plain reference loops on the same node.

#include <memory>

#include "edgemm/status.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

/// How a recurrent kernel computes (float32).
enum class RecurrentPath {
  /// Step by step, batch entry by batch entry: every gate's dot products with W and R written out
  /// as loops and summed in double.
  kReference,
  /// One GEMM for the input projection of every time step and direction (X x W^T, all gates at
  /// once), then per step one GEMM H x R^T (two for GRU with linear_before_reset = 0), on
  /// matmul_panels() with W^T and R^T packed (once at create when W / R are constant, else on each
  /// run). Where matmul_panels_available() is false the kernel takes kSgemm instead.
  kPanels,
  /// The same GEMMs on oneDNN's dnnl_sgemm, reading W and R in place (transposed operand).
  kSgemm,
};

/// Creates the kernel for an LSTM, GRU or RNN node (info.node.op_type, opset 7 or 14) that
/// computes along `path`. Errors as the registered factories: kInvalidModel for bad attributes
/// (direction, layout, hidden_size, clip, the number of activations), kUnsupported for an
/// activation outside the ONNX list, naming it.
Expected<std::unique_ptr<Kernel>> make_recurrent_kernel(const KernelInfo& info, RecurrentPath path);

}  // namespace edgemm::kernels
