#pragma once
/// \file onednn.h
/// Shared oneDNN (2.x, `dnnl.hpp`) helpers for the CPU kernels: the process-wide CPU engine,
/// a switch that turns every oneDNN path off (tests compare against the reference kernels),
/// dims/format conversion, per-thread workspaces, and execution that maps dnnl::error to a
/// Status naming the node. Follows the oneDNN v2.6 programming model ("Basic Concepts",
/// "Primitive Attributes: Scratchpad Memory Mode", "Memory Format Propagation").
///
/// Threading: the Debian oneDNN build uses OpenMP; a primitive uses omp_get_max_threads() of
/// the calling thread, so kernels call set_threads(ctx.threads()) before executing.
/// Primitives are created with a user-managed scratchpad and executed on a per-thread stream,
/// so one primitive may run from several threads at once.

#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "edgemm/status.h"
#include "edgemm/tensor.h"
#include "ir/graph.h"
#include "kernels/cpu/layout.h"

namespace edgemm::kernels::onednn {

/// The CPU engine, created on first use. Thread-safe.
const dnnl::engine& engine();

/// Whether kernel factories may choose oneDNN paths. Defaults to true unless the environment
/// variable EDGEMM_ONEDNN is "0". Read by factories (so it affects kernels created after a
/// change, not existing ones). Thread-safe.
bool enabled();

/// Whether oneDNN 2.6's convolutions on this CPU work in channels-last NHWC rather than blocked
/// nChw8c/16c: x86 with AVX-512 (avx512_core and up), where it picks brgconv and brdgmm_dw
/// (ONEDNN_VERBOSE); and aarch64 where XNNPACK convolves (xnnpack::enabled(), NHWC only).
/// The environment variable EDGEMM_CHAIN_LAYOUT ("NHWC" or "nChw8c")
/// overrides it, for measuring one against the other.
bool prefers_nhwc();

/// Whether oneDNN's int8 kernels run with AVX-512 VNNI here: the CPU has it and oneDNN's effective
/// ISA (which the environment variable ONEDNN_MAX_CPU_ISA may cap, e.g. at AVX2) includes it.
bool runs_avx512_vnni();
/// Overrides enabled() for this process (tests use it to build reference kernels).
void set_enabled(bool on);

/// RAII: sets enabled() for the lifetime of the object, then restores the previous value.
class ScopedEnabled {
 public:
  explicit ScopedEnabled(bool on) : previous_(enabled()) { set_enabled(on); }
  ~ScopedEnabled() { set_enabled(previous_); }
  ScopedEnabled(const ScopedEnabled&) = delete;
  ScopedEnabled& operator=(const ScopedEnabled&) = delete;

 private:
  bool previous_;
};

/// Sets the OpenMP thread count of the calling thread (what oneDNN uses) to `threads` >= 1.
void set_threads(int threads);

/// Shape → dnnl dims.
dnnl::memory::dims to_dims(const Shape& shape);

/// Row-major (C order) format tag for `rank` 1..6 (a, ab, abc, ...).
dnnl::memory::format_tag plain_tag(int64_t rank);

/// Plain f32 memory descriptor of `shape` in row-major order.
dnnl::memory::desc plain_f32_desc(const Shape& shape);

/// f32 memory descriptor of an activation of logical shape `logical` [N, C, ...] stored in
/// `layout` (nChw8c and NHWC: logical [N, C, H, W]).
dnnl::memory::desc activation_desc(const Shape& logical, ActivationLayout layout);

/// Primitive attributes with a user-managed scratchpad (the only mode our kernels use).
dnnl::primitive_attr user_scratchpad_attr();

/// Per-thread, grow-only, 64-byte aligned workspaces that live until the thread exits, so the
/// run path does not allocate after warm-up. A slot stays valid until the same slot is
/// requested again on the same thread; use distinct slots for buffers alive at the same time.
enum class Slot : int { kSrc = 0, kDst, kWeights, kBias, kScratchpad, kExtra, kCount };
/// Returns at least `bytes` bytes for `slot` on the calling thread (never null; bytes may be 0).
void* thread_buffer(Slot slot, size_t bytes);

/// Wraps a pointer as a dnnl::memory of `desc` (no copy; the pointer must outlive its use).
dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data);

