#include "ir/external_data.h"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/long_lived_memory.h"

namespace edgemm::ir {

namespace fs = std::filesystem;

namespace {

Status invalid_data(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }

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

/// Reads the range into `dst` (range.length bytes), retrying short reads.
Status read_range_into(const ExternalRange& range, const std::string& tensor_name, char* dst) {
  const int fd = ::open(range.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(StatusCode::kIo, "tensor '" + tensor_name + "': cannot open external data file '" + range.path +
                                           "': " + std::strerror(errno));
  }
  int64_t done = 0;
  while (done < range.length) {
    const ssize_t got = ::pread(fd, dst + done, static_cast<size_t>(range.length - done), range.offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += got;
  }
  ::close(fd);
  if (done != range.length) {
    return make_error(StatusCode::kIo, "tensor '" + tensor_name + "': could not read " + std::to_string(range.length) +
                                           " bytes of '" + range.path + "' (the file changed while being read?)");
  }
  return Status::ok();
}

}  // namespace

Expected<ExternalRange> resolve_external_range(const onnx::TensorProto& proto, const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      return invalid_data("tensor '" + proto.name() + "': external data field '" + kv.key() + "' = '" + kv.value() +
                          "' is not a number");
    }
  }
  ExternalRange range;
  EDGEMM_ASSIGN_OR_RETURN(range.path, resolve_location(proto.name(), location, base_dir));
  std::error_code ec;
  if (!fs::is_regular_file(range.path, ec)) {
    return make_error(StatusCode::kIo, "tensor '" + proto.name() + "': external data file '" + location +
                                           "' is missing (looked in '" + base_dir + "')");
  }
  const int64_t file_size = static_cast<int64_t>(fs::file_size(range.path, ec));
  if (length < 0) length = file_size - offset;
  if (offset < 0 || length < 0 || offset > file_size || length > file_size - offset) {
    return invalid_data("tensor '" + proto.name() + "': external data range [" + std::to_string(offset) + ", +" +
                        std::to_string(length) + ") lies outside '" + location + "' (" + std::to_string(file_size) +
                        " bytes)");
  }
  range.offset = offset;
  range.length = length;
  return range;
}

Expected<std::string> read_external_range(const ExternalRange& range, const std::string& tensor_name) {
  std::string bytes(static_cast<size_t>(range.length), '\0');
  EDGEMM_RETURN_IF_ERROR(read_range_into(range, tensor_name, bytes.data()));
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
  if (range.length >= static_cast<int64_t>(core::kMappedFromBytes) && range.offset % 64 == 0) {
    auto mapped = core::map_file_range(range.path, range.offset, range.length);
    if (!mapped) return Status(mapped.status().code(), what + ": " + mapped.status().message());
    return Tensor::from_storage(dtype, std::move(shape), std::move(mapped->storage), mapped->data);
  }
  auto created = core::create_long_lived_tensor(dtype, shape);
  if (!created) return Status(created.status().code(), what + ": " + created.status().message());
  Tensor t = std::move(created).value();
  if (range.length > 0) EDGEMM_RETURN_IF_ERROR(read_range_into(range, tensor_name, static_cast<char*>(t.raw_data())));
  return t;
}

}  // namespace edgemm::ir
