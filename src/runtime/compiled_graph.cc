#include "runtime/compiled_graph.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <queue>

namespace edgemm::runtime {

int CompiledGraph::value_index(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

namespace {

/// Frees, from a graph its owner handed over, each initializer that no kernel reads as stored
/// (Kernel::reads_constant_input) once its last reader is compiled, and those no node reads;
/// keeps graph outputs and values that subgraphs read. Remembers the freed ones' dtype and shape.
class PackedConstantRelease {
 public:
  PackedConstantRelease(ir::Graph& graph, const std::vector<std::vector<std::string>>& implicit) : graph_(graph) {
    for (const auto& [name, t] : graph.initializers) readers_left_[name] = 0;
    for (const ir::Node& node : graph.nodes) {
      for (const std::string& in : node.inputs) {
        auto it = readers_left_.find(in);
        if (it != readers_left_.end()) ++it->second;
      }
    }
    for (const auto& names : implicit) kept_.insert(names.begin(), names.end());
    for (const ValueInfo& out : graph.outputs) kept_.insert(out.name);
    std::vector<std::string> unused;
    for (const auto& [name, count] : readers_left_) {
      if (count == 0) unused.push_back(name);
    }
    for (const std::string& name : unused) free_if_unread(name);
  }

  /// Called after `node`'s kernel is created.
  void compiled(const ir::Node& node, const kernels::Kernel& kernel) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto it = readers_left_.find(node.inputs[i]);
      if (it == readers_left_.end()) continue;
      if (kernel.reads_constant_input(static_cast<int>(i))) kept_.insert(it->first);
      if (--it->second == 0) free_if_unread(it->first);
    }
  }

  /// The freed initializers as tensors with their dtype and shape and null data.
  const std::map<std::string, Tensor>& freed() const { return freed_; }

 private:
  void free_if_unread(const std::string& name) {
    if (kept_.count(name)) return;
    auto it = graph_.initializers.find(name);
    freed_[name] = Tensor::borrow(it->second.dtype(), it->second.shape(), nullptr);
    graph_.initializers.erase(it);
  }

  ir::Graph& graph_;
  std::unordered_map<std::string, int> readers_left_;
  std::unordered_set<std::string> kept_;
  std::map<std::string, Tensor> freed_;
};

/// A node's kernel factory and what it is called with, found before the kernels are made.
struct PendingKernel {
  const kernels::KernelFactory* factory = nullptr;
  int64_t opset = 0;
  std::vector<const Tensor*> constants;  // per input: its initializer, or null
};

/// The factory's kernel for `info`; an exception (a library's error) becomes kInternal naming the
/// node, since kernels are made inside an OpenMP region, which an exception must not leave.
Expected<std::unique_ptr<kernels::Kernel>> make_kernel(const kernels::KernelFactory& factory,
                                                       const kernels::KernelInfo& info) {
  try {
    return factory(info);
  } catch (const std::exception& e) {
    return ir::node_error(info.node, StatusCode::kInternal, std::string("making its kernel failed: ") + e.what());
  }
}

}  // namespace

Expected<std::shared_ptr<CompiledGraph>> CompiledGraph::compile(std::shared_ptr<const ir::Graph> graph,
                                                                const std::map<std::string, int64_t>& opsets,
                                                                const std::unordered_set<std::string>& outer_names,
                                                                const kernels::KernelRegistry* extra) {
  return compile_graph(std::move(graph), nullptr, opsets, outer_names, extra, 1);
}

Expected<std::shared_ptr<CompiledGraph>> CompiledGraph::compile_freeing_packed(
    std::shared_ptr<ir::Graph> graph, const std::map<std::string, int64_t>& opsets,
    const kernels::KernelRegistry* extra, int threads) {
  ir::Graph* owned = graph.get();
  return compile_graph(std::move(graph), owned, opsets, {}, extra, threads);
}

