#include "edgemm/tools/bench_inputs.h"

#include <random>

#include "edgemm/npy.h"

namespace edgemm::bench {

namespace {

Status check_names(const std::vector<ValueInfo>& declared, const InputSpec& spec) {
  auto known = [&](const std::string& name) {
    for (const auto& v : declared) {
      if (v.name == name) return true;
    }
    return false;
  };
  std::string names;
  for (const auto& v : declared) names += (names.empty() ? "'" : ", '") + v.name + "'";
  for (const auto& [name, shape] : spec.shapes) {
    if (!known(name)) {
      return make_error(StatusCode::kInvalidArgument,
                        "a shape is given for '" + name + "', but the model has no such input (inputs: " + names + ")");
    }
  }
  for (const auto& [name, file] : spec.npy_files) {
    if (!known(name)) {
      return make_error(StatusCode::kInvalidArgument,
                        "a file is given for '" + name + "', but the model has no such input (inputs: " + names + ")");
    }
  }
  return Status::ok();
}

Expected<Shape> resolve_shape(const ValueInfo& input, const InputSpec& spec) {
  auto given = spec.shapes.find(input.name);
  if (given != spec.shapes.end()) {
    const Shape& s = given->second;
    if (input.rank_known && s.size() != input.shape.size()) {
      return make_error(StatusCode::kInvalidArgument, "input '" + input.name + "' has rank " +
                                                          std::to_string(input.shape.size()) + ", the given shape " +
                                                          shape_to_string(s) + " has rank " + std::to_string(s.size()));
    }
    for (size_t a = 0; input.rank_known && a < s.size(); ++a) {
      if (input.shape[a].is_static() && input.shape[a].value != s[a]) {
        return make_error(StatusCode::kInvalidArgument, "input '" + input.name + "' has a fixed extent " +
                                                            std::to_string(input.shape[a].value) + " on axis " +
                                                            std::to_string(a) + ", the given shape " +
                                                            shape_to_string(s) + " says " + std::to_string(s[a]));
      }
    }
    return s;
  }
  if (!input.rank_known) {
    return make_error(StatusCode::kInvalidArgument,
                      "input '" + input.name + "' has no declared shape; give one with --shape " + input.name + "=...");
  }
  Shape s;
  for (size_t a = 0; a < input.shape.size(); ++a) {
    const Dim& d = input.shape[a];
    if (!d.is_static()) {
      const std::string sym = d.symbol.empty() ? "unnamed" : "'" + d.symbol + "'";
      return make_error(StatusCode::kInvalidArgument, "input '" + input.name + "' axis " + std::to_string(a) +
                                                          " is symbolic (" + sym + "); give a shape with --shape " +
                                                          input.name + "=...");
    }
    s.push_back(d.value);
  }
  return s;
}

/// A tensor read from a file must match the declared dtype, rank and static extents, and a
/// shape given for the same input, so that every runtime gets a valid input or none runs.
Status check_file_tensor(const ValueInfo& input, const InputSpec& spec, const std::string& file, const Tensor& t) {
  const std::string where = "input '" + input.name + "' from " + file;
  if (t.dtype() != input.dtype) {
    return make_error(StatusCode::kInvalidArgument,
                      where + " is " + dtype_name(t.dtype()) + ", the model declares " + dtype_name(input.dtype));
  }
  Shape expected = t.shape();
  auto given = spec.shapes.find(input.name);
  if (given != spec.shapes.end()) expected = given->second;
  InputSpec only_this;
  only_this.shapes[input.name] = t.shape();
  auto checked = resolve_shape(input, only_this);
  if (!checked) return make_error(StatusCode::kInvalidArgument, where + ": " + checked.status().message());
  if (expected != t.shape()) {
    return make_error(StatusCode::kInvalidArgument, where + " has shape " + shape_to_string(t.shape()) +
                                                        ", but --shape says " + shape_to_string(expected));
  }
  return Status::ok();
}

void fill_synthetic(Tensor& t, uint32_t seed) {
  const int64_t n = t.element_count();
  switch (t.dtype()) {
    case DataType::kFloat32: {
      std::mt19937 rng(seed);
      std::uniform_real_distribution<float> dist(0.0f, 1.0f);
      float* p = t.data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
      break;
    }
    case DataType::kFloat64: {
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> dist(0.0, 1.0);
      double* p = t.data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
      break;
    }
    case DataType::kInt64: {
      int64_t* p = t.data<int64_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = 1;
      break;
    }
    case DataType::kInt32: {
      int32_t* p = t.data<int32_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = 1;
      break;
    }
    default: {  // 8-bit integers and bool: one byte per element
      if (dtype_size(t.dtype()) == 1) {
        auto* p = t.data<uint8_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = 1;
      }
      break;
    }
  }
}

}  // namespace

Expected<NamedTensors> make_inputs(const std::vector<ValueInfo>& declared, const InputSpec& spec) {
  EDGEMM_RETURN_IF_ERROR(check_names(declared, spec));
  NamedTensors inputs;
  for (size_t i = 0; i < declared.size(); ++i) {
    const ValueInfo& input = declared[i];
    auto file = spec.npy_files.find(input.name);
    if (file != spec.npy_files.end()) {
      EDGEMM_ASSIGN_OR_RETURN(Tensor t, read_npy(file->second));
      EDGEMM_RETURN_IF_ERROR(check_file_tensor(input, spec, file->second, t));
      inputs.emplace_back(input.name, std::move(t));
      continue;
    }
    const bool synthetic_ok = input.dtype == DataType::kFloat32 || input.dtype == DataType::kFloat64 ||
                              input.dtype == DataType::kInt64 || input.dtype == DataType::kInt32 ||
                              dtype_size(input.dtype) == 1;
    if (!synthetic_ok) {
      return make_error(StatusCode::kUnsupported, "input '" + input.name + "' has dtype " + dtype_name(input.dtype) +
                                                      ", for which no synthetic data is made; give a .npy file");
    }
    EDGEMM_ASSIGN_OR_RETURN(Shape shape, resolve_shape(input, spec));
    EDGEMM_ASSIGN_OR_RETURN(Tensor t, Tensor::create(input.dtype, shape));
    fill_synthetic(t, spec.seed + static_cast<uint32_t>(i));
    inputs.emplace_back(input.name, std::move(t));
  }
  return inputs;
}

std::string describe_inputs(const NamedTensors& inputs) {
  std::string text;
  for (const auto& [name, t] : inputs) {
    text += (text.empty() ? "" : "; ") + name + "=" + shape_to_string(t.shape()) + " " + dtype_name(t.dtype());
  }
  return text;
}

}  // namespace edgemm::bench
