/// \file matmul_nbits_kernel.cc
/// The com.microsoft MatMulNBits-1 kernel (ONNX Runtime docs/ContribOperators.md): checks the
/// node's attributes and inputs against the layouts of matmul_nbits.h, naming the node, input
/// and expected shape in every error, and runs matmul_nbits() with the variant chosen at load
/// (the reference one when EDGEMM_ONEDNN=0).

#include <memory>
#include <string>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"
#include "kernels/cpu/matmul_nbits.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/quant_common.h"

namespace edgemm::kernels {

namespace {

using quant::describe_input;

enum : int { kA = 0, kB, kScales, kZeroPoints, kGIdx, kBias };

Status invalid(const ir::Node& node, StatusCode code, const std::string& message) {
  return ir::node_error(node, code, message);
}

std::string count_text(const Tensor& t) {
  return "shape " + shape_to_string(t.shape()) + " (" + std::to_string(t.element_count()) + " elements)";
}

class MatMulNBitsKernel final : public Kernel {
 public:
  MatMulNBitsKernel(MatMulNBitsShape shape, MatMulNBitsVariant variant) : shape_(shape), variant_(variant) {}
  const char* name() const override { return matmul_nbits_kernel_name(variant_, shape_); }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* a, quant::required_input(ctx, kA, "A"));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* b, quant::required_input(ctx, kB, "B"));
    EDGEMM_ASSIGN_OR_RETURN(const Tensor* scales, quant::required_input(ctx, kScales, "scales"));
    MatMulNBitsWeights w;
    EDGEMM_RETURN_IF_ERROR(check_a(node, *a));
    EDGEMM_RETURN_IF_ERROR(check_b(node, *b));
    EDGEMM_RETURN_IF_ERROR(check_floats(node, kScales, *scales, shape_.n * shape_.k_blocks(), "N * k_blocks"));
    w.b = b->data<uint8_t>();
    w.scales = scales->data<float>();
    if (const Tensor* zp = ctx.input(kZeroPoints); zp != nullptr) {
      if (zp->dtype() == DataType::kUInt8) {
        EDGEMM_RETURN_IF_ERROR(check_count(node, kZeroPoints, *zp, shape_.n * shape_.zero_point_row_bytes(),
                                           "N * ceil(k_blocks * bits / 8)"));
        w.zero_points = zp->data<uint8_t>();
      } else {
        EDGEMM_RETURN_IF_ERROR(check_floats(node, kZeroPoints, *zp, shape_.n * shape_.k_blocks(), "N * k_blocks"));
        w.float_zero_points = zp->data<float>();
      }
    }
    if (ctx.input(kGIdx) != nullptr) {
      return invalid(node, StatusCode::kUnsupported,
                     describe_input(node, kGIdx) + " is given; the deprecated g_idx input is not supported");
    }
    if (const Tensor* bias = ctx.input(kBias); bias != nullptr) {
      EDGEMM_RETURN_IF_ERROR(check_floats(node, kBias, *bias, shape_.n, "N"));
      w.bias = bias->data<float>();
    }
    Shape out = a->shape();
    out.back() = shape_.n;
    EDGEMM_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat32, out));
    const int64_t m = a->element_count() / shape_.k;
    MatMulNBitsShape shape = shape_;
    shape.float_zero_points = w.float_zero_points != nullptr;
    matmul_nbits(variant_, shape, w, a->data<float>(), m, y->data<float>(), ctx.threads());
    return Status::ok();
  }

 private:
  std::string attrs_text() const {
    return "K = " + std::to_string(shape_.k) + ", N = " + std::to_string(shape_.n) +
           ", bits = " + std::to_string(shape_.bits) + ", block_size = " + std::to_string(shape_.block_size);
  }

  Status check_a(const ir::Node& node, const Tensor& a) const {
    if (a.dtype() != DataType::kFloat32) return unsupported_dtype(node, kA, a.dtype());
    if (a.shape().empty() || a.shape().back() != shape_.k) {
      return invalid(node, StatusCode::kInvalidArgument,
                     describe_input(node, kA) + " has shape " + shape_to_string(a.shape()) +
                         "; its last dimension must equal attribute K = " + std::to_string(shape_.k));
    }
    return Status::ok();
  }

  Status check_b(const ir::Node& node, const Tensor& b) const {
    if (b.dtype() != DataType::kUInt8) {
      return invalid(node, StatusCode::kInvalidModel,
                     describe_input(node, kB) + " has dtype " + dtype_name(b.dtype()) + "; MatMulNBits takes uint8");
    }
    const Shape want = {shape_.n, shape_.k_blocks(), shape_.blob_size()};
    if (b.shape() != want) {
      return invalid(node, StatusCode::kInvalidArgument,
                     describe_input(node, kB) + " has shape " + shape_to_string(b.shape()) +
                         "; expected [N, k_blocks, blob_size] = " + shape_to_string(want) + " for " + attrs_text());
    }
    return Status::ok();
  }

  Status check_count(const ir::Node& node, int i, const Tensor& t, int64_t want, const char* formula) const {
    if (t.element_count() == want) return Status::ok();
    return invalid(node, StatusCode::kInvalidArgument,
                   describe_input(node, i) + " has " + count_text(t) + "; expected " + formula + " = " +
                       std::to_string(want) + " elements for " + attrs_text());
  }

  Status check_floats(const ir::Node& node, int i, const Tensor& t, int64_t want, const char* formula) const {
    if (t.dtype() != DataType::kFloat32) return unsupported_dtype(node, i, t.dtype());
    return check_count(node, i, t, want, formula);
  }

  MatMulNBitsShape shape_;
  MatMulNBitsVariant variant_;
};

