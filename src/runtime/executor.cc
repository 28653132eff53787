#include "runtime/executor.h"

#include <cstdio>

#include "ir/flops.h"

namespace edgemm::runtime {

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

class NodeContext final : public kernels::KernelContext {
 public:
  NodeContext(const CompiledNode& cn, Frame& frame, const ExecOptions& options, ValueAllocator* allocator, int depth)
      : cn_(cn),
        frame_(frame),
        options_(options),
        allocator_(allocator),
        depth_(depth),
        scratch_(cn.outputs.size()),
        allocated_(cn.outputs.size(), nullptr) {}

  const ir::Node& node() const override { return *cn_.node; }
  int input_count() const override { return static_cast<int>(cn_.inputs.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= input_count() || cn_.inputs[i] < 0) return nullptr;
    const Tensor& t = frame_.values[cn_.inputs[i]];
    return t.defined() ? &t : nullptr;
  }
  int output_count() const override { return static_cast<int>(cn_.outputs.size()); }
  bool output_wanted(int i) const override { return i >= 0 && i < output_count() && cn_.outputs[i] >= 0; }
  int threads() const override { return options_.threads; }

  Expected<Tensor*> allocate_output(int i, DataType dtype, const Shape& shape) override {
    if (i < 0 || i >= output_count()) {
      return ir::node_error(
          *cn_.node, StatusCode::kInternal,
          "kernel asked for output " + std::to_string(i) + " but the node lists " + std::to_string(output_count()));
    }
    const int v = cn_.outputs[i];
    auto made = (v >= 0 && allocator_) ? allocator_->allocate(v, dtype, shape) : Tensor::create(dtype, shape);
    if (!made) {
      return ir::node_error(*cn_.node, made.status().code(),
                            "output " + std::to_string(i) + ": " + made.status().message());
    }
    Tensor& slot = v >= 0 ? frame_.values[v] : scratch_[i];
    slot = std::move(made).value();
    allocated_[i] = slot.raw_data();
    return &slot;
  }

  Expected<std::vector<Tensor>> run_subgraph(const kernels::Subgraph& graph,
                                             const std::vector<Tensor>& inputs) override {
    return execute(static_cast<const CompiledGraph&>(graph), inputs, &frame_, options_, nullptr, depth_ + 1);
  }

  /// After run(): every listed output was allocated and still owns the buffer it was given.
  Status check_outputs() const {
    for (int i = 0; i < output_count(); ++i) {
      const int v = cn_.outputs[i];
      if (v < 0) continue;
      if (allocated_[i] == nullptr || frame_.values[v].raw_data() != allocated_[i]) {
        return ir::node_error(*cn_.node, StatusCode::kInternal,
                              "kernel " + std::string(cn_.kernel->name()) + " did not write output " +
                                  std::to_string(i) + " '" + cn_.node->outputs[i] + "' through allocate_output");
      }
    }
    return Status::ok();
  }

 private:
  const CompiledNode& cn_;
  Frame& frame_;
  const ExecOptions& options_;
  ValueAllocator* allocator_;
  int depth_;
  std::vector<Tensor> scratch_;
  std::vector<const void*> allocated_;
};

/// Runs a kernel, turning any exception from a library (oneDNN, std) into an error status.
Status run_kernel(const CompiledNode& cn, NodeContext& ctx) {
  try {
    return cn.kernel->run(ctx);
  } catch (const std::bad_alloc&) {
    return ir::node_error(*cn.node, StatusCode::kOutOfMemory, "ran out of memory");
  } catch (const std::exception& e) {
    return ir::node_error(*cn.node, StatusCode::kInternal,
                          std::string("kernel ") + cn.kernel->name() + " failed: " + e.what());
  }
}

/// The profile of a node that ran from `start_us` to `end_us`: names, computed output shapes,
/// FLOPs from the actual shapes and bytes of the tensors read and written.
NodeProfile profile_node(const CompiledNode& cn, const NodeContext& ctx, const Frame& frame, double start_us,
                         double end_us, int depth) {
  NodeProfile p{cn.node->name, cn.node->op_type, cn.kernel->name(), {}, start_us, end_us - start_us, 0, 0, depth};
  ir::NodeShapes inputs, outputs;
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* t = ctx.input(i);
    inputs.push_back(t ? std::optional<Shape>(t->shape()) : std::nullopt);
    if (t) p.bytes += static_cast<int64_t>(t->byte_size());
  }
  for (int v : cn.outputs) {
    const Tensor* t = v >= 0 ? &frame.values[v] : nullptr;
    outputs.push_back(t ? std::optional<Shape>(t->shape()) : std::nullopt);
    if (t == nullptr) continue;
    p.output_shapes.push_back(t->shape());
    p.bytes += static_cast<int64_t>(t->byte_size());
  }
  p.flops = ir::node_flops(*cn.node, inputs, outputs).value_or(0);
  return p;
}

