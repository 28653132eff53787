/// Inferencer implementation for the native CPU runtime: import → passes → compile; run with
/// input validation, a buffer-reuse plan per input-shape signature, and optional profiling.

#include "edgemm/inferencer.h"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "backends/backend.h"
#include "backends/partition.h"
#include "edgemm/atomic_file.h"
#include "ir/onnx_import.h"
#include "kernels/cpu/matmul_panels.h"
#include "kernels/cpu_features.h"
#include "passes/passes.h"
#include "runtime/compiled_graph.h"
#include "runtime/executor.h"
#include "runtime/memory_planner.h"
#include "session/rewrite_load.h"

namespace edgemm {

namespace {

using runtime::CompiledGraph;

/// Sets the calling thread's OpenMP thread count (oneDNN and our loops read it) for one run and
/// gives the caller's own value back afterwards, so a host program's OpenMP regions keep theirs.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OmpThreadsScope() { omp_set_num_threads(previous_); }
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int previous_;
};
using runtime::MemoryPlan;

/// Heap buffers recycled as values die: a block freed by one value is taken by a later value of
/// up to its size (and at least half of it). Without it a new shape's first run touches the sum
/// of all its intermediates (3 GB for a PP-OCRv4 rec batch of 6×48×800) instead of about its
/// peak live memory. Blocks outliving the pool (graph outputs) are freed by their last owner.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  ~BufferPool() {
    for (const auto& [capacity, block] : free_) std::free(block);
  }
  /// A 64-byte-aligned block of at least `bytes`, or null when the heap refuses.
  std::shared_ptr<void> take(size_t bytes) {
    const size_t wanted = std::max<size_t>((bytes + 63) / 64 * 64, 64);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.lower_bound(wanted);
      if (it != free_.end() && it->first <= 2 * wanted) {
        const auto [capacity, block] = *it;
        free_.erase(it);
        return own(block, capacity);
      }
    }
    void* block = std::aligned_alloc(64, wanted);
    return block == nullptr ? nullptr : own(block, wanted);
  }

 private:
  std::shared_ptr<void> own(void* block, size_t capacity) {
    std::weak_ptr<BufferPool> pool = weak_from_this();
    return std::shared_ptr<void>(block, [pool, capacity](void* p) {
      if (auto alive = pool.lock()) {
        std::lock_guard<std::mutex> lock(alive->mutex_);
        alive->free_.emplace(capacity, p);
      } else {
        std::free(p);
      }
    });
  }
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // capacity → block
};

/// A tensor of `dtype` and `shape` in a block from `pool`; Tensor::create's error for absurd
/// shapes and unsupported dtypes, OutOfMemory when the heap refuses.
Expected<Tensor> pooled_tensor(BufferPool& pool, DataType dtype, const Shape& shape) {
  const Expected<int64_t> count = shape_element_count(shape);
  const int64_t element = static_cast<int64_t>(dtype_size(dtype));
  if (!count.has_value() || !dtype_supported(dtype) || *count > kMaxTensorBytes / std::max<int64_t>(element, 1)) {
    return Tensor::create(dtype, shape);  // the error, worded once, in Tensor::create
  }
  const int64_t size = *count * element;
  std::shared_ptr<void> block = pool.take(static_cast<size_t>(size));
  if (block == nullptr) {
    return make_error(StatusCode::kOutOfMemory, "could not allocate " + std::to_string(size) +
                                                    " bytes for a tensor of shape " + shape_to_string(shape));
  }
  void* data = block.get();
  return Tensor::from_storage(dtype, shape, std::move(block), data);
}

/// The recorded sizes of one input-shape signature, the memory plan made from them, and a pool
/// of arenas sized for it (one per concurrent run). The plan is made when the signature comes
/// back (or a report asks for it), not after the recording run: a decode loop, whose signature
/// changes every step, would otherwise plan thousands of values per token for nothing.
struct PlanEntry {
  explicit PlanEntry(std::vector<int64_t> recorded_bytes) : recorded(std::move(recorded_bytes)) {}

