/// \file opencv_probe.cc
/// probe_capability: pre-checks, probe keys and the process-wide cache, one-node models
/// (see opencv_probe.h).

#include "backends/opencv/opencv_probe.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "backends/opencv/probe_process.h"
#include "ir/onnx_export.h"
#include "runtime/compiled_graph.h"
#include "runtime/executor.h"

namespace edgemm::backends::opencv {
namespace {

/// One input or output of the node being judged.
struct Slot {
  std::string name;                  ///< empty for an absent optional input or output
  const Tensor* constant = nullptr;  ///< the initializer, for constant inputs
  ValueInfo info;                    ///< dtype and shape (the constant's, for constants)
};

/// A node with what the graph knows about its inputs and outputs.
struct NodeView {
  const ir::Node& node;
  std::vector<Slot> inputs;
  std::vector<Slot> outputs;
};

/// The ValueInfo the graph declares or inferred for `name` (dtype undefined, rank unknown when
/// nothing is known).
ValueInfo value_info(const ir::Graph& graph, const std::string& name) {
  for (const auto* list : {&graph.inputs, &graph.outputs}) {
    for (const ValueInfo& info : *list) {
      if (info.name == name) return info;
    }
  }
  ValueInfo info;
  if (auto it = graph.value_infos.find(name); it != graph.value_infos.end()) info = it->second;
  info.name = name;
  return info;
}

Slot slot_of(const ir::Graph& graph, const std::string& name) {
  Slot slot;
  slot.name = name;
  if (name.empty()) return slot;
  if (auto it = graph.initializers.find(name); it != graph.initializers.end()) {
    slot.constant = &it->second;
    slot.info.name = name;
    slot.info.dtype = it->second.dtype();
    slot.info.rank_known = true;
    for (int64_t d : it->second.shape()) slot.info.shape.push_back(Dim{d, ""});
    return slot;
  }
  slot.info = value_info(graph, name);
  return slot;
}

NodeView view_of(const ir::Graph& graph, const ir::Node& node) {
  NodeView view{node, {}, {}};
  for (const auto& in : node.inputs) view.inputs.push_back(slot_of(graph, in));
  for (const auto& out : node.outputs) view.outputs.push_back(slot_of(graph, out));
  return view;
}

/// The static shape of `info`, or nothing when its rank or an extent is unknown.
std::optional<Shape> static_shape(const ValueInfo& info) {
  if (!info.rank_known) return std::nullopt;
  Shape shape;
  for (const Dim& d : info.shape) {
    if (!d.is_static()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

/// "[?,3,?,?]", or "of unknown rank".
std::string dims_text(const ValueInfo& info) {
  if (!info.rank_known) return "of unknown rank";
  std::string text = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    text += (i ? "," : "") + (info.shape[i].is_static() ? std::to_string(info.shape[i].value) : std::string("?"));
  }
  return text + "]";
}

/// Why a runtime input or output cannot cross into OpenCV, or nothing.
std::optional<std::string> boundary_refusal(const Slot& slot, const char* role) {
  if (slot.info.dtype != DataType::kFloat32) {
    const std::string dtype = slot.info.dtype == DataType::kUndefined ? "unknown-dtype" : dtype_name(slot.info.dtype);
    return dtype + " " + role + " '" + slot.name + "' (OpenCV DNN 4.6 exchanges float32 tensors only)";
  }
  if (!static_shape(slot.info)) {
    return std::string("dynamic ") + role + " shape " + dims_text(slot.info) +
           " (OpenCV DNN 4.6 needs static shapes: pin them with --shape on run, inspect and bench, or make the "
           "file static with `edgemm convert --fix-shape ... --simplify`)";
  }
  return std::nullopt;
}

/// Why the node cannot go to OpenCV at all, without asking it.
std::optional<std::string> refusal_without_probe(const NodeView& view) {
  for (const auto& [key, attr] : view.node.attributes) {
    if (attr.kind == ir::Attribute::Kind::kGraph) return "attribute '" + key + "' is a subgraph (runs on native)";
  }
  const std::string& domain = view.node.domain;
  if (!domain.empty() && domain != "ai.onnx") {
    return "op domain '" + domain + "' (OpenCV DNN 4.6 imports standard ONNX ops only)";
  }
  for (const Slot& in : view.inputs) {
    if (in.name.empty() || in.constant != nullptr) continue;
    if (auto reason = boundary_refusal(in, "input")) return reason;
  }
  for (const Slot& out : view.outputs) {
    if (out.name.empty()) continue;
    if (auto reason = boundary_refusal(out, "output")) return reason;
  }
  return std::nullopt;
}

void append_field(std::string& key, std::string_view field) {
  key += std::to_string(field.size());
  key += ':';
  key += field;
}

/// dtype, shape and (up to kKeyedConstantElements elements) the bytes of a tensor.
void append_tensor(std::string& key, const Tensor& t) {
  append_field(key, dtype_name(t.dtype()));
  append_field(key, shape_to_string(t.shape()));
  if (t.element_count() <= kKeyedConstantElements) {
    append_field(key, std::string_view(static_cast<const char*>(t.raw_data()), t.byte_size()));
  }
}

void append_attribute(std::string& key, const ir::Attribute& attr) {
  using Kind = ir::Attribute::Kind;
  key += std::to_string(static_cast<int>(attr.kind));
  switch (attr.kind) {
    case Kind::kFloat:
      append_field(key, std::to_string(std::bit_cast<uint32_t>(attr.f)));
      break;
    case Kind::kInt:
      append_field(key, std::to_string(attr.i));
      break;
    case Kind::kString:
      append_field(key, attr.s);
      break;
    case Kind::kTensor:
      append_tensor(key, attr.t);
      break;
    case Kind::kGraph:
      break;  // refused before keys are made
    case Kind::kFloats:
      for (float f : attr.floats) append_field(key, std::to_string(std::bit_cast<uint32_t>(f)));
      break;
    case Kind::kInts:
      for (int64_t i : attr.ints) append_field(key, std::to_string(i));
      break;
    case Kind::kStrings:
      for (const auto& s : attr.strings) append_field(key, s);
      break;
  }
}

void append_slot(std::string& key, const Slot& slot) {
  if (slot.name.empty()) {
    key += '-';
  } else if (slot.constant != nullptr) {
    key += 'c';
    append_tensor(key, *slot.constant);
  } else {
    key += 'r';
    append_field(key, shape_to_string(*static_shape(slot.info)));
  }
}

/// The cache key of a node that passed refusal_without_probe (runtime slots are float32 with
/// static shapes, so their shape stands for them).
std::string probe_key(const ir::Model& model, const NodeView& view) {
  std::string key;
  append_field(key, view.node.domain);
  append_field(key, view.node.op_type);
  append_field(key, std::to_string(model.opset(view.node.domain)));
  for (const auto& [name, attr] : view.node.attributes) {
    append_field(key, name);
    append_attribute(key, attr);
  }
  key += '|';
  for (const Slot& in : view.inputs) append_slot(key, in);
  key += '|';
  for (const Slot& out : view.outputs) append_slot(key, out);
  return key;
}

/// "Resize(float32[1,3,4,4], constant float32[4]) with mode='cubic'": the op, its inputs and the
/// attributes whose name or string value `message` mentions.
std::string describe(const NodeView& view, const std::string& message) {
  std::string text = view.node.op_type + "(";
  for (size_t i = 0; i < view.inputs.size(); ++i) {
    const Slot& in = view.inputs[i];
    text += i ? ", " : "";
    if (in.name.empty()) {
      text += "absent";
      continue;
    }
    text += (in.constant ? "constant " : "") + std::string(dtype_name(in.info.dtype)) + dims_text(in.info);
  }
  text += ")";
  std::string mentioned;
  for (const auto& [name, attr] : view.node.attributes) {
    const bool named = message.find(name) != std::string::npos;
    const bool valued =
        attr.kind == ir::Attribute::Kind::kString && !attr.s.empty() && message.find(attr.s) != std::string::npos;
    if (!named && !valued) continue;
    std::string value = attr.kind == ir::Attribute::Kind::kString ? "'" + attr.s + "'"
                        : attr.kind == ir::Attribute::Kind::kInt  ? std::to_string(attr.i)
                                                                  : "...";
    mentioned += (mentioned.empty() ? " with " : ", ") + name + "=" + value;
  }
  return text + mentioned;
}

/// The one-node model of `view`: its constant inputs as initializers, the others as graph inputs.
ir::Model one_node_model(const ir::Model& model, const NodeView& view) {
  ir::Model one;
  one.ir_version = model.ir_version;
  one.producer_name = model.producer_name;
  one.opsets = model.opsets;
  one.opsets.erase(ir::kEdgemmDomain);
  one.graph.name = "probe";
  one.graph.nodes.push_back(view.node);
  for (const Slot& in : view.inputs) {
    if (in.name.empty()) continue;
    if (in.constant != nullptr) {
      one.graph.initializers.emplace(in.name, *in.constant);
    } else if (std::none_of(one.graph.inputs.begin(), one.graph.inputs.end(),
                            [&](const ValueInfo& v) { return v.name == in.name; })) {
      one.graph.inputs.push_back(in.info);
    }
  }
  for (const Slot& out : view.outputs) {
    if (!out.name.empty()) one.graph.outputs.push_back(out.info);
  }
  return one;
}

/// Seeded float32 values in [-1, 1) of `shape`: a 32-bit integer hash (Wellons' lowbias32) of
/// seed + element index, which vectorizes (probes of a 640×640 detector fill about 10^8).
Expected<Tensor> seeded_values(const Shape& shape, uint32_t seed) {
  EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(DataType::kFloat32, shape));
  float* p = t.data<float>();
  const uint32_t base = seed * 0x9E3779B9u;
  for (int64_t i = 0; i < t.element_count(); ++i) {
    uint32_t x = base + static_cast<uint32_t>(i);
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    p[i] = static_cast<float>(static_cast<int32_t>(x >> 8)) * 0x1.0p-23f - 1.0f;
  }
  return t;
}

/// What edgemm's native kernels compute for `one` on `inputs`; empty when they cannot run it.
std::vector<Tensor> native_outputs(const ir::Model& one, const std::vector<Tensor>& inputs) {
  auto compiled = runtime::CompiledGraph::compile(std::make_shared<const ir::Graph>(one.graph), one.opsets, {});
  if (!compiled) return {};
  auto outputs = runtime::execute(**compiled, inputs, nullptr, runtime::ExecOptions{}, nullptr);
  return outputs ? std::move(outputs).value() : std::vector<Tensor>{};
}

/// The probe of `view`: its one-node model serialized, seeded inputs, the native outputs.
Expected<ProbeJob> make_job(const ir::Model& model, const NodeView& view) {
  const ir::Model one = one_node_model(model, view);
  ProbeJob job;
  EDGEMM_ASSIGN_OR_RETURN(job.onnx, ir::export_onnx_bytes(one));
  for (const ValueInfo& in : one.graph.inputs) {
    const Shape shape = *static_shape(in);
    job.inputs.push_back({in.name, shape});
    EDGEMM_ASSIGN_OR_RETURN(Tensor values, seeded_values(shape, static_cast<uint32_t>(job.input_values.size() + 1)));
    job.input_values.push_back(std::move(values));
  }
  for (const ValueInfo& out : one.graph.outputs) job.outputs.push_back({out.name, *static_shape(out)});
  job.expected = native_outputs(one, job.input_values);
  return job;
}

/// Verdicts by probe key, shared by every opencv backend of the process.
class ProbeCache {
 public:
  std::optional<NodeSupport> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = verdicts_.find(key);
    if (it == verdicts_.end()) return std::nullopt;
    return it->second;
  }
  void store(const std::string& key, const NodeSupport& verdict) {
    std::lock_guard<std::mutex> lock(mutex_);
    verdicts_[key] = verdict;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, NodeSupport> verdicts_;
};

ProbeCache& cache() {
  static ProbeCache c;
  return c;
}

/// The probes one capability() call must run: one per distinct key not in the cache.
struct Probes {
  std::vector<std::string> keys;                              ///< in the order first met
  std::unordered_map<std::string, std::vector<int>> waiting;  ///< key -> nodes; the first is probed
};

/// Gives the nodes of `key` their verdict from `answer` and caches it when it is about the node.
void settle(const ir::Model& model, const Probes& probes, const std::string& key, const ProbeAnswer& answer,
            std::vector<NodeSupport>& verdicts) {
  const std::vector<int>& nodes = probes.waiting.at(key);
  NodeSupport verdict{answer.reason.empty(), ""};
  if (!verdict.supported) {
    const NodeView view = view_of(model.graph, model.graph.nodes[nodes.front()]);
    verdict.reason = describe(view, answer.reason) + ": " + answer.reason;
  }
  if (answer.about_node) cache().store(key, verdict);
  for (int n : nodes) verdicts[n] = verdict;
}

/// Runs every probe through one ProbeProcess, preparing each job (export, seeded inputs, native
/// outputs) while the child still works on the one before.
void probe_all(const ir::Model& model, const Probes& probes, std::vector<NodeSupport>& verdicts) {
  ProbeProcess process;
  const std::string* in_flight = nullptr;
  for (const std::string& key : probes.keys) {
    auto job = make_job(model, view_of(model.graph, model.graph.nodes[probes.waiting.at(key).front()]));
    if (in_flight != nullptr) settle(model, probes, *in_flight, process.wait(), verdicts);
    in_flight = nullptr;
    if (!job) {
      settle(model, probes, key, {"edgemm cannot export it to ONNX: " + job.status().message(), true}, verdicts);
      continue;
    }
    (void)process.submit(*job);  // a failure comes back from wait()
    in_flight = &key;
  }
  if (in_flight != nullptr) settle(model, probes, *in_flight, process.wait(), verdicts);
}

}  // namespace

std::vector<NodeSupport> probe_capability(const ir::Model& model, ProbeStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  const ir::Graph& graph = model.graph;
  std::vector<NodeSupport> verdicts(graph.nodes.size());
  ProbeStats counts;
  counts.nodes = static_cast<int>(graph.nodes.size());
  Probes probes;
  for (int n = 0; n < counts.nodes; ++n) {
    const NodeView view = view_of(graph, graph.nodes[n]);
    if (auto reason = refusal_without_probe(view)) {
      verdicts[n] = {false, *reason};
      ++counts.prechecked;
      continue;
    }
    const std::string key = probe_key(model, view);
    if (auto known = cache().find(key)) {
      verdicts[n] = *known;
      ++counts.cached;
      continue;
    }
    std::vector<int>& nodes = probes.waiting[key];
    if (nodes.empty()) probes.keys.push_back(key);
    nodes.push_back(n);
  }
  probe_all(model, probes, verdicts);
  counts.probed = static_cast<int>(probes.keys.size());
  counts.cached += counts.nodes - counts.prechecked - counts.cached - counts.probed;
  counts.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = counts;
  return verdicts;
}

}  // namespace edgemm::backends::opencv
