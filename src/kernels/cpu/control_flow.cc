/// Control flow: If (ONNX If-1/11/13/16), Loop (Loop-1/11/13/16, tensors only, no sequences)
/// and Scan (Scan-8, Scan-9/11/16). Branches and bodies are compiled once at compile time; they
/// read values of enclosing graphs by name (outer scope), as the ONNX IR spec's "Nested graphs"
/// section allows.
///
/// Scan-8 (batched): inputs sequence_lens (optional, int32/int64 [B], each in [0, L]), then the
/// N initial states [B, ...] and the M >= 1 scan inputs [B, L, ...]; attribute `directions` (M
/// flags, 1 = reverse). For each batch entry b the body runs sequence_lens[b] (default L) times
/// on the states' and scan inputs' slices at b (reverse inputs are read from position
/// sequence_lens[b] - 1 down); outputs are the final states [B, ...] and the scan outputs
/// [B, L, ...], elements in iteration order, positions past sequence_lens[b] zero. Errors
/// (kInvalidArgument naming the node): batch sizes or sequence lengths that disagree, a length
/// outside [0, L], a body output that changes shape or dtype; a scan output whose element shape
/// is unknown because the body never ran (B = 0 or every length 0) is kUnsupported.

#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/families.h"

namespace edgemm::kernels {

namespace {

Status copy_to_output(KernelContext& ctx, int i, const Tensor& value) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, value.dtype(), value.shape()));
  if (value.byte_size() > 0) std::memcpy(out->raw_data(), value.raw_data(), value.byte_size());
  return Status::ok();
}

Expected<bool> read_bool(const ir::Node& node, const Tensor& t, const std::string& what) {
  if (t.element_count() != 1) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          what + " must hold exactly one element, got shape " + shape_to_string(t.shape()));
  }
  if (t.dtype() != DataType::kBool) {
    return ir::node_error(node, StatusCode::kInvalidArgument,
                          what + " must be bool, got " + std::string(dtype_name(t.dtype())));
  }
  return t.data<uint8_t>()[0] != 0;
}

Expected<std::shared_ptr<Subgraph>> compile_graph_attr(const KernelInfo& info, const std::string& key) {
  const ir::Graph* g = info.node.attr_graph(key);
  if (g == nullptr) {
    return ir::node_error(info.node, StatusCode::kInvalidModel, "graph attribute '" + key + "' is missing");
  }
  return info.compile_subgraph(*g);
}

class IfKernel final : public Kernel {
 public:
  IfKernel(std::shared_ptr<Subgraph> then_branch, std::shared_ptr<Subgraph> else_branch)
      : then_(std::move(then_branch)), else_(std::move(else_branch)) {}
  const char* name() const override { return "if"; }

  Status run(KernelContext& ctx) const override {
    const Tensor* cond = ctx.input(0);
    if (cond == nullptr) return ir::node_error(ctx.node(), StatusCode::kInvalidModel, "input 'cond' is missing");
    EDGEMM_ASSIGN_OR_RETURN(bool take_then, read_bool(ctx.node(), *cond, "input 'cond'"));
    EDGEMM_ASSIGN_OR_RETURN(auto outputs, ctx.run_subgraph(take_then ? *then_ : *else_, {}));
    if (static_cast<int>(outputs.size()) != ctx.output_count()) {
      return ir::node_error(ctx.node(), StatusCode::kInvalidModel,
                            std::string(take_then ? "then" : "else") + "_branch returns " +
                                std::to_string(outputs.size()) + " values but the node has " +
                                std::to_string(ctx.output_count()) + " outputs");
    }
    for (int i = 0; i < ctx.output_count(); ++i) EDGEMM_RETURN_IF_ERROR(copy_to_output(ctx, i, outputs[i]));
    return Status::ok();
  }

 private:
  std::shared_ptr<Subgraph> then_, else_;
};