/// Executes `primitive` on the calling thread's stream and waits. If `scratchpad` is non-zero
/// a workspace of that size is bound as DNNL_ARG_SCRATCHPAD. Errors: kInternal naming the node
/// when oneDNN throws.
Status execute(const ir::Node& node, const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args,
               const dnnl::memory::desc& scratchpad);

/// Executes a reorder from `src` to `dst` (created on the fly and cached by oneDNN's primitive
/// cache; for hot paths keep your own dnnl::reorder). Errors as execute().
Status reorder(const ir::Node& node, const dnnl::memory& src, const dnnl::memory& dst);

/// Creates a reorder primitive (user scratchpad) from `from` to `to`; its scratchpad descriptor
/// goes to `scratchpad`. Throws dnnl::error when oneDNN cannot reorder between the two.
dnnl::reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                           dnnl::memory::desc* scratchpad);

/// Constant weights (a Tensor known when the kernel is created) reordered into every layout a
/// primitive asks for, each layout made once and kept for the kernel's lifetime. The tensor
/// itself can be dropped once another copy exists (release_tensor(), or an `unpack` function
/// given instead of it): later layouts are then made from that copy, and the graph's copy of
/// the weights can be freed (Kernel::reads_constant_input).
/// Thread-safe: get(), materialize() and the counts may be called from concurrent runs.
class PackedWeights {
 public:
  /// Writes the weights' elements, in the tensor's own row-major layout, to `out`.
  using Unpack = std::function<void(void* out)>;

  PackedWeights() = default;
  explicit PackedWeights(Tensor weights);
  /// Weights of `dtype` and `shape` kept only by the caller's packed copy, which `unpack` reads
  /// back until the first reordered copy exists (later layouts are made from that one, so the
  /// caller may then free its copy).
  PackedWeights(DataType dtype, Shape shape, Unpack unpack);
  /// Moves a PackedWeights that no other thread uses yet (kernel construction).
  PackedWeights(PackedWeights&& other) noexcept;
  /// True while the weights tensor itself is held.
  bool holds_tensor() const;
  /// True when the kernel has constant weights (held as a tensor or packed).
  bool defined() const { return dtype_ != DataType::kUndefined; }
  /// The weights in layout `desc`, given that the tensor's own bytes are described by
  /// `user_md` (the tensor's memory, no copy, when the two are equal and the tensor is held).
  /// Empty memory on failure.
  dnnl::memory get(const ir::Node& node, const dnnl::memory::desc& desc, const dnnl::memory::desc& user_md);
  /// Drops the tensor when a reordered copy that is not the tensor's own memory exists, or an
  /// `unpack` function was given; returns whether the tensor is no longer held.
  bool release_tensor();
  /// The weights as a tensor in their own layout: the held tensor, or a new one read back from a
  /// packed copy. Errors: kOutOfMemory; kInternal when oneDNN cannot reorder back.
  Expected<Tensor> materialize(const ir::Node& node) const;
  /// Number of reordered copies made so far (tests check that weights are packed once).
  size_t packed_count() const;
  /// Bytes of the reordered copies made so far. Thread-safe, as get() is.
  int64_t packed_bytes() const;

 private:
  struct Packed {
    dnnl::memory::desc desc, user_md;
    dnnl::memory memory;
  };
  Expected<Tensor> materialize_locked(const ir::Node& node) const;

  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  Tensor weights_;  // undefined once released
  Unpack unpack_;
  mutable std::mutex mutex_;  // guards weights_ and packed_
  std::vector<Packed> packed_;
};

/// Name of the implementation oneDNN picked for a primitive descriptor (e.g. "jit_dw:avx2").
std::string impl_name(const dnnl::primitive_desc_base& pd);

/// Canonical key for caches keyed by input shapes.
std::string shape_key(const Shape& a, const Shape& b = {}, const Shape& c = {});

}  // namespace edgemm::kernels::onednn
