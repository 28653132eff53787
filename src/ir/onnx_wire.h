#pragma once
/// \file onnx_wire.h
/// A serialized ModelProto read at the protobuf wire-format level (protobuf's "Encoding" spec:
/// tags, varints, length-delimited fields), so that the weights of a model file can stay in the
/// file: the raw_data of the main graph's large initializers is cut out of the bytes protobuf
/// parses, and the import maps or reads each one from its place in the file instead
/// (ir/external_data.h). Protobuf would otherwise copy every weight into a string first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgemm::ir {

/// One initializer's raw_data left in the model file: its index among the main graph's
/// initializers (GraphProto field 5, in file order) and its bytes' range in the file.
struct RawDataInFile {
  int initializer = 0;
  int64_t offset = 0;
  int64_t length = 0;
};

/// A ModelProto's bytes without the raw_data cut out, and where each cut one lies.
struct StrippedModel {
  std::string bytes;
  std::vector<RawDataInFile> raw_data;
};

/// Cuts out of `model` (a serialized ModelProto: a whole file) the raw_data of every main-graph
/// initializer holding at least `min_bytes` of it, except int32/int64 tensors (ONNX shape
/// inference reads those as shape data), string tensors (raw_data is invalid for them) and
/// tensors that also hold typed values or declare a data_location (left whole, the checker words
/// their errors as it always did). The enclosing lengths are re-encoded; every other field is
/// kept byte for byte. nullopt when the bytes do not walk as the wire format (truncated or not
/// protobuf, a graph field given twice, groups, a tag beyond 32 bits): the caller then parses
/// them whole, so that errors read as protobuf's.
std::optional<StrippedModel> strip_initializer_raw_data(std::string_view model, int64_t min_bytes);

}  // namespace edgemm::ir
