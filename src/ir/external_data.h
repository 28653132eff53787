#pragma once
/// \file external_data.h
/// ONNX external tensor data (onnx.proto's `external_data` entries; ONNX IR spec, "External
/// Tensor Data"): where a tensor's bytes lie in a file beside the model, and those bytes read or
/// mapped in place.

#include <cstdint>
#include <string>

#include "core/long_lived_memory.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace onnx {
class TensorProto;
}

namespace edgemm::ir {

/// One tensor's bytes: [offset, offset + length) of the file `file` names (its path canonical,
/// inside the model's folder, or the model file itself). The file is opened again to read them
/// (core::reopen_read_only), so that an import with many data files keeps none of them open, and
/// refused if another file took its place meanwhile.
struct ExternalRange {
  core::FileId file;
  int64_t offset = 0;
  int64_t length = 0;
};

/// Resolves `proto`'s `location`, `offset` and `length` under `base_dir` (no length means "to
/// the end of the file"). Errors: kInvalidModel for a location that is empty, absolute or leaves
/// the folder (`..`, or a symbolic link pointing out), an offset or length that is not a
/// non-negative decimal integer, a range outside the file, or a length other than the bytes
/// `proto`'s dims and data type declare; kIo when the file is missing, not a regular file, or
/// cannot be opened.
Expected<ExternalRange> resolve_external_range(const onnx::TensorProto& proto, const std::string& base_dir);

/// The range's bytes. Errors: kIo when the file changed or cannot be read whole.
Expected<std::string> read_external_range(const ExternalRange& range, const std::string& tensor_name);

/// A tensor of `dtype` and `shape` whose data is `range`. A range of at least
/// core::kMappedFromBytes whose offset is a multiple of 64 is mapped in place
/// (core::map_file_range: the page cache's pages, not a copy; unmapped with the tensor's last
/// copy; read instead where the file system cannot map); any other is read into
/// core::create_long_lived_tensor memory. Writes to a mapped tensor stay in the process. A
/// mapped file must keep its size while the tensor lives: reading a page past its end raises
/// SIGBUS, as with any mapping.
/// Errors: kInvalidModel when the range's length is not the byte size of `shape` × `dtype`;
/// kIo when the file changed or cannot be read; the errors of core::create_long_lived_tensor.
Expected<Tensor> tensor_from_external_range(DataType dtype, Shape shape, const ExternalRange& range,
                                            const std::string& tensor_name);

}  // namespace edgemm::ir