/// Copies slice `index` of `src` along `axis` into a new tensor without that axis.
Expected<Tensor> take_slice(const Tensor& src, int64_t axis, int64_t index) {
  Shape shape = src.shape();
  const int64_t extent = shape[axis];
  shape.erase(shape.begin() + axis);
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(src.dtype(), shape));
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(src.dtype()));
  for (int64_t i = 0; i < axis; ++i) outer *= src.shape()[i];
  for (int64_t i = axis + 1; i < src.rank(); ++i) inner *= src.shape()[i];
  const char* in = static_cast<const char*>(src.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * inner, in + (o * extent + index) * inner, inner);
  return out;
}

/// Writes `slice` as position `index` of `dst` along `axis`.
void put_slice(Tensor& dst, int64_t axis, int64_t index, const Tensor& slice) {
  const int64_t extent = dst.shape()[axis];
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(dst.dtype()));
  for (int64_t i = 0; i < axis; ++i) outer *= dst.shape()[i];
  for (int64_t i = axis + 1; i < dst.rank(); ++i) inner *= dst.shape()[i];
  const char* in = static_cast<const char*>(slice.raw_data());
  char* out = static_cast<char*>(dst.raw_data());
  for (int64_t o = 0; o < outer; ++o) std::memcpy(out + (o * extent + index) * inner, in + o * inner, inner);
}

/// Stacks per-iteration values along a new `axis` into output `i` (all must share a shape).
Status stack_to_output(KernelContext& ctx, int i, const std::vector<Tensor>& items, int64_t axis, bool reverse,
                       const std::string& what) {
  if (items.empty()) {
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, DataType::kFloat32, {0}));
    (void)out;
    return Status::ok();
  }
  Shape shape = items[0].shape();
  for (const Tensor& t : items) {
    if (t.shape() != shape || t.dtype() != items[0].dtype()) {
      return ir::node_error(ctx.node(), StatusCode::kInvalidArgument,
                            what + " changes shape or dtype between iterations (" + shape_to_string(shape) + " vs " +
                                shape_to_string(t.shape()) + ")");
    }
  }
  const int64_t n = static_cast<int64_t>(items.size());
  shape.insert(shape.begin() + axis, n);
  EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, items[0].dtype(), shape));
  for (int64_t k = 0; k < n; ++k) put_slice(*out, axis, reverse ? n - 1 - k : k, items[k]);
  return Status::ok();
}

class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(std::shared_ptr<Subgraph> body) : body_(std::move(body)) {}
  const char* name() const override { return "loop"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    int64_t max_trips = INT64_MAX;
    if (const Tensor* m = ctx.input(0)) {
      if (m->element_count() != 1 || m->dtype() != DataType::kInt64) {
        return ir::node_error(node, StatusCode::kInvalidArgument, "input 'M' must be one int64");
      }
      max_trips = m->data<int64_t>()[0];
    }
    bool cond = true;
    if (const Tensor* c = ctx.input(1)) {
      EDGEMM_ASSIGN_OR_RETURN(cond, read_bool(node, *c, "input 'cond'"));
    }
    const int n_carried = ctx.input_count() - 2;
    std::vector<Tensor> carried;
    for (int k = 0; k < n_carried; ++k) {
      const Tensor* v = ctx.input(2 + k);
      if (v == nullptr) return ir::node_error(node, StatusCode::kUnsupported, "optional loop-carried inputs");
      carried.push_back(*v);
    }
    const int n_scan = ctx.output_count() - n_carried;
    if (n_scan < 0 || static_cast<int>(body_->output_names().size()) != 1 + n_carried + n_scan) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "body returns " + std::to_string(body_->output_names().size()) + " values; expected 1 + " +
                                std::to_string(n_carried) + " carried + " + std::to_string(n_scan) + " scan outputs");
    }
    std::vector<std::vector<Tensor>> scans(n_scan);
    for (int64_t iter = 0; iter < max_trips && cond; ++iter) {
      std::vector<Tensor> body_inputs = {Tensor::from_int64s({}, {iter})};
      Tensor cond_t = std::move(Tensor::create(DataType::kBool, {}).value());
      cond_t.data<uint8_t>()[0] = 1;
      body_inputs.push_back(cond_t);
      body_inputs.insert(body_inputs.end(), carried.begin(), carried.end());
      EDGEMM_ASSIGN_OR_RETURN(auto outs, ctx.run_subgraph(*body_, body_inputs));
      EDGEMM_ASSIGN_OR_RETURN(cond, read_bool(node, outs[0], "body output 'cond'"));
      for (int k = 0; k < n_carried; ++k) carried[k] = outs[1 + k];
      for (int k = 0; k < n_scan; ++k) scans[k].push_back(outs[1 + n_carried + k]);
    }
    for (int k = 0; k < n_carried; ++k) EDGEMM_RETURN_IF_ERROR(copy_to_output(ctx, k, carried[k]));
    for (int k = 0; k < n_scan; ++k) {
      EDGEMM_RETURN_IF_ERROR(
          stack_to_output(ctx, n_carried + k, scans[k], 0, false, "scan output " + std::to_string(k)));
    }
    return Status::ok();
  }

 private:
  std::shared_ptr<Subgraph> body_;
};

