#include "ir/activation_layout.h"

namespace edgemm::ir {

const char* layout_name(ActivationLayout layout) {
  switch (layout) {
    case ActivationLayout::kNChw8c:
      return "nChw8c";
    case ActivationLayout::kNhwc:
      return "NHWC";
    case ActivationLayout::kNchw:
      break;
  }
  return "NCHW";
}

Expected<ActivationLayout> read_layout(const ir::Node& node, const std::string& attr) {
  EDGEMM_ASSIGN_OR_RETURN(const std::string name, node.attr_string(attr, "NCHW"));
  for (ActivationLayout l : {ActivationLayout::kNchw, ActivationLayout::kNChw8c, ActivationLayout::kNhwc}) {
    if (name == layout_name(l)) return l;
  }
  return node_error(node, StatusCode::kInvalidModel,
                    "attribute " + attr + " must be \"NCHW\", \"nChw8c\" or \"NHWC\", got \"" + name + "\"");
}

}  // namespace edgemm::ir
