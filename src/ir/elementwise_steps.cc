#include "ir/elementwise_steps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace edgemm::ir {
namespace {

constexpr StepKind kAllKinds[] = {StepKind::kRelu,      StepKind::kClip,    StepKind::kLinear, StepKind::kHardSigmoid,
                                  StepKind::kHardSwish, StepKind::kSigmoid, StepKind::kSwish,  StepKind::kGelu,
                                  StepKind::kGeluTanh,  StepKind::kTanh,    StepKind::kExp,    StepKind::kSqrt,
                                  StepKind::kAbs,       StepKind::kNeg,     StepKind::kAdd,    StepKind::kSub,
                                  StepKind::kRSub,      StepKind::kMul,     StepKind::kDiv,    StepKind::kRDiv,
                                  StepKind::kMax,       StepKind::kMin,     StepKind::kPow};

float sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

std::string number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

}  // namespace

const char* step_name(StepKind kind) {
  switch (kind) {
    case StepKind::kRelu:
      return "relu";
    case StepKind::kClip:
      return "clip";
    case StepKind::kLinear:
      return "linear";
    case StepKind::kHardSigmoid:
      return "hardsigmoid";
    case StepKind::kHardSwish:
      return "hardswish";
    case StepKind::kSigmoid:
      return "sigmoid";
    case StepKind::kSwish:
      return "swish";
    case StepKind::kGelu:
      return "gelu";
    case StepKind::kGeluTanh:
      return "gelu_tanh";
    case StepKind::kTanh:
      return "tanh";
    case StepKind::kExp:
      return "exp";
    case StepKind::kSqrt:
      return "sqrt";
    case StepKind::kAbs:
      return "abs";
    case StepKind::kNeg:
      return "neg";
    case StepKind::kAdd:
      return "add";
    case StepKind::kSub:
      return "sub";
    case StepKind::kRSub:
      return "rsub";
    case StepKind::kMul:
      return "mul";
    case StepKind::kDiv:
      return "div";
    case StepKind::kRDiv:
      return "rdiv";
    case StepKind::kMax:
      return "max";
    case StepKind::kMin:
      return "min";
    case StepKind::kPow:
      return "pow";
  }
  return "?";
}

Expected<std::vector<Step>> read_steps(const Node& node) {
  std::vector<std::string> names;
  if (const auto it = node.attributes.find("steps"); it != node.attributes.end()) names = it->second.strings;
  EDGEMM_ASSIGN_OR_RETURN(std::vector<float> alphas, node.attr_floats("alphas"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<float> betas, node.attr_floats("betas"));
  EDGEMM_ASSIGN_OR_RETURN(std::vector<int64_t> operands, node.attr_ints("operands"));
  if (alphas.size() != names.size() || betas.size() != names.size() || operands.size() != names.size()) {
    return node_error(node, StatusCode::kInvalidModel,
                      "attributes steps, alphas, betas and operands must have the same length");
  }
  std::vector<Step> steps;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto* kind =
        std::find_if(std::begin(kAllKinds), std::end(kAllKinds), [&](StepKind k) { return names[i] == step_name(k); });
    if (kind == std::end(kAllKinds)) {
      return node_error(node, StatusCode::kInvalidModel, "unknown elementwise step '" + names[i] + "'");
    }
    Step s{*kind, alphas[i], betas[i], static_cast<int>(operands[i])};
    const bool valid_operand = s.operand >= 0 && s.operand < static_cast<int>(node.inputs.size());
    if (s.binary() != valid_operand || (!s.binary() && s.operand != -1)) {
      return node_error(node, StatusCode::kInvalidModel,
                        "step " + std::to_string(i) + " ('" + names[i] + "') has operand index " +
                            std::to_string(operands[i]) + " for a node with " + std::to_string(node.inputs.size()) +
                            " inputs");
    }
    steps.push_back(s);
  }
  return steps;
}

void write_steps(Node& node, const std::vector<Step>& steps) {
  Attribute names, alphas, betas, operands;
  names.kind = Attribute::Kind::kStrings;
  alphas.kind = betas.kind = Attribute::Kind::kFloats;
  operands.kind = Attribute::Kind::kInts;
  for (const Step& s : steps) {
    names.strings.push_back(step_name(s.kind));
    alphas.floats.push_back(s.alpha);
    betas.floats.push_back(s.beta);
    operands.ints.push_back(s.operand);
  }
  node.attributes["steps"] = names;
  node.attributes["alphas"] = alphas;
  node.attributes["betas"] = betas;
  node.attributes["operands"] = operands;
}

float apply_unary(const Step& s, float v) {
  switch (s.kind) {
    case StepKind::kRelu:
      return v < 0 ? 0 : v;  // NaN passes, as in the Relu kernel
    case StepKind::kClip:
      return std::min(std::max(v, s.alpha), s.beta);
    case StepKind::kLinear:
      return s.alpha * v + s.beta;
    case StepKind::kHardSigmoid: {
      const float y = s.alpha * v + s.beta;  // NaN passes (std::min(1.f, NaN) would give 1)
      return y < 0 ? 0 : (y > 1 ? 1 : y);
    }
    case StepKind::kHardSwish:
      return v * std::max(0.f, std::min(1.f, v / 6.f + 0.5f));
    case StepKind::kSigmoid:
      return sigmoid(v);
    case StepKind::kSwish:
      return v * sigmoid(s.alpha * v);
    case StepKind::kGelu:
      return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
    case StepKind::kGeluTanh:
      return 0.5f * v * (1.f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case StepKind::kTanh:
      return std::tanh(v);
    case StepKind::kExp:
      return std::exp(v);
    case StepKind::kSqrt:
      return std::sqrt(v);
    case StepKind::kAbs:
      return std::fabs(v);
    case StepKind::kNeg:
      return -v;
    default:
      return v;
  }
}

float apply_binary(const Step& s, float v, float o) {
  switch (s.kind) {
    case StepKind::kAdd:
      return v + o;
    case StepKind::kSub:
      return v - o;
    case StepKind::kRSub:
      return o - v;
    case StepKind::kMul:
      return v * o;
    case StepKind::kDiv:
      return v / o;
    case StepKind::kRDiv:
      return o / v;
    case StepKind::kMax:
      return std::isnan(v) || std::isnan(o) ? NAN : std::max(v, o);
    case StepKind::kMin:
      return std::isnan(v) || std::isnan(o) ? NAN : std::min(v, o);
    case StepKind::kPow:
      return std::pow(v, o);
    default:
      return v;
  }
}

std::string describe_steps(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) {
    if (!out.empty()) out += ", ";
    out += step_name(s.kind);
    if (s.binary()) {
      out += "(input " + std::to_string(s.operand) + ")";
    } else if (s.kind == StepKind::kClip || s.kind == StepKind::kLinear || s.kind == StepKind::kHardSigmoid) {
      out += "(" + number(s.alpha) + ", " + number(s.beta) + ")";
    } else if (s.kind == StepKind::kSwish) {
      out += "(" + number(s.alpha) + ")";
    }
  }
  return out;
}

}  // namespace edgemm::ir