class ScanKernel final : public Kernel {
 public:
  ScanKernel(std::shared_ptr<Subgraph> body, int64_t num_scan_inputs, std::vector<int64_t> in_axes,
             std::vector<int64_t> in_dirs, std::vector<int64_t> out_axes, std::vector<int64_t> out_dirs)
      : body_(std::move(body)),
        num_scan_inputs_(num_scan_inputs),
        in_axes_(std::move(in_axes)),
        in_dirs_(std::move(in_dirs)),
        out_axes_(std::move(out_axes)),
        out_dirs_(std::move(out_dirs)) {}
  const char* name() const override { return "scan"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const int n_state = ctx.input_count() - static_cast<int>(num_scan_inputs_);
    const int n_scan_out = ctx.output_count() - n_state;
    if (n_state < 0 || n_scan_out < 0) {
      return ir::node_error(node, StatusCode::kInvalidModel, "num_scan_inputs does not fit the node's inputs");
    }
    std::vector<Tensor> state;
    for (int k = 0; k < n_state; ++k) {
      if (ctx.input(k) == nullptr) {
        return ir::node_error(node, StatusCode::kInvalidModel, "initial state " + std::to_string(k) + " is missing");
      }
      state.push_back(*ctx.input(k));
    }
    std::vector<const Tensor*> seqs;
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (int k = 0; k < num_scan_inputs_; ++k) {
      const Tensor* t = ctx.input(n_state + k);
      if (t == nullptr) return ir::node_error(node, StatusCode::kInvalidModel, "a scan input is missing");
      const int64_t raw_axis = k < static_cast<int>(in_axes_.size()) ? in_axes_[k] : 0;
      EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, raw_axis, t->rank()));
      if (length >= 0 && t->shape()[axis] != length) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              "scan inputs disagree on the sequence length (" + std::to_string(length) + " vs " +
                                  std::to_string(t->shape()[axis]) + ")");
      }
      length = t->shape()[axis];
      seqs.push_back(t);
      axes.push_back(axis);
    }
    if (length < 0) length = 0;
    std::vector<std::vector<Tensor>> scans(n_scan_out);
    for (int64_t it = 0; it < length; ++it) {
      std::vector<Tensor> body_inputs = state;
      for (int k = 0; k < num_scan_inputs_; ++k) {
        const bool reverse = k < static_cast<int>(in_dirs_.size()) && in_dirs_[k] == 1;
        EDGEMM_ASSIGN_OR_RETURN(Tensor slice, take_slice(*seqs[k], axes[k], reverse ? length - 1 - it : it));
        body_inputs.push_back(std::move(slice));
      }
      EDGEMM_ASSIGN_OR_RETURN(auto outs, ctx.run_subgraph(*body_, body_inputs));
      if (static_cast<int>(outs.size()) != n_state + n_scan_out) {
        return ir::node_error(node, StatusCode::kInvalidModel, "body returns the wrong number of values");
      }
      for (int k = 0; k < n_state; ++k) state[k] = outs[k];
      for (int k = 0; k < n_scan_out; ++k) scans[k].push_back(outs[n_state + k]);
    }
    for (int k = 0; k < n_state; ++k) EDGEMM_RETURN_IF_ERROR(copy_to_output(ctx, k, state[k]));
    for (int k = 0; k < n_scan_out; ++k) {
      const int64_t rank = scans[k].empty() ? 1 : scans[k][0].rank() + 1;
      const int64_t raw_axis = k < static_cast<int>(out_axes_.size()) ? out_axes_[k] : 0;
      EDGEMM_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, raw_axis, rank));
      const bool reverse = k < static_cast<int>(out_dirs_.size()) && out_dirs_[k] == 1;
      EDGEMM_RETURN_IF_ERROR(
          stack_to_output(ctx, n_state + k, scans[k], axis, reverse, "scan output " + std::to_string(k)));
    }
    return Status::ok();
  }

 private:
  std::shared_ptr<Subgraph> body_;
  int64_t num_scan_inputs_;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

