#include <algorithm>

#include "kernels/cpu/families.h"
#include "kernels/cpu/xnnpack.h"
#include "kernels/kernel.h"

namespace edgemm::kernels {

void KernelRegistry::add(const std::string& domain, const std::string& op_type, int since_version,
                         KernelFactory factory) {
  auto& entries = table_[{domain, op_type}];
  entries.push_back({since_version, std::move(factory)});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.since_version < b.since_version; });
}

const KernelFactory* KernelRegistry::find(const std::string& domain, const std::string& op_type, int64_t opset) const {
  auto it = table_.find({domain, op_type});
  if (it == table_.end()) return nullptr;
  const KernelFactory* best = nullptr;
  for (const Entry& e : it->second) {
    if (e.since_version <= opset) best = &e.factory;
  }
  return best;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::ops() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, entries] : table_) out.push_back(key);
  return out;
}

const KernelRegistry& cpu_registry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_shape_kernels(r);
    register_transpose_kernels(r);
    register_concat_split_kernels(r);
    register_slice_kernels(r);
    register_gather_kernels(r);
    register_scatter_kernels(r);
    register_pad_tile_expand_kernels(r);
    register_generate_kernels(r);
    register_trilu_cumsum_kernels(r);
    register_nonzero_unique_kernels(r);
    register_reduce_kernels(r);
    register_softmax_kernels(r);
    register_topk_kernels(r);
    register_loss_kernels(r);
    register_normalization_kernels(r);
    register_einsum_kernels(r);
    register_unary_kernels(r);
    register_activation_kernels(r);
    register_binary_kernels(r);
    register_variadic_kernels(r);
    register_cast_kernels(r);
    register_conv_kernels(r);
    register_matmul_kernels(r);
    register_quantize_kernels(r);
    register_quant_matmul_kernels(r);
    register_quant_conv_kernels(r);
    register_matmul_nbits_kernels(r);
    register_pool_kernels(r);
    register_resize_kernels(r);
    register_detection_kernels(r);
    register_grid_sample_kernels(r);
    register_control_flow_kernels(r);
    register_layout_kernels(r);
    register_attention_kernels(r);
    register_encoder_attention_kernels(r);
    register_recurrent_kernels(r);
    register_signal_kernels(r);
    register_linalg_kernels(r);
    register_tfidf_kernels(r);
    register_training_optimizer_kernels(r);
    register_group_norm_kernels(r);
    register_lrn_kernels(r);
    register_col2im_kernels(r);
    register_deform_conv_kernels(r);
    register_elementwise_chain_kernels(r);
    return r;
  }();
  return registry;
}

std::unique_ptr<KernelRegistry> fp16_kernels() {
  auto registry = std::make_unique<KernelRegistry>();
  register_fp16_conv_kernels(*registry);
  register_fp16_matmul_kernels(*registry);
  return registry;
}

bool fp16_available() { return xnnpack::fp16_enabled(); }

}  // namespace edgemm::kernels
