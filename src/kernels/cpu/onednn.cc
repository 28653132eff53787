#include "kernels/cpu/onednn.h"

#include <omp.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "kernels/cpu/xnnpack.h"

namespace edgemm::kernels::onednn {
namespace {

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag = [] {
    const char* env = std::getenv("EDGEMM_ONEDNN");
    return !(env != nullptr && std::strcmp(env, "0") == 0);
  }();
  return flag;
}

struct AlignedFree {
  void operator()(void* p) const { ::operator delete (p, std::align_val_t{64}); }
};

struct ThreadBuffers {
  std::array<std::unique_ptr<void, AlignedFree>, static_cast<size_t>(Slot::kCount)> data;
  std::array<size_t, static_cast<size_t>(Slot::kCount)> size{};
};

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(engine());
  return stream;
}

}  // namespace

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }
bool prefers_nhwc() {
  if (const char* forced = std::getenv("EDGEMM_CHAIN_LAYOUT"); forced != nullptr && *forced != '\0') {
    return std::string(forced) == "NHWC";
  }
#if defined(__x86_64__)
  return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
#else
  return xnnpack::enabled();  // XNNPACK convolves NHWC (kernels/cpu/xnnpack.h)
#endif
}

bool runs_avx512_vnni() {
#if defined(__x86_64__)
  const auto vnni = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_vnni);  // ISA values are bit sets
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & vnni) == vnni;
#else
  return false;
#endif
}

void set_enabled(bool on) { enabled_flag().store(on, std::memory_order_relaxed); }

void set_threads(int threads) { omp_set_num_threads(threads < 1 ? 1 : threads); }

dnnl::memory::dims to_dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::format_tag plain_tag(int64_t rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 1:
      return tag::a;
    case 2:
      return tag::ab;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    case 6:
      return tag::abcdef;
    default:
      return tag::undef;
  }
}

dnnl::memory::desc plain_f32_desc(const Shape& shape) {
  // Strides work for any rank oneDNN accepts (up to 12), unlike the named tags.
  dnnl::memory::dims strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return dnnl::memory::desc(to_dims(shape), dnnl::memory::data_type::f32, strides);
}

dnnl::memory::desc activation_desc(const Shape& logical, ActivationLayout layout) {
  if (layout == ActivationLayout::kNchw) return plain_f32_desc(logical);
  const auto tag =
      layout == ActivationLayout::kNChw8c ? dnnl::memory::format_tag::nChw8c : dnnl::memory::format_tag::nhwc;
  return dnnl::memory::desc(to_dims(logical), dnnl::memory::data_type::f32, tag);
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void* thread_buffer(Slot slot, size_t bytes) {
  thread_local ThreadBuffers buffers;
  const auto i = static_cast<size_t>(slot);
  if (buffers.data[i] == nullptr || buffers.size[i] < bytes) {
    // Grow by 1/4 more than asked so slowly growing shapes do not reallocate every run.
    const size_t want = bytes + bytes / 4 + 64;
    buffers.data[i].reset();
    buffers.size[i] = 0;
    buffers.data[i].reset(::operator new (want, std::align_val_t{64}));
    buffers.size[i] = want;
  }
  return buffers.data[i].get();
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, engine(), const_cast<void*>(data));
}

Status execute(const ir::Node& node, const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args,
               const dnnl::memory::desc& scratchpad) {
  try {
    const size_t bytes = scratchpad.get_size();
    if (bytes > 0) {
      args[DNNL_ARG_SCRATCHPAD] = wrap(scratchpad, thread_buffer(Slot::kScratchpad, bytes));
    }
    dnnl::stream& stream = thread_stream();
    primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN failed to execute: ") + e.what());
  } catch (const std::bad_alloc&) {
    return ir::node_error(node, StatusCode::kOutOfMemory, "could not allocate a oneDNN workspace");
  }
  return Status::ok();
}

Status reorder(const ir::Node& node, const dnnl::memory& src, const dnnl::memory& dst) {
  try {
    dnnl::memory::desc scratch;
    dnnl::reorder r = make_reorder(src.get_desc(), dst.get_desc(), &scratch);
    return execute(node, r, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, scratch);
  } catch (const dnnl::error& e) {
    return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN could not create a reorder: ") + e.what());
  }
}

