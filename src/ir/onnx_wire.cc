#include "ir/onnx_wire.h"

namespace edgemm::ir {

namespace {

// Field numbers from onnx.proto.
constexpr uint32_t kModelGraph = 7;                      // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;                // GraphProto.initializer
constexpr uint32_t kTensorDataType = 2;                  // TensorProto.data_type
constexpr uint32_t kTensorRawData = 9;                   // TensorProto.raw_data
constexpr uint32_t kTensorDataLocation = 14;             // TensorProto.data_location
constexpr uint64_t kInt32 = 6, kInt64 = 7, kString = 8;  // TensorProto.DataType

/// TensorProto's typed value fields: float_data, int32_data, string_data, int64_data, double_data,
/// uint64_data.
bool is_typed_data(uint32_t number) {
  return number == 4 || number == 5 || number == 6 || number == 7 || number == 10 || number == 11;
}

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

/// One field: its number and wire type, its whole encoding (tag to end) and, for a varint its
/// value, for a length-delimited field its payload.
struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  std::string_view whole;
  std::string_view payload;
  uint64_t value = 0;
};

bool read_varint(std::string_view& in, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80u) == 0) return true;
  }
  return false;
}

/// Reads the next field of `in`; false at a malformed or unsupported (group) encoding.
bool read_field(std::string_view& in, Field& field) {
  const std::string_view start = in;
  uint64_t tag = 0;
  // Protobuf reads tags as 32-bit values: a longer one would name another field there.
  if (!read_varint(in, tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
  field.number = static_cast<uint32_t>(tag >> 3);
  field.wire_type = static_cast<int>(tag & 7);
  switch (field.wire_type) {
    case kVarint:
      if (!read_varint(in, field.value)) return false;
      break;
    case kFixed64:
    case kFixed32: {
      const size_t n = field.wire_type == kFixed64 ? 8 : 4;
      if (in.size() < n) return false;
      in.remove_prefix(n);
      break;
    }
    case kLengthDelimited: {
      uint64_t length = 0;
      if (!read_varint(in, length) || length > in.size()) return false;
      field.payload = in.substr(0, length);
      in.remove_prefix(length);
      break;
    }
    default:
      return false;
  }
  field.whole = start.substr(0, start.size() - in.size());
  return true;
}

void write_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void write_message(std::string& out, uint32_t number, const std::string& payload) {
  write_varint(out, (uint64_t{number} << 3) | kLengthDelimited);
  write_varint(out, payload.size());
  out += payload;
}

class Stripper {
 public:
  Stripper(std::string_view file, int64_t min_bytes) : file_(file), min_bytes_(min_bytes) {}

  std::optional<StrippedModel> model() {
    StrippedModel stripped;
    std::string_view in = file_;
    bool seen_graph = false;
    Field field;
    while (!in.empty()) {
      if (!read_field(in, field)) return std::nullopt;
      if (field.number != kModelGraph || field.wire_type != kLengthDelimited) {
        stripped.bytes += field.whole;
        continue;
      }
      if (seen_graph) return std::nullopt;  // protobuf would merge the two; leave that to it
      seen_graph = true;
      std::string graph;
      if (!this->graph(field.payload, graph, stripped.raw_data)) return std::nullopt;
      write_message(stripped.bytes, kModelGraph, graph);
    }
    return stripped;
  }

 private:
  bool graph(std::string_view in, std::string& out, std::vector<RawDataInFile>& raw_data) const {
    int initializer = 0;
    Field field;
    while (!in.empty()) {
      if (!read_field(in, field)) return false;
      if (field.number != kGraphInitializer || field.wire_type != kLengthDelimited) {
        out += field.whole;
        continue;
      }
      std::string tensor;
      std::optional<RawDataInFile> cut;
      if (!this->tensor(field.payload, tensor, cut)) return false;
      if (cut) {
        cut->initializer = initializer;
        raw_data.push_back(*cut);
        write_message(out, kGraphInitializer, tensor);
      } else {
        out += field.whole;
      }
      ++initializer;
    }
    return true;
  }

  /// The tensor's fields without raw_data into `out` and the cut into `cut`, when it is cut.
  bool tensor(std::string_view in, std::string& out, std::optional<RawDataInFile>& cut) const {
    uint64_t data_type = 0, data_location = 0;
    int typed_fields = 0;
    std::string_view raw;
    int raw_fields = 0;
    Field field;
    for (std::string_view rest = in; !rest.empty();) {
      if (!read_field(rest, field)) return false;
      if (field.number == kTensorDataType && field.wire_type == kVarint) data_type = field.value;
      if (field.number == kTensorDataLocation && field.wire_type == kVarint) data_location = field.value;
      if (is_typed_data(field.number)) ++typed_fields;
      if (field.number == kTensorRawData && field.wire_type == kLengthDelimited) {
        raw = field.payload;
        ++raw_fields;
      }
    }
    if (raw_fields != 1 || typed_fields != 0 || data_location != 0 || static_cast<int64_t>(raw.size()) < min_bytes_ ||
        data_type == kInt32 || data_type == kInt64 || data_type == kString) {
      return true;
    }
    for (std::string_view rest = in; !rest.empty();) {
      read_field(rest, field);
      if (field.number != kTensorRawData || field.wire_type != kLengthDelimited) out += field.whole;
    }
    cut = RawDataInFile{0, raw.data() - file_.data(), static_cast<int64_t>(raw.size())};
    return true;
  }

  std::string_view file_;
  int64_t min_bytes_;
};

}  // namespace

std::optional<StrippedModel> strip_initializer_raw_data(std::string_view model, int64_t min_bytes) {
  return Stripper(model, min_bytes).model();
}

}  // namespace edgemm::ir
