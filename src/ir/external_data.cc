#include "ir/external_data.h"

#include <onnx/onnx_pb.h>

#include <charconv>
#include <filesystem>
#include <optional>

namespace edgemm::ir {

namespace fs = std::filesystem;

namespace {

Status invalid_data(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }

/// A non-negative decimal integer written whole ("64", not "0x40", "64abc" or "-1"); nullopt
/// otherwise.
std::optional<int64_t> parse_size(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

/// The bytes a `dtype` tensor of `shape` holds; nullopt for a dtype no Tensor holds, strings,
/// or a shape whose size is invalid or past kMaxTensorBytes (the conversion words those).
std::optional<int64_t> declared_bytes(DataType dtype, const Shape& shape) {
  const Expected<int64_t> count = shape_element_count(shape);
  if (!dtype_supported(dtype) || dtype == DataType::kString || !count ||
      *count > kMaxTensorBytes / static_cast<int64_t>(dtype_size(dtype))) {
    return std::nullopt;
  }
  return *count * static_cast<int64_t>(dtype_size(dtype));
}

/// Resolves a `location` under `base_dir`, refusing escapes.
Expected<std::string> resolve_location(const std::string& tensor_name, const std::string& location,
                                       const std::string& base_dir) {
  const std::string prefix = "tensor '" + tensor_name + "': external data location '" + location + "' ";
  if (base_dir.empty()) return invalid_data(prefix + "cannot be resolved: the model was not loaded from a file");
  fs::path loc(location);
  if (location.empty() || loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    return invalid_data(prefix + "is absolute or empty; it must be a relative path inside the model's folder");
  }
  for (const auto& part : loc) {
    if (part == "..") return invalid_data(prefix + "climbs out of the model's folder ('..' is not allowed)");
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  fs::path full = fs::weakly_canonical(fs::path(base_dir) / loc, ec);
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return invalid_data(prefix + "resolves outside the model's folder (through a symbolic link)");
  }
  return full.string();
}

}  // namespace

Expected<ExternalRange> resolve_external_range(const onnx::TensorProto& proto, const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() != "offset" && kv.key() != "length") continue;
    const std::optional<int64_t> value = parse_size(kv.value());
    if (!value) {
      return invalid_data("tensor '" + proto.name() + "': external data field '" + kv.key() + "' = '" + kv.value() +
                          "' is not a non-negative decimal integer");
    }
    (kv.key() == "offset" ? offset : length) = *value;
  }
  EDGEMM_ASSIGN_OR_RETURN(const std::string path, resolve_location(proto.name(), location, base_dir));
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    const std::string why = fs::exists(path, ec) ? "' is not a regular file ('" + path + "')"
                                                 : "' is missing (looked in '" + base_dir + "')";
    return make_error(StatusCode::kIo, "tensor '" + proto.name() + "': external data file '" + location + why);
  }
  auto file = core::open_read_only(path);
  if (!file) return Status(file.status().code(), "tensor '" + proto.name() + "': " + file.status().message());
  const int64_t file_size = file->id.size;
  if (length < 0) length = file_size - offset;
  if (offset > file_size || length > file_size - offset) {
    return invalid_data("tensor '" + proto.name() + "': external data range [" + std::to_string(offset) + ", +" +
                        std::to_string(length) + ") lies outside '" + location + "' (" + std::to_string(file_size) +
                        " bytes)");
  }
  const auto dtype = static_cast<DataType>(proto.data_type());
  const Shape shape(proto.dims().begin(), proto.dims().end());
  const std::optional<int64_t> bytes = declared_bytes(dtype, shape);
  if (bytes && *bytes != length) {
    return invalid_data("tensor '" + proto.name() + "' declares shape " + shape_to_string(shape) + " of " +
                        dtype_name(dtype) + " (" + std::to_string(*bytes) + " bytes) but its external data holds " +
                        std::to_string(length) + " bytes");
  }
  return ExternalRange{file->id, offset, length};
}

Expected<std::string> read_external_range(const ExternalRange& range, const std::string& tensor_name) {
  auto file = core::reopen_read_only(range.file);
  if (!file) return Status(file.status().code(), "tensor '" + tensor_name + "': " + file.status().message());
  std::string bytes(static_cast<size_t>(range.length), '\0');
  const Status read = core::read_file_range(*file, range.offset, range.length, bytes.data());
  if (!read.is_ok()) return Status(read.code(), "tensor '" + tensor_name + "': " + read.message());
  return bytes;
}

Expected<Tensor> tensor_from_external_range(DataType dtype, Shape shape, const ExternalRange& range,
                                            const std::string& tensor_name) {
  const std::string what = "tensor '" + tensor_name + "'";
  const Expected<int64_t> count = shape_element_count(shape);
  if (!count) return Status(count.status().code(), what + ": " + count.status().message());
  if (*count > kMaxTensorBytes / static_cast<int64_t>(dtype_size(dtype))) {
    return invalid_data(what + " declares shape " + shape_to_string(shape) + " of " + dtype_name(dtype) +
                        ", over the " + std::to_string(kMaxTensorBytes >> 30) + " GiB tensor limit");
  }
  const int64_t bytes = *count * static_cast<int64_t>(dtype_size(dtype));
  if (bytes != range.length) {
    return invalid_data(what + " declares shape " + shape_to_string(shape) + " of " + dtype_name(dtype) + " (" +
                        std::to_string(bytes) + " bytes) but holds " + std::to_string(range.length) + " bytes");
  }
  auto file = core::reopen_read_only(range.file);
  if (!file) return Status(file.status().code(), what + ": " + file.status().message());
  if (range.length >= static_cast<int64_t>(core::kMappedFromBytes) && range.offset % 64 == 0) {
    auto mapped = core::map_file_range(*file, range.offset, range.length);
    if (mapped) return Tensor::from_storage(dtype, std::move(shape), std::move(mapped->storage), mapped->data);
  }
  auto created = core::create_long_lived_tensor(dtype, shape);
  if (!created) return Status(created.status().code(), what + ": " + created.status().message());
  Tensor t = std::move(created).value();
  if (range.length > 0) {
    const Status read = core::read_file_range(*file, range.offset, range.length, t.raw_data());
    if (!read.is_ok()) return Status(read.code(), what + ": " + read.message());
  }
  return t;
}

}  // namespace edgemm::ir