dnnl::reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                           dnnl::memory::desc* scratchpad) {
  dnnl::reorder::primitive_desc pd(engine(), from, engine(), to, user_scratchpad_attr());
  *scratchpad = pd.scratchpad_desc();
  return dnnl::reorder(pd);
}

PackedWeights::PackedWeights(Tensor weights)
    : dtype_(weights.dtype()), shape_(weights.shape()), weights_(std::move(weights)) {}

PackedWeights::PackedWeights(DataType dtype, Shape shape, Unpack unpack)
    : dtype_(dtype), shape_(std::move(shape)), unpack_(std::move(unpack)) {}

PackedWeights::PackedWeights(PackedWeights&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      weights_(std::move(other.weights_)),
      unpack_(std::move(other.unpack_)),
      packed_(std::move(other.packed_)) {}

bool PackedWeights::holds_tensor() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return weights_.defined();
}

dnnl::memory PackedWeights::get(const ir::Node& node, const dnnl::memory::desc& desc,
                                const dnnl::memory::desc& user_md) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (desc == user_md && weights_.defined()) return wrap(user_md, weights_.raw_data());
  for (const Packed& p : packed_) {
    if (p.desc == desc) return p.memory;
  }
  auto source = materialize_locked(node);
  if (!source) return dnnl::memory();
  try {
    dnnl::memory packed(desc, engine());
    dnnl::memory::desc scratch;
    dnnl::reorder r = make_reorder(user_md, desc, &scratch);
    Status s = execute(node, r, {{DNNL_ARG_FROM, wrap(user_md, source->raw_data())}, {DNNL_ARG_TO, packed}}, scratch);
    if (!s.is_ok()) return dnnl::memory();
    packed_.push_back({desc, user_md, packed});
    return packed;
  } catch (const dnnl::error&) {
    return dnnl::memory();
  }
}

bool PackedWeights::release_tensor() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!weights_.defined()) return true;
  if (unpack_ == nullptr && packed_.empty()) return false;
  weights_ = Tensor();
  return true;
}

Expected<Tensor> PackedWeights::materialize(const ir::Node& node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return materialize_locked(node);
}

Expected<Tensor> PackedWeights::materialize_locked(const ir::Node& node) const {
  if (weights_.defined()) return weights_;
  if (dtype_ == DataType::kUndefined || (packed_.empty() && unpack_ == nullptr)) {
    return ir::node_error(node, StatusCode::kInternal, "the kernel holds no constant weights");
  }
  EDGEMM_ASSIGN_OR_RETURN(Tensor out, Tensor::create(dtype_, shape_));
  if (packed_.empty()) {
    unpack_(out.raw_data());
    return out;
  }
  // Reorder the first packed copy back into the weights' own layout (the same bytes for every
  // user_md this object was given).
  const Packed& p = packed_.front();
  try {
    dnnl::memory::desc scratch;
    dnnl::reorder r = make_reorder(p.desc, p.user_md, &scratch);
    EDGEMM_RETURN_IF_ERROR(
        execute(node, r, {{DNNL_ARG_FROM, p.memory}, {DNNL_ARG_TO, wrap(p.user_md, out.raw_data())}}, scratch));
  } catch (const dnnl::error& e) {
    return ir::node_error(node, StatusCode::kInternal, std::string("oneDNN cannot unpack the weights: ") + e.what());
  }
  return out;
}

size_t PackedWeights::packed_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return packed_.size();
}

int64_t PackedWeights::packed_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t bytes = 0;
  for (const Packed& p : packed_) bytes += static_cast<int64_t>(p.desc.get_size());
  return bytes;
}

std::string impl_name(const dnnl::primitive_desc_base& pd) {
  const char* info = pd.impl_info_str();
  return info != nullptr ? info : "?";
}

std::string shape_key(const Shape& a, const Shape& b, const Shape& c) {
  return shape_to_string(a) + shape_to_string(b) + shape_to_string(c);
}

}  // namespace edgemm::kernels::onednn