Expected<int64_t> required_attr(const ir::Node& node, const char* key) {
  if (!node.has_attr(key)) {
    return invalid(node, StatusCode::kInvalidModel, std::string("required attribute '") + key + "' is missing");
  }
  return node.attr_int(key, 0);
}

Expected<std::unique_ptr<Kernel>> make_matmul_nbits(const KernelInfo& info) {
  const ir::Node& node = info.node;
  MatMulNBitsShape s;
  EDGEMM_ASSIGN_OR_RETURN(s.k, required_attr(node, "K"));
  EDGEMM_ASSIGN_OR_RETURN(s.n, required_attr(node, "N"));
  EDGEMM_ASSIGN_OR_RETURN(s.block_size, required_attr(node, "block_size"));
  EDGEMM_ASSIGN_OR_RETURN(s.bits, node.attr_int("bits", 4));
  EDGEMM_ASSIGN_OR_RETURN(s.accuracy_level, node.attr_int("accuracy_level", 0));
  if (s.k < 1 || s.n < 1) {
    return invalid(node, StatusCode::kInvalidModel,
                   "attributes K = " + std::to_string(s.k) + " and N = " + std::to_string(s.n) + " must be >= 1");
  }
  if (s.bits != 4 && s.bits != 8) {
    return invalid(node, StatusCode::kUnsupported,
                   "attribute bits = " + std::to_string(s.bits) + " is not supported (supported: 4, 8)");
  }
  if (s.block_size < 16 || (s.block_size & (s.block_size - 1)) != 0) {
    return invalid(node, StatusCode::kInvalidModel,
                   "attribute block_size = " + std::to_string(s.block_size) + " is not a power of two >= 16");
  }
  const Tensor* zp = info.constant_inputs.size() > kZeroPoints ? info.constant_inputs[kZeroPoints] : nullptr;
  s.float_zero_points = zp != nullptr && zp->dtype() == DataType::kFloat32;  // for the kernel's name
  const MatMulNBitsVariant variant = onednn::enabled() ? matmul_nbits_best_variant() : MatMulNBitsVariant::kReference;
  return std::unique_ptr<Kernel>(std::make_unique<MatMulNBitsKernel>(s, variant));
}

}  // namespace

void register_matmul_nbits_kernels(KernelRegistry& registry) {
  registry.add("com.microsoft", "MatMulNBits", 1, make_matmul_nbits);
}

}  // namespace edgemm::kernels
