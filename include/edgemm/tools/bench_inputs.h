#pragma once
/// \file bench_inputs.h
/// Input tensors for benchmarks and profiles: given .npy files, or seeded synthetic data of a
/// given or declared shape. Every runtime in a comparison gets these very tensors.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"

namespace edgemm::bench {

/// Named inputs in the model's declaration order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// How to build the inputs of one model.
struct InputSpec {
  std::map<std::string, Shape> shapes;           ///< name → shape for symbolic (or overridden) inputs
  std::map<std::string, std::string> npy_files;  ///< name → .npy file; wins over `shapes`
  uint32_t seed = 1;                             ///< seed of the synthetic data
};

/// Builds one tensor per declared input. A given .npy file is read as is. Otherwise the shape is
/// `spec.shapes[name]` or the declared shape when all its axes are static, and the data is
/// synthetic: floating types uniform in [0, 1) from std::mt19937(seed + input index), integer
/// types all ones (a valid token id and a full attention mask), bool all true.
/// Errors: kInvalidArgument naming the input when a shape or file is given for a name the model
/// does not have, when an axis is symbolic and no shape is given (naming the axis and its
/// dim_param), when a given shape has the wrong rank or contradicts a static extent, or when a
/// file's tensor has another dtype, rank or static extent than declared, or another shape than
/// a --shape given for the same input;
/// kIo/kInvalidArgument from reading a .npy file; kOutOfMemory for absurd sizes (Tensor::create).
Expected<NamedTensors> make_inputs(const std::vector<ValueInfo>& declared, const InputSpec& spec);

/// "x=[1,3,640,640] float32; mask=[1,16] int64": a one-line description for reports.
std::string describe_inputs(const NamedTensors& inputs);

}  // namespace edgemm::bench