/// Scan-8: batch axis 0, sequence axis 1, optional sequence_lens first (see the file comment).
class Scan8Kernel final : public Kernel {
 public:
  Scan8Kernel(std::shared_ptr<Subgraph> body, int64_t num_scan_inputs, std::vector<int64_t> directions)
      : body_(std::move(body)), num_scan_inputs_(num_scan_inputs), directions_(std::move(directions)) {}
  const char* name() const override { return "scan8"; }

  Status run(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const int m = static_cast<int>(num_scan_inputs_);
    const int n_state = ctx.input_count() - 1 - m;
    const int n_scan_out = ctx.output_count() - n_state;
    if (n_state < 0 || n_scan_out < 0) {
      return ir::node_error(node, StatusCode::kInvalidModel,
                            "num_scan_inputs " + std::to_string(m) + " does not fit the node's " +
                                std::to_string(ctx.input_count()) + " inputs and " +
                                std::to_string(ctx.output_count()) + " outputs");
    }
    std::vector<const Tensor*> ins;  // states, then scan inputs
    for (int k = 0; k < n_state + m; ++k) {
      const Tensor* t = ctx.input(1 + k);
      if (t == nullptr) {
        return ir::node_error(node, StatusCode::kInvalidModel, "input " + std::to_string(1 + k) + " is missing");
      }
      ins.push_back(t);
    }
    const Tensor& first = *ins[n_state];
    if (first.rank() < 2) {
      return ir::node_error(node, StatusCode::kInvalidArgument,
                            "scan input '" + node.inputs[1 + n_state] + "' must be [batch, sequence, ...], got shape " +
                                shape_to_string(first.shape()));
    }
    const int64_t batch = first.shape()[0], max_len = first.shape()[1];
    for (int k = 0; k < n_state + m; ++k) {
      const Tensor& t = *ins[k];
      const bool scan = k >= n_state;
      if (t.rank() < (scan ? 2 : 1) || t.shape()[0] != batch || (scan && t.shape()[1] != max_len)) {
        return ir::node_error(node, StatusCode::kInvalidArgument,
                              std::string(scan ? "scan input '" : "initial state '") + node.inputs[1 + k] +
                                  "' has shape " + shape_to_string(t.shape()) + "; expected batch " +
                                  std::to_string(batch) +
                                  (scan ? " and sequence length " + std::to_string(max_len) : ""));
      }
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
    if (const Tensor* sl = ctx.input(0)) {
      EDGEMM_ASSIGN_OR_RETURN(lens, read_int_values(node, 0, *sl));
      if (sl->rank() != 1 || static_cast<int64_t>(lens.size()) != batch) {
        return ir::node_error(
            node, StatusCode::kInvalidArgument,
            "input 'sequence_lens' must be [" + std::to_string(batch) + "], got shape " + shape_to_string(sl->shape()));
      }
      for (size_t b = 0; b < lens.size(); ++b) {
        if (lens[b] < 0 || lens[b] > max_len) {
          return ir::node_error(node, StatusCode::kInvalidArgument,
                                "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                                    " is outside [0, " + std::to_string(max_len) + "]");
        }
      }
    }
    // Per batch entry: final states, and the scan output elements in iteration order.
    std::vector<std::vector<Tensor>> finals(n_state);
    std::vector<std::vector<std::vector<Tensor>>> scans(n_scan_out, std::vector<std::vector<Tensor>>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> state, seqs;
      for (int k = 0; k < n_state; ++k) {
        EDGEMM_ASSIGN_OR_RETURN(Tensor s, take_slice(*ins[k], 0, b));
        state.push_back(std::move(s));
      }
      for (int k = 0; k < m; ++k) {
        EDGEMM_ASSIGN_OR_RETURN(Tensor s, take_slice(*ins[n_state + k], 0, b));
        seqs.push_back(std::move(s));
      }
      for (int64_t it = 0; it < lens[b]; ++it) {
        std::vector<Tensor> body_inputs = state;
        for (int k = 0; k < m; ++k) {
          const bool reverse = k < static_cast<int>(directions_.size()) && directions_[k] == 1;
          EDGEMM_ASSIGN_OR_RETURN(Tensor slice, take_slice(seqs[k], 0, reverse ? lens[b] - 1 - it : it));
          body_inputs.push_back(std::move(slice));
        }
        EDGEMM_ASSIGN_OR_RETURN(auto outs, ctx.run_subgraph(*body_, body_inputs));
        if (static_cast<int>(outs.size()) != n_state + n_scan_out) {
          return ir::node_error(node, StatusCode::kInvalidModel,
                                "body returns " + std::to_string(outs.size()) + " values; expected " +
                                    std::to_string(n_state) + " states + " + std::to_string(n_scan_out) +
                                    " scan outputs");
        }
        for (int k = 0; k < n_state; ++k) state[k] = outs[k];
        for (int k = 0; k < n_scan_out; ++k) scans[k][b].push_back(outs[n_state + k]);
      }
      for (int k = 0; k < n_state; ++k) finals[k].push_back(state[k]);
    }
    for (int k = 0; k < n_state; ++k) {
      if (batch == 0) {
        EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(k, ins[k]->dtype(), ins[k]->shape()));
        (void)out;
        continue;
      }
      EDGEMM_RETURN_IF_ERROR(stack_to_output(ctx, k, finals[k], 0, false, "state " + std::to_string(k)));
    }
    for (int k = 0; k < n_scan_out; ++k) EDGEMM_RETURN_IF_ERROR(write_scan_output(ctx, n_state + k, scans[k], max_len));
    return Status::ok();
  }

 private:
  /// Writes output `i` [B, max_len, ...] from the per-batch elements `items` (zeros past each
  /// batch entry's length).
  static Status write_scan_output(KernelContext& ctx, int i, const std::vector<std::vector<Tensor>>& items,
                                  int64_t max_len) {
    const Tensor* sample = nullptr;
    for (const auto& per_batch : items) {
      if (!per_batch.empty()) {
        sample = &per_batch[0];
        break;
      }
    }
    if (sample == nullptr) {
      return ir::node_error(ctx.node(), StatusCode::kUnsupported,
                            "scan output " + std::to_string(i) +
                                ": the body never ran (empty batch or all sequence lengths 0), so its element "
                                "shape is unknown");
    }
    Shape shape = sample->shape();
    shape.insert(shape.begin(), {static_cast<int64_t>(items.size()), max_len});
    EDGEMM_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, sample->dtype(), shape));
    if (out->byte_size() > 0) std::memset(out->raw_data(), 0, out->byte_size());
    const size_t bytes = sample->byte_size();
    char* dst = static_cast<char*>(out->raw_data());
    for (size_t b = 0; b < items.size(); ++b) {
      for (size_t t = 0; t < items[b].size(); ++t) {
        const Tensor& e = items[b][t];
        if (e.shape() != sample->shape() || e.dtype() != sample->dtype()) {
          return ir::node_error(ctx.node(), StatusCode::kInvalidArgument,
                                "scan output " + std::to_string(i) + " changes shape or dtype between iterations (" +
                                    shape_to_string(sample->shape()) + " vs " + shape_to_string(e.shape()) + ")");
        }
        if (bytes > 0) std::memcpy(dst + (b * max_len + t) * bytes, e.raw_data(), bytes);
      }
    }
    return Status::ok();
  }

  std::shared_ptr<Subgraph> body_;
  int64_t num_scan_inputs_;
  std::vector<int64_t> directions_;
};

