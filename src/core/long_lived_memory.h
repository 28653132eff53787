#pragma once
/// \file long_lived_memory.h
/// Memory for buffers that live as long as a model: its weights as imported and the kernels'
/// packed copies of them.
///
/// Why not the heap: glibc serves large blocks with mmap() only until the first such block is
/// freed; it then raises its mmap threshold to that block's size (up to 32 MiB) and serves
/// later blocks of that size from its heap, which it hands back to the system only from the
/// top. Weights freed while their packed copies are made (runtime::CompiledGraph::
/// compile_freeing_packed) then stay resident, and a load peaks at both copies; mapping each
/// large buffer on its own returns its pages the moment it is freed (docs/architecture.md,
/// compile; docs/clip.md, "Memory and load time").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::core {

/// Buffers of at least this many bytes are mapped on their own; smaller ones come from the heap.
inline constexpr size_t kMappedFromBytes = size_t{1} << 20;

/// `bytes` of zero-filled memory, 64-byte aligned, freed when the last copy of the returned
/// pointer goes: from kMappedFromBytes up an anonymous private mapping of its own (unmapped
/// when freed), below that aligned heap memory. nullptr when out of memory (0 bytes gives a
/// valid 64-byte block).
std::shared_ptr<void> allocate_long_lived(size_t bytes);

/// Tensor::create with its buffer from allocate_long_lived(): zero-filled, 64-byte aligned.
/// Errors as Tensor::create.
Expected<Tensor> create_long_lived_tensor(DataType dtype, Shape shape);

/// Which file: the path it was opened by, and what identifies it there (device and inode) with
/// its size at the time.
struct FileId {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
};

/// A file opened read-only, closed with the last copy.
struct ReadOnlyFile {
  FileId id;
  std::shared_ptr<const int> fd;  ///< the descriptor
};

/// Opens `path` read-only. Errors: kIo naming the path and the system's reason.
Expected<ReadOnlyFile> open_read_only(const std::string& path);

/// Opens `id.path` again, refusing anything but the same file at the same size: kIo saying it
/// changed (another file renamed over the path, or the file grown or cut) or open_read_only's.
Expected<ReadOnlyFile> reopen_read_only(const FileId& id);

/// Reads bytes [offset, offset + length) of `file` into `dst`. Errors: kIo when fewer bytes
/// come (the file shrank), naming the path.
Status read_file_range(const ReadOnlyFile& file, int64_t offset, int64_t length, void* dst);

/// Bytes of a file mapped in place: `data` is the first byte asked for; `storage` holds the
/// mapping, which is unmapped when its last copy goes.
struct MappedFileRange {
  std::shared_ptr<void> storage;
  void* data = nullptr;
};

/// Maps bytes [offset, offset + length) of `file` (mmap, private copy-on-write; read in at once
/// when `populate`, else page by page as touched). The pages are the page cache's, shared with
/// every process reading the file and counted as file-backed, not anonymous, memory (the mapping
/// is populated read-only, then made writable); a write copies only the page it touches, in this
/// process. `data` is 64-byte aligned when `offset` is a multiple of 64. The file must keep its
/// size while mapped: reading a page past its end raises SIGBUS. Errors: kInvalidArgument for a
/// negative offset or a length below 1; kIo when the file cannot be mapped (some file systems
/// cannot: read it instead), naming the path and the system's reason.
Expected<MappedFileRange> map_file_range(const ReadOnlyFile& file, int64_t offset, int64_t length,
                                         bool populate = true);

}  // namespace edgemm::core