  /// The plan, made on the first call.
  const MemoryPlan& plan_for(const CompiledGraph& graph) {
    std::call_once(planned, [&] {
      plan = runtime::plan_memory(graph, recorded);
      recorded = {};
    });
    return plan;
  }

  std::vector<int64_t> recorded;
  std::once_flag planned;
  MemoryPlan plan;
  /// Values outside the arena (graph outputs, values above their planned size): their blocks come
  /// back here when the caller drops the outputs, so that a steady stream of runs does not fault
  /// in fresh pages for them every time (0.5 ms of 55 for CLIP ViT-B/32's 150 KB hidden state).
  std::shared_ptr<BufferPool> unplanned = std::make_shared<BufferPool>();
  std::mutex pool_mutex;
  std::vector<std::shared_ptr<void>> free_arenas;

  std::shared_ptr<void> take_arena() {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!free_arenas.empty()) {
        auto a = std::move(free_arenas.back());
        free_arenas.pop_back();
        return a;
      }
    }
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(plan.arena_bytes, runtime::kPlanAlignment));
    void* p = std::aligned_alloc(runtime::kPlanAlignment, bytes);
    if (p == nullptr) return nullptr;
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  void give_back(std::shared_ptr<void> arena) {
    std::lock_guard<std::mutex> lock(pool_mutex);
    free_arenas.push_back(std::move(arena));
  }
};

/// First run of a signature: recycled heap buffers, sizes recorded for planning.
class RecordingAllocator final : public runtime::ValueAllocator {
 public:
  explicit RecordingAllocator(int values) : bytes(values, 0), pool_(std::make_shared<BufferPool>()) {}
  Expected<Tensor> allocate(int value, DataType dtype, const Shape& shape) override {
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, pooled_tensor(*pool_, dtype, shape));
    bytes[value] = std::max<int64_t>(bytes[value], static_cast<int64_t>(t.byte_size()));
    return t;
  }
  std::vector<int64_t> bytes;

 private:
  std::shared_ptr<BufferPool> pool_;
};

/// Later runs: planned values live in the arena; anything unplanned or larger goes to `unplanned`.
class PlannedAllocator final : public runtime::ValueAllocator {
 public:
  PlannedAllocator(const MemoryPlan& plan, std::shared_ptr<void> arena, BufferPool& unplanned)
      : plan_(plan), arena_(std::move(arena)), unplanned_(unplanned) {}
  Expected<Tensor> allocate(int value, DataType dtype, const Shape& shape) override {
    const int64_t offset = plan_.offset[value];
    if (offset >= 0) {
      auto count = shape_element_count(shape);
      if (count && *count * static_cast<int64_t>(dtype_size(dtype)) <= plan_.bytes[value] && dtype_supported(dtype)) {
        void* p = static_cast<char*>(arena_.get()) + offset;
        return Tensor::from_storage(dtype, shape, arena_, p);
      }
    }
    return pooled_tensor(unplanned_, dtype, shape);
  }

 private:
  const MemoryPlan& plan_;
  std::shared_ptr<void> arena_;
  BufferPool& unplanned_;
};