/// Scan's required attribute num_scan_inputs (M >= 1, every version).
Expected<int64_t> read_num_scan_inputs(const ir::Node& node) {
  EDGEMM_ASSIGN_OR_RETURN(int64_t num_scan_inputs, node.attr_int("num_scan_inputs", -1));
  if (num_scan_inputs < 1) {
    return ir::node_error(
        node, StatusCode::kInvalidModel,
        "attribute 'num_scan_inputs' is required and must be >= 1, got " + std::to_string(num_scan_inputs));
  }
  return num_scan_inputs;
}

}  // namespace

void register_control_flow_kernels(KernelRegistry& registry) {
  registry.add("", "If", 1, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(auto then_branch, compile_graph_attr(info, "then_branch"));
    EDGEMM_ASSIGN_OR_RETURN(auto else_branch, compile_graph_attr(info, "else_branch"));
    return std::unique_ptr<Kernel>(std::make_unique<IfKernel>(then_branch, else_branch));
  });
  registry.add("", "Loop", 1, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(auto body, compile_graph_attr(info, "body"));
    return std::unique_ptr<Kernel>(std::make_unique<LoopKernel>(body));
  });
  registry.add("", "Scan", 8, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(auto body, compile_graph_attr(info, "body"));
    EDGEMM_ASSIGN_OR_RETURN(int64_t num_scan_inputs, read_num_scan_inputs(info.node));
    EDGEMM_ASSIGN_OR_RETURN(auto directions, info.node.attr_ints("directions"));
    if (!directions.empty() && static_cast<int64_t>(directions.size()) != num_scan_inputs) {
      return ir::node_error(info.node, StatusCode::kInvalidModel,
                            "attribute 'directions' has " + std::to_string(directions.size()) + " entries; expected " +
                                std::to_string(num_scan_inputs) + " (num_scan_inputs)");
    }
    for (int64_t d : directions) {
      if (d != 0 && d != 1) {
        return ir::node_error(info.node, StatusCode::kInvalidModel,
                              "attribute 'directions' holds " + std::to_string(d) + "; expected 0 or 1");
      }
    }
    return std::unique_ptr<Kernel>(std::make_unique<Scan8Kernel>(body, num_scan_inputs, directions));
  });
  registry.add("", "Scan", 9, [](const KernelInfo& info) -> Expected<std::unique_ptr<Kernel>> {
    EDGEMM_ASSIGN_OR_RETURN(auto body, compile_graph_attr(info, "body"));
    EDGEMM_ASSIGN_OR_RETURN(int64_t num_scan_inputs, read_num_scan_inputs(info.node));
    EDGEMM_ASSIGN_OR_RETURN(auto in_axes, info.node.attr_ints("scan_input_axes"));
    EDGEMM_ASSIGN_OR_RETURN(auto in_dirs, info.node.attr_ints("scan_input_directions"));
    EDGEMM_ASSIGN_OR_RETURN(auto out_axes, info.node.attr_ints("scan_output_axes"));
    EDGEMM_ASSIGN_OR_RETURN(auto out_dirs, info.node.attr_ints("scan_output_directions"));
    return std::unique_ptr<Kernel>(
        std::make_unique<ScanKernel>(body, num_scan_inputs, in_axes, in_dirs, out_axes, out_dirs));
  });
}

}  // namespace edgemm::kernels