std::string fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

double Profiler::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}


const Tensor* Frame::lookup(const std::string& name) const {
  for (const Frame* f = this; f != nullptr; f = f->parent) {
    const int v = f->graph->value_index(name);
    if (v >= 0 && f->values[v].defined()) return &f->values[v];
  }
  return nullptr;
}

Expected<std::vector<Tensor>> execute(const CompiledGraph& graph, const std::vector<Tensor>& inputs,
                                      const Frame* parent, const ExecOptions& options, ValueAllocator* allocator,
                                      int depth) {
  Frame frame;
  frame.graph = &graph;
  frame.parent = parent;
  frame.values.resize(graph.value_count());
  const auto& in_ids = graph.graph_inputs();
  if (inputs.size() != in_ids.size()) {
    return make_error(StatusCode::kInvalidArgument, "graph '" + graph.graph().name + "' expects " +
                                                        std::to_string(in_ids.size()) + " inputs, got " +
                                                        std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < in_ids.size(); ++i) frame.values[in_ids[i]] = inputs[i];
  for (int v = 0; v < graph.value_count(); ++v) {
    if (const Tensor* c = graph.constant(v)) frame.values[v] = *c;
  }
  for (int v : graph.outer_values()) {
    const Tensor* t = parent ? parent->lookup(graph.value_name(v)) : nullptr;
    if (t == nullptr) {
      return make_error(StatusCode::kInvalidModel, "subgraph '" + graph.graph().name + "' reads '" +
                                                       graph.value_name(v) + "', which no enclosing graph defines");
    }
    frame.values[v] = *t;
  }

  for (const CompiledNode& cn : graph.nodes()) {
    NodeContext ctx(cn, frame, options, allocator, depth);
    const double start = options.profiler ? options.profiler->now_us() : 0;
    Status status = run_kernel(cn, ctx);
    if (!status.is_ok()) return status;
    EDGEMM_RETURN_IF_ERROR(ctx.check_outputs());
    if (options.profiler) {
      options.profiler->add(profile_node(cn, ctx, frame, start, options.profiler->now_us(), depth));
    }
    for (int v : cn.release_after) frame.values[v] = Tensor();
  }

  std::vector<Tensor> outputs;
  for (int v : graph.graph_outputs()) {
    const Tensor& t = frame.values[v];
    if (!t.defined()) {
      return make_error(StatusCode::kInternal, "graph output '" + graph.value_name(v) + "' was not computed");
    }
    if (graph.producer_step(v) >= 0) {
      outputs.push_back(t);
    } else {  // an input, constant or outer value: give the caller its own copy
      EDGEMM_ASSIGN_OR_RETURN(Tensor copy, t.clone());
      outputs.push_back(std::move(copy));
    }
  }
  return outputs;
}

}  // namespace edgemm::runtime

namespace edgemm {

std::string chrome_trace_json(const std::vector<NodeProfile>& events) {
  using namespace runtime;  // json_escape, fixed3
  std::string out = "{\"traceEvents\":[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    const NodeProfile& e = events[i];
    std::string shapes;
    for (const Shape& s : e.output_shapes) shapes += shape_to_string(s);
    out += "{\"name\":\"" + json_escape(e.node.empty() ? e.op_type : e.node) + "\",\"cat\":\"" +
           json_escape(e.op_type) + "\",\"ph\":\"X\",\"ts\":" + fixed3(e.start_us) +
           ",\"dur\":" + fixed3(e.duration_us) + ",\"pid\":1,\"tid\":" + std::to_string(1 + e.depth) +
           ",\"args\":{\"op_type\":\"" + json_escape(e.op_type) + "\",\"kernel\":\"" + json_escape(e.kernel) +
           "\",\"output_shapes\":\"" + json_escape(shapes) + "\",\"flops\":" + std::to_string(e.flops) +
           ",\"bytes\":" + std::to_string(e.bytes) + "}}";
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  return out + "],\"displayTimeUnit\":\"ms\"}\n";
}

}  // namespace edgemm