Expected<std::shared_ptr<CompiledGraph>> CompiledGraph::compile_graph(
    std::shared_ptr<const ir::Graph> graph, ir::Graph* owned, const std::map<std::string, int64_t>& opsets,
    const std::unordered_set<std::string>& outer_names, const kernels::KernelRegistry* extra, int threads) {
  auto cg = std::shared_ptr<CompiledGraph>(new CompiledGraph());
  cg->graph_ = graph;
  const ir::Graph& g = *graph;
  auto intern = [&](const std::string& name) {
    auto [it, inserted] = cg->index_.emplace(name, static_cast<int>(cg->value_names_.size()));
    if (inserted) cg->value_names_.push_back(name);
    return it->second;
  };

  // Values: inputs, initializers, node outputs; then outer references.
  for (const auto& in : g.inputs) {
    cg->graph_inputs_.push_back(intern(in.name));
    cg->input_names_.push_back(in.name);
  }
  for (const auto& [name, t] : g.initializers) intern(name);
  std::vector<int> producer_node_of_value;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (const auto& out : g.nodes[n].outputs) {
      if (out.empty()) continue;
      if (cg->index_.count(out) &&
          (g.initializers.count(out) ||
           std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == out; }))) {
        return ir::node_error(g.nodes[n], StatusCode::kInvalidModel,
                              "output '" + out + "' redefines a graph input or initializer");
      }
      intern(out);
    }
  }
  const auto locally_defined = ir::defined_names(g);
  std::unordered_set<std::string> visible = outer_names;
  visible.insert(locally_defined.begin(), locally_defined.end());

  auto resolve = [&](const ir::Node& node, const std::string& name) -> Expected<int> {
    if (locally_defined.count(name)) return cg->index_.at(name);
    if (outer_names.count(name)) {
      bool fresh = !cg->index_.count(name);
      int v = intern(name);
      if (fresh) cg->outer_values_.push_back(v);
      return v;
    }
    return ir::node_error(node, StatusCode::kInvalidModel,
                          "input '" + name + "' is not a graph input, an initializer or any node's output");
  };

  // Producers and dependencies for a stable topological order (Kahn, file order as tie-break).
  const size_t n_nodes = g.nodes.size();
  std::unordered_map<std::string, size_t> producer;
  for (size_t n = 0; n < n_nodes; ++n) {
    for (const auto& out : g.nodes[n].outputs) {
      if (out.empty()) continue;
      if (producer.count(out)) {
        return ir::node_error(g.nodes[n], StatusCode::kInvalidModel,
                              "output '" + out + "' is also produced by another node");
      }
      producer[out] = n;
    }
  }
  // What subgraphs of this graph's nodes may read from outside them: made once (a copy per node
  // made loading quadratic in the node count).
  const auto sub_outer = std::make_shared<const std::unordered_set<std::string>>(visible);
  std::vector<std::vector<size_t>> users(n_nodes);
  std::vector<int> pending(n_nodes, 0);
  std::vector<std::vector<std::string>> implicit(n_nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    const auto& node = g.nodes[n];
    std::unordered_set<std::string> deps(node.inputs.begin(), node.inputs.end());
    for (const auto& name : ir::node_free_variables(node)) {
      if (visible.count(name)) {
        deps.insert(name);
        implicit[n].push_back(name);
      }
    }
    deps.erase("");
    for (const auto& d : deps) {
      auto it = producer.find(d);
      if (it != producer.end()) {
        users[it->second].push_back(n);
        ++pending[n];
      }
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t n = 0; n < n_nodes; ++n) {
    if (pending[n] == 0) ready.push(n);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t n = ready.top();
    ready.pop();
    order.push_back(n);
    for (size_t u : users[n]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != n_nodes) {
    for (size_t n = 0; n < n_nodes; ++n) {
      if (pending[n] > 0) {
        return ir::node_error(g.nodes[n], StatusCode::kInvalidModel, "is part of a cycle in the graph");
      }
    }
  }

  // Kernels: factories found in order, then the kernels made (weights packed) on `threads`
  // threads, a wave of nodes at a time; the initializers a wave's kernels packed are freed after
  // it.
  std::optional<PackedConstantRelease> release;
  if (owned != nullptr) release.emplace(*owned, implicit);
  std::vector<std::string> unsupported;
  std::vector<PendingKernel> pending_kernels;
  const kernels::KernelRegistry& registry = kernels::cpu_registry();
  for (size_t n : order) {
    const ir::Node& node = g.nodes[n];
    CompiledNode cn;
    cn.node = &node;
    PendingKernel made;
    for (const auto& in : node.inputs) {
      if (in.empty()) {
        cn.inputs.push_back(-1);
        made.constants.push_back(nullptr);
        continue;
      }
      EDGEMM_ASSIGN_OR_RETURN(int v, resolve(node, in));
      cn.inputs.push_back(v);
      auto it = g.initializers.find(in);
      made.constants.push_back(it == g.initializers.end() ? nullptr : &it->second);
    }
    for (const auto& out : node.outputs) cn.outputs.push_back(out.empty() ? -1 : cg->index_.at(out));
    for (const auto& name : implicit[n]) {
      EDGEMM_ASSIGN_OR_RETURN(int v, resolve(node, name));
      cn.implicit_inputs.push_back(v);
    }
    const std::string domain = node.domain == "ai.onnx" ? "" : node.domain;
    auto opset_it = opsets.find(domain);
    made.opset = opset_it == opsets.end() ? 0 : opset_it->second;
    made.factory = extra != nullptr ? extra->find(domain, node.op_type, made.opset) : nullptr;
    if (made.factory == nullptr) made.factory = registry.find(domain, node.op_type, made.opset);
    if (made.factory == nullptr) {
      unsupported.push_back(node.describe() + " (" + (domain.empty() ? "ai.onnx" : domain) + " opset " +
                            std::to_string(made.opset) + ")");
      continue;
    }
    cg->nodes_.push_back(std::move(cn));
    pending_kernels.push_back(std::move(made));
  }
  if (!unsupported.empty()) {
    std::string msg = std::to_string(unsupported.size()) + " node(s) have no CPU kernel: ";
    for (size_t i = 0; i < unsupported.size() && i < 8; ++i) msg += (i ? "; " : "") + unsupported[i];
    if (unsupported.size() > 8) msg += "; ...";
    return make_error(StatusCode::kUnsupported, msg);
  }
  const std::function<Expected<std::shared_ptr<kernels::Subgraph>>(const ir::Graph&)> compile_subgraph =
      [&opsets, sub_outer, extra](const ir::Graph& sub) -> Expected<std::shared_ptr<kernels::Subgraph>> {
    // Subgraph attributes live as long as the node that owns them.
    auto shared = std::shared_ptr<const ir::Graph>(std::shared_ptr<const ir::Graph>(), &sub);
    EDGEMM_ASSIGN_OR_RETURN(auto compiled, CompiledGraph::compile(shared, opsets, *sub_outer, extra));
    return std::shared_ptr<kernels::Subgraph>(std::move(compiled));
  };
  // A wave of kWaveNodes nodes per thread: most nodes pack nothing, so that each wave holds a few
  // weights to pack for every thread; their unpacked copies are freed at the wave's end.
  constexpr int64_t kWaveNodes = 8;
  const int64_t count = static_cast<int64_t>(cg->nodes_.size());
  const int64_t wave = threads > 1 ? kWaveNodes * threads : 1;
  for (int64_t first = 0; first < count; first += wave) {
    const int64_t last = std::min(count, first + wave);
    std::vector<std::optional<Expected<std::unique_ptr<kernels::Kernel>>>> kernels(static_cast<size_t>(last - first));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (last - first > 1)
    for (int64_t i = first; i < last; ++i) {
      const PendingKernel& made = pending_kernels[static_cast<size_t>(i)];
      kernels[static_cast<size_t>(i - first)] =
          make_kernel(*made.factory, {*cg->nodes_[i].node, made.opset, made.constants, compile_subgraph});
    }
    for (int64_t i = first; i < last; ++i) {
      CompiledNode& cn = cg->nodes_[static_cast<size_t>(i)];
      EDGEMM_ASSIGN_OR_RETURN(cn.kernel, std::move(*kernels[static_cast<size_t>(i - first)]));
      if (release) release->compiled(*cn.node, *cn.kernel);
    }
  }

  // Constants, outputs, lifetimes.
  const int nv = cg->value_count();
  cg->constants_.resize(nv);
  for (const auto& [name, t] : g.initializers) cg->constants_[cg->index_.at(name)] = t;
  if (release) {
    for (const auto& [name, t] : release->freed()) cg->constants_[cg->index_.at(name)] = t;
  }
  cg->is_output_.assign(nv, false);
  for (const auto& out : g.outputs) {
    auto it = cg->index_.find(out.name);
    int v;
    if (it != cg->index_.end()) {
      v = it->second;
    } else if (outer_names.count(out.name)) {
      v = intern(out.name);
      cg->outer_values_.push_back(v);
      cg->constants_.resize(cg->value_count());
      cg->is_output_.resize(cg->value_count(), false);
    } else {
      return make_error(StatusCode::kInvalidModel, "graph output '" + out.name + "' is not produced by any node");
    }
    cg->graph_outputs_.push_back(v);
    cg->output_names_.push_back(out.name);
    cg->is_output_[v] = true;
  }
  const int total = cg->value_count();
  cg->producer_step_.assign(total, -1);
  std::vector<int> last_use(total, -1);
  for (int s = 0; s < static_cast<int>(cg->nodes_.size()); ++s) {
    const auto& cn = cg->nodes_[s];
    for (int v : cn.outputs) {
      if (v >= 0) cg->producer_step_[v] = s;
    }
    for (int v : cn.inputs) {
      if (v >= 0) last_use[v] = s;
    }
    for (int v : cn.implicit_inputs) last_use[v] = s;
  }
  for (int v = 0; v < total; ++v) {
    if (cg->is_output_[v] || cg->constants_[v].defined()) continue;
    const bool outer = std::find(cg->outer_values_.begin(), cg->outer_values_.end(), v) != cg->outer_values_.end();
    if (outer) continue;
    int step = last_use[v] >= 0 ? last_use[v] : cg->producer_step_[v];
    if (step >= 0) cg->nodes_[step].release_after.push_back(v);
  }
  return cg;
}

int64_t CompiledGraph::packed_bytes() const {
  int64_t bytes = 0;
  for (const CompiledNode& cn : nodes_) bytes += cn.kernel->packed_bytes();
  return bytes;
}

}  // namespace edgemm::runtime