class NativeInferencer final : public Inferencer {
 public:
  static Expected<std::unique_ptr<Inferencer>> create(const InferencerConfig& config,
                                                      const session::ModelRewrite& rewrite = {}) {
    if (config.threads < 0 || config.threads > kMaxThreads) {
      return make_error(StatusCode::kInvalidArgument, "threads must be in [0, " + std::to_string(kMaxThreads) +
                                                          "] (0 = all cores), got " + std::to_string(config.threads));
    }
    EDGEMM_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> backend, backends::make_backend(config));
    ir::ImportOptions import_options;
    import_options.fixed_input_shapes = config.fixed_input_shapes;
    EDGEMM_ASSIGN_OR_RETURN(ir::Model model, config.model_bytes.empty()
                                                 ? ir::import_onnx_file(config.model_path, import_options)
                                                 : ir::import_onnx_bytes(config.model_bytes, "", import_options));
    if (rewrite) {
      if (backend) return make_error(StatusCode::kInvalidArgument, "graph rewrites at load need the native backend");
      if (Status s = rewrite(model); !s.is_ok()) return Status(s.code(), "'" + config.model_path + "': " + s.message());
    }
    auto self = std::unique_ptr<NativeInferencer>(new NativeInferencer());
    self->config_ = config;
    self->threads_ = config.threads > 0 ? config.threads : omp_get_num_procs();
    self->inputs_ = model.graph.inputs;
    self->outputs_ = model.graph.outputs;
    self->backend_name_ = backend ? backend->name() : "native";
    if (backend) self->delegate(model, *backend);
    if (!backend && config.precision == "bf16") {
      self->extra_kernels_ = kernels::bf16_matmul_kernels();
      if (!kernels::matmul_panels_available(kernels::PanelFormat::kBfloat16)) {
        std::fprintf(stderr,
                     "edgemm: warning: precision bf16 needs AVX-512 with AVX512_BF16, which this CPU lacks; '%s' "
                     "runs in float32\n",
                     config.model_path.c_str());
      }
    }
    if (!backend && config.precision == "fp16") {
      self->extra_kernels_ = kernels::fp16_kernels();
      if (!kernels::fp16_available()) {
        std::fprintf(stderr,
                     "edgemm: warning: precision fp16 needs an Arm CPU with FP16 arithmetic (Armv8.2-A asimdhp) and "
                     "XNNPACK, which this machine lacks; '%s' runs in float32\n",
                     config.model_path.c_str());
      }
    }
    if (config.optimize) {
      passes::PassReport report;
      passes::optimize(model, report, passes::kernel_pass_options());
    }
    auto graph = std::make_shared<ir::Graph>(std::move(model.graph));
    // Weights that live on only in the kernels' packed layouts are freed as they are packed, on
    // the configured threads.
    auto compiled =
        CompiledGraph::compile_freeing_packed(graph, model.opsets, self->extra_kernels_.get(), self->threads_);
    if (!compiled) {
      return Status(compiled.status().code(), "'" + config.model_path + "': " + compiled.status().message());
    }
    self->compiled_ = std::move(compiled).value();
    for (const auto& [name, t] : graph->initializers) self->weight_bytes_ += static_cast<int64_t>(t.byte_size());
    if (!backend) {
      for (const auto& node : self->compiled_->nodes()) {
        self->placement_.push_back({node.node->name, node.node->op_type, "native", ""});
      }
    }
    return std::unique_ptr<Inferencer>(std::move(self));
  }

  const std::vector<ValueInfo>& inputs() const override { return inputs_; }
  const std::vector<ValueInfo>& outputs() const override { return outputs_; }

  const std::vector<NodePlacement>& placement() const override { return placement_; }
  const std::string& backend() const override { return backend_name_; }

  MemoryReport memory_report() const override {
    std::shared_ptr<PlanEntry> last;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = last_entry_;
    }
    if (last == nullptr) return MemoryReport{0, 0, weight_bytes_, compiled_->packed_bytes()};
    return report_of(last->plan_for(*compiled_));
  }

  Expected<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    const std::vector<std::string>& output_names) const override {
    runtime::Profiler profiler;
    runtime::Profiler* wanted = config_.profile_path.empty() ? nullptr : &profiler;
    return guarded([&] { return run_checked(inputs, output_names, wanted); });
  }

  Expected<ProfiledRun> run_profiled(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                     const std::vector<std::string>& output_names) const override {
    runtime::Profiler profiler;
    ProfiledRun result;
    EDGEMM_ASSIGN_OR_RETURN(result.outputs, guarded([&] { return run_checked(inputs, output_names, &profiler); }));
    result.nodes = profiler.take_events();
    return result;
  }

 private:
  /// Calls `run`, turning an exception into an error status (none escapes the public API).
  template <typename Run>
  static Expected<std::vector<Tensor>> guarded(const Run& run) {
    try {
      return run();
    } catch (const std::bad_alloc&) {
      return make_error(StatusCode::kOutOfMemory, "ran out of memory while running");
    } catch (const std::exception& e) {
      return make_error(StatusCode::kInternal, std::string("run failed: ") + e.what());
    }
  }

  /// Runs with per-node events going to `profiler` (nullable); they are also written to
  /// config_.profile_path when that is set.
  Expected<std::vector<Tensor>> run_checked(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                            const std::vector<std::string>& output_names,
                                            runtime::Profiler* profiler) const {
    EDGEMM_ASSIGN_OR_RETURN(std::vector<Tensor> ordered, order_inputs(inputs));
    EDGEMM_ASSIGN_OR_RETURN(std::vector<int> selected, select_outputs(output_names));
    std::string signature;
    for (const Tensor& t : ordered) signature += shape_to_string(t.shape()) + dtype_name(t.dtype()) + ";";

    const OmpThreadsScope omp_threads(threads_);
    runtime::ExecOptions options;
    options.threads = threads_;
    options.profiler = profiler;

    std::shared_ptr<PlanEntry> entry = find_plan(signature);
    std::vector<Tensor> outputs;
    if (entry == nullptr) {
      RecordingAllocator recorder(compiled_->value_count());
      EDGEMM_ASSIGN_OR_RETURN(outputs, runtime::execute(*compiled_, ordered, nullptr, options, &recorder));
      store_plan(signature, std::move(recorder.bytes));
      // The recording run's heap tensors (all sizes, freed in any order) fragment the heap; when
      // much of it is free, hand the pages back so that a stream of new shapes (OCR) does not
      // keep RSS at its high-water mark (OCR set: 1.5 GB untrimmed, 0.8 GB; about 5% slower).
      if (mallinfo2().fordblks > kTrimAboveFreeBytes) malloc_trim(0);
    } else {
      entry->plan_for(*compiled_);
      std::shared_ptr<void> arena = entry->take_arena();
      if (arena == nullptr) {
        return make_error(
            StatusCode::kOutOfMemory,
            "could not allocate the " + std::to_string(entry->plan.arena_bytes) + "-byte activation arena");
      }
      {
        PlannedAllocator allocator(entry->plan, arena, *entry->unplanned);
        auto result = runtime::execute(*compiled_, ordered, nullptr, options, &allocator);
        if (!result) return result.status();
        outputs = std::move(result).value();
      }
      entry->give_back(std::move(arena));
      std::lock_guard<std::mutex> lock(mutex_);
      last_entry_ = entry;
    }
    if (profiler != nullptr && !config_.profile_path.empty()) EDGEMM_RETURN_IF_ERROR(write_profile(*profiler));
    std::vector<Tensor> chosen;
    for (int i : selected) chosen.push_back(outputs[i]);
    return chosen;
  }

  NativeInferencer() = default;

  /// Hands `backend` the nodes it can run: simplifies the graph to standard ops the backend may
  /// know, with the shapes folding makes static (when passes are on), partitions and compiles it, and warns on stderr
  /// about the nodes left to the native kernels (one line per partition that failed to compile, one naming the refused
  /// nodes).
  void delegate(ir::Model& model, const backends::Backend& backend) {
    if (config_.optimize) backends::simplify_for_backend(model);
    const backends::BackendOptions options{config_.device, config_.precision, threads_};
    backends::PartitionedGraph parts = backends::partition_graph(model, backend, options);
    extra_kernels_ = backends::partition_kernels(std::move(parts.compiled), backend.name());
    placement_ = std::move(parts.placement);
    for (const std::string& failure : parts.compile_failures) {
      std::fprintf(stderr, "edgemm: warning: backend '%s' failed to compile a partition of %s; they run on native\n",
                   backend.name().c_str(), failure.c_str());
    }
    const auto fallbacks = std::count_if(placement_.begin(), placement_.end(),
                                         [&](const NodePlacement& p) { return p.backend != backend.name(); });
    if (fallbacks > 0) {
      std::fprintf(stderr, "edgemm: warning: backend '%s' cannot run %d of %d nodes of '%s'; they run on native: %s\n",
                   backend.name().c_str(), static_cast<int>(fallbacks), static_cast<int>(placement_.size()),
                   config_.model_path.c_str(), backends::describe_fallbacks(placement_, backend.name()).c_str());
    }
  }

  Expected<std::vector<Tensor>> order_inputs(const std::vector<std::pair<std::string, Tensor>>& given) const {
    std::vector<Tensor> ordered(inputs_.size());
    std::vector<bool> seen(inputs_.size(), false);
    for (const auto& [name, tensor] : given) {
      size_t k = 0;
      while (k < inputs_.size() && inputs_[k].name != name) ++k;
      if (k == inputs_.size()) {
        std::string names;
        for (const auto& in : inputs_) names += (names.empty() ? "'" : ", '") + in.name + "'";
        return make_error(StatusCode::kInvalidArgument,
                          "the model has no input named '" + name + "' (inputs: " + names + ")");
      }
      if (seen[k]) return make_error(StatusCode::kInvalidArgument, "input '" + name + "' is given twice");
      EDGEMM_RETURN_IF_ERROR(check_input(inputs_[k], tensor));
      ordered[k] = tensor;
      seen[k] = true;
    }
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (!seen[k]) {
        return make_error(StatusCode::kInvalidArgument, "input '" + inputs_[k].name + "' (" +
                                                            dtype_name(inputs_[k].dtype) + " " +
                                                            dims_to_string(inputs_[k].shape) + ") is missing");
      }
    }
    return ordered;
  }

  static Status check_input(const ValueInfo& info, const Tensor& t) {
    const std::string what = "input '" + info.name + "'";
    if (!t.defined()) return make_error(StatusCode::kInvalidArgument, what + " is an empty tensor");
    if (t.raw_data() == nullptr && t.element_count() > 0) {
      return make_error(StatusCode::kInvalidArgument,
                        what + " has shape " + shape_to_string(t.shape()) + " but no data (a null buffer)");
    }
    if (info.dtype != DataType::kUndefined && t.dtype() != info.dtype) {
      return make_error(StatusCode::kInvalidArgument,
                        what + " has dtype " + dtype_name(t.dtype()) + "; the model expects " + dtype_name(info.dtype));
    }
    if (!info.rank_known) return Status::ok();
    if (t.rank() != static_cast<int64_t>(info.shape.size())) {
      return make_error(StatusCode::kInvalidArgument, what + " has shape " + shape_to_string(t.shape()) + " (rank " +
                                                          std::to_string(t.rank()) + "); the model expects rank " +
                                                          std::to_string(info.shape.size()) + " " +
                                                          dims_to_string(info.shape));
    }
    for (size_t i = 0; i < info.shape.size(); ++i) {
      if (info.shape[i].is_static() && info.shape[i].value != t.shape()[i]) {
        return make_error(StatusCode::kInvalidArgument, what + " has shape " + shape_to_string(t.shape()) + "; axis " +
                                                            std::to_string(i) + " must be " +
                                                            std::to_string(info.shape[i].value) + " (model expects " +
                                                            dims_to_string(info.shape) + ")");
      }
    }
    return Status::ok();
  }

  Expected<std::vector<int>> select_outputs(const std::vector<std::string>& names) const {
    std::vector<int> selected;
    if (names.empty()) {
      for (size_t i = 0; i < outputs_.size(); ++i) selected.push_back(static_cast<int>(i));
      return selected;
    }
    for (const auto& name : names) {
      size_t k = 0;
      while (k < outputs_.size() && outputs_[k].name != name) ++k;
      if (k == outputs_.size()) {
        return make_error(StatusCode::kInvalidArgument, "the model has no output named '" + name + "'");
      }
      selected.push_back(static_cast<int>(k));
    }
    return selected;
  }

  /// Where `signature`'s plan is in plans_ (end() when absent). Call with mutex_ held.
  auto position(const std::string& signature) const {
    return std::find_if(plans_.begin(), plans_.end(), [&](const auto& p) { return p.first == signature; });
  }

  /// The plan of `signature` (moved to the front: most recently used), or null.
  std::shared_ptr<PlanEntry> find_plan(const std::string& signature) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = position(signature);
    if (it == plans_.end()) return nullptr;
    std::rotate(plans_.begin(), it, it + 1);
    return plans_.front().second;
  }

  void store_plan(const std::string& signature, std::vector<int64_t> recorded) const {
    auto entry = std::make_shared<PlanEntry>(std::move(recorded));
    std::lock_guard<std::mutex> lock(mutex_);
    if (position(signature) != plans_.end()) return;  // another run recorded this shape meanwhile
    plans_.insert(plans_.begin(), {signature, entry});
    if (plans_.size() > kMaxPlans) plans_.pop_back();  // least recently used; its arenas go with it
    last_entry_ = entry;
  }

  MemoryReport report_of(const MemoryPlan& plan) const {
    return MemoryReport{plan.arena_bytes, plan.unplanned_bytes, weight_bytes_, compiled_->packed_bytes()};
  }

  Status write_profile(const runtime::Profiler& profiler) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return write_file_atomically(config_.profile_path, chrome_trace_json(profiler.events()));
  }

  /// Plans kept per model. Each holds arenas of its shape's planned size, so with dynamic
  /// shapes (OCR: one det shape per image size, one rec shape per batch width) a long cache
  /// costs memory: the least recently used plan beyond this count is dropped.
  static constexpr int kMaxThreads = 1024;  ///< beyond this OpenMP thread creation fails or crashes
  static constexpr size_t kMaxPlans = 4;
  /// Free heap bytes above which a recording run ends with malloc_trim (glibc).
  static constexpr size_t kTrimAboveFreeBytes = size_t{512} << 20;
  InferencerConfig config_;
  int threads_ = 1;
  int64_t weight_bytes_ = 0;
  std::vector<ValueInfo> inputs_, outputs_;
  std::string backend_name_;
  std::vector<NodePlacement> placement_;
  /// Kernels searched before the CPU registry: the backend's partitions, or native's bf16 MatMuls.
  std::unique_ptr<kernels::KernelRegistry> extra_kernels_;
  std::shared_ptr<CompiledGraph> compiled_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<std::string, std::shared_ptr<PlanEntry>>> plans_;  // most recent first
  mutable std::shared_ptr<PlanEntry> last_entry_;                                  ///< the signature of the latest run
};

}  // namespace

namespace {

Expected<std::unique_ptr<Inferencer>> create_guarded(const InferencerConfig& config,
                                                     const session::ModelRewrite& rewrite) {
  kernels::log_kernel_selection_once();
  try {
    return NativeInferencer::create(config, rewrite);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kOutOfMemory, "'" + config.model_path + "': ran out of memory while loading");
  } catch (const std::exception& e) {
    return make_error(StatusCode::kInternal, "'" + config.model_path + "': " + e.what());
  }
}

}  // namespace

Expected<std::unique_ptr<Inferencer>> Inferencer::create(const InferencerConfig& config) {
  return create_guarded(config, {});
}

Expected<std::unique_ptr<Inferencer>> session::create_with_rewrite(const InferencerConfig& config,
                                                                   const ModelRewrite& rewrite) {
  return create_guarded(config, rewrite);
}

}  // namespace edgemm
