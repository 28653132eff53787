#pragma once
/// \file kernel.h
/// The kernel interface: one `Kernel` object per graph node, created once at compile by a
/// factory registered under (domain, op_type, since_version), run many times (possibly from
/// several threads at once, so run() is const and keeps no per-run state).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"

namespace edgemm::kernels {

/// A compiled subgraph (If branch, Loop/Scan body) that a control-flow kernel can run.
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  /// Names of the subgraph's formal inputs and outputs, in order.
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
};

/// What a kernel sees while running one node.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const ir::Node& node() const = 0;
  /// Number of inputs listed on the node (including absent optional ones).
  virtual int input_count() const = 0;
  /// Input `i`, or nullptr when the optional input is absent or i >= input_count().
  virtual const Tensor* input(int i) const = 0;
  virtual int output_count() const = 0;
  /// True when output `i` is listed on the node (optional outputs may be omitted).
  virtual bool output_wanted(int i) const = 0;
  /// Allocates output `i` (zero-filled is not guaranteed). The buffer may be planned arena
  /// memory: write into it, never replace the returned Tensor (e.g. with an input, which would
  /// alias buffers the planner reuses); the runtime checks this. Errors: kOutOfMemory when the
  /// size overflows or exceeds kMaxTensorBytes; kInvalidArgument for a negative extent.
  virtual Expected<Tensor*> allocate_output(int i, DataType dtype, const Shape& shape) = 0;
  /// Intra-op thread count for this run (>= 1).
  virtual int threads() const = 0;
  /// Runs a compiled subgraph with the given formal inputs; values of enclosing graphs are
  /// visible to it (outer scope). Returns the subgraph outputs, owning their memory.
  virtual Expected<std::vector<Tensor>> run_subgraph(const Subgraph& graph, const std::vector<Tensor>& inputs) = 0;
};

/// A compiled node. run() must be thread-safe: one Kernel may run concurrently.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) const = 0;
  /// Name of the implementation for profiles and logs, e.g. "f32_conv__onednn".
  virtual const char* name() const { return "reference"; }
  /// Bytes of constant inputs (weights) this kernel holds in a layout of its own, packed or
  /// reordered from the graph's tensors (0 when it reads those as they are). May grow after
  /// create: oneDNN layouts are made per input shape on first use. Thread-safe.
  virtual int64_t packed_bytes() const { return 0; }
  /// Whether run() reads the elements of input `i` when that input is constant at compile
  /// (KernelInfo::constant_inputs). A kernel that keeps its own copy (packed weights) returns
  /// false; the runtime then frees the graph's copy once no other node reads it, and run() gets
  /// a tensor with the input's dtype and shape whose data is null.
  virtual bool reads_constant_input(int /*i*/) const { return true; }
};

/// What a factory sees when creating a kernel for a node.
struct KernelInfo {
  const ir::Node& node;
  int64_t opset;  ///< opset of the node's domain in the model
  /// Inputs that are constant at compile (initializers, folded values); nullptr elsewhere.
  std::vector<const Tensor*> constant_inputs;
  /// Compiles a subgraph attribute of this node for run_subgraph().
  std::function<Expected<std::shared_ptr<Subgraph>>(const ir::Graph&)> compile_subgraph;
};

using KernelFactory = std::function<Expected<std::unique_ptr<Kernel>>(const KernelInfo&)>;

/// Table of kernel factories keyed by (domain, op_type, since_version). Built once.
class KernelRegistry {
 public:
  /// Registers `factory` for opsets >= since_version (until the next registration of the
  /// same op with a higher since_version). Registering the same version twice: the later wins.
  void add(const std::string& domain, const std::string& op_type, int since_version, KernelFactory factory);
  /// The factory for the highest since_version <= opset, or nullptr.
  const KernelFactory* find(const std::string& domain, const std::string& op_type, int64_t opset) const;
  /// All registered (domain, op_type) pairs, sorted, for reports.
  std::vector<std::pair<std::string, std::string>> ops() const;

 private:
  struct Entry {
    int since_version;
    KernelFactory factory;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Entry>> table_;
};

/// The process-wide registry with every built-in CPU kernel.
const KernelRegistry& cpu_registry();

/// MatMul and com.edgemm FusedMatMul kernels for the native backend's "bf16" precision, to search
/// before cpu_registry(): a constant 2-D B is packed into bfloat16 panels and A rounded to
/// bfloat16 on each run, products summed in float32 (matmul_panels.h, PanelFormat::kBfloat16),
/// for any number of rows (a row's result does not depend on the batch), where the CPU has
/// AVX512_BF16; everything else as cpu_registry() does. Defined in src/kernels/cpu/matmul.cc.
std::unique_ptr<KernelRegistry> bf16_matmul_kernels();

/// Conv, com.edgemm FusedConv, MatMul and com.edgemm FusedMatMul kernels for the native backend's
/// "fp16" precision, to search before cpu_registry(): 2-D convolutions with constant float32
/// weights and MatMuls with a constant 2-D B run XNNPACK's half-precision operators where
/// fp16_available() (weights and bias rounded to IEEE half once, activations on each run,
/// products and sums in half precision, outputs widened to float32; conv_xnnpack.h), unless
/// rounding the node's weights to half would lose them (xnnpack::half_keeps: a node stays float32);
/// everything else, and every op on other CPUs, as cpu_registry() does. Defined in
/// src/kernels/registry.cc.
std::unique_ptr<KernelRegistry> fp16_kernels();

/// Whether fp16_kernels() compute in half precision on this CPU: aarch64 with FP16 arithmetic
/// (asimdhp) where XNNPACK runs (kernels/cpu/xnnpack.h).
bool fp16_available();

/// Helper for kernels that need no compile-time state: wraps a run function.
template <typename Fn>
KernelFactory simple_kernel(Fn fn, const char* name = "reference") {
  struct Impl : Kernel {
    Fn fn;
    const char* kernel_name;
    Impl(Fn f, const char* n) : fn(std::move(f)), kernel_name(n) {}
    Status run(KernelContext& ctx) const override { return fn(ctx); }
    const char* name() const override { return kernel_name; }
  };
  return [fn, name](const KernelInfo&) -> Expected<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<Impl>(fn, name));
  };
}

}  // namespace edgemm::kernels
