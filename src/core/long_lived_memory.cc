#include "core/long_lived_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace edgemm::core {

std::shared_ptr<void> allocate_long_lived(size_t bytes) {
  if (bytes >= kMappedFromBytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    return std::shared_ptr<void>(p, [bytes](void* q) { ::munmap(q, bytes); });  // pages come zeroed
  }
  const size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) return nullptr;
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Expected<Tensor> create_long_lived_tensor(DataType dtype, Shape shape) {
  // Tensor::create words every error (dtype, extents, size limit) before anything is allocated.
  const Expected<int64_t> count = shape_element_count(shape);
  if (!dtype_supported(dtype) || !count || *count > kMaxTensorBytes / static_cast<int64_t>(dtype_size(dtype))) {
    return Tensor::create(dtype, shape);
  }
  const size_t bytes = static_cast<size_t>(*count) * dtype_size(dtype);
  std::shared_ptr<void> storage = allocate_long_lived(bytes);
  if (storage == nullptr) {
    return make_error(StatusCode::kOutOfMemory, "could not allocate " + std::to_string(bytes) +
                                                    " bytes for a tensor of shape " + shape_to_string(shape));
  }
  void* data = storage.get();
  return Tensor::from_storage(dtype, std::move(shape), std::move(storage), data);
}

Expected<ReadOnlyFile> open_read_only(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(StatusCode::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int stat_errno = errno;
    ::close(fd);
    return make_error(StatusCode::kIo, "cannot read '" + path + "': " + std::strerror(stat_errno));
  }
  ReadOnlyFile file;
  file.id = {path, static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino),
             static_cast<int64_t>(info.st_size)};
  file.fd = std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
  return file;
}

Expected<ReadOnlyFile> reopen_read_only(const FileId& id) {
  EDGEMM_ASSIGN_OR_RETURN(ReadOnlyFile file, open_read_only(id.path));
  if (file.id.device != id.device || file.id.inode != id.inode || file.id.size != id.size) {
    return make_error(StatusCode::kIo, "'" + id.path + "' changed while the model was loading (it was " +
                                           std::to_string(id.size) + " bytes, now another file or " +
                                           std::to_string(file.id.size) + " bytes)");
  }
  return file;
}

Status read_file_range(const ReadOnlyFile& file, int64_t offset, int64_t length, void* dst) {
  int64_t done = 0;
  while (done < length) {
    const ssize_t got =
        ::pread(*file.fd, static_cast<char*>(dst) + done, static_cast<size_t>(length - done), offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += got;
  }
  if (done != length) {
    return make_error(StatusCode::kIo, "could not read " + std::to_string(length) + " bytes at offset " +
                                           std::to_string(offset) + " of '" + file.id.path +
                                           "' (the file changed while being read?)");
  }
  return Status::ok();
}

Expected<MappedFileRange> map_file_range(const ReadOnlyFile& file, int64_t offset, int64_t length, bool populate) {
  if (offset < 0 || length < 1) {
    return make_error(StatusCode::kInvalidArgument, "cannot map bytes [" + std::to_string(offset) + ", +" +
                                                        std::to_string(length) + ") of '" + file.id.path + "'");
  }
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t start = offset / page * page;
  const size_t bytes = static_cast<size_t>(offset - start + length);
  // Populated read-only, then made writable: populating a writable private mapping would copy
  // every page (the kernel breaks copy-on-write in advance for a writable populate).
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), *file.fd, start);
  if (base == MAP_FAILED || ::mprotect(base, bytes, PROT_READ | PROT_WRITE) != 0) {
    const int map_errno = errno;
    if (base != MAP_FAILED) ::munmap(base, bytes);
    return make_error(StatusCode::kIo, "cannot map " + std::to_string(length) + " bytes at offset " +
                                           std::to_string(offset) + " of '" + file.id.path +
                                           "': " + std::strerror(map_errno));
  }
  MappedFileRange range;
  range.storage = std::shared_ptr<void>(base, [bytes](void* p) { ::munmap(p, bytes); });
  range.data = static_cast<char*>(base) + (offset - start);
  return range;
}

}  // namespace edgemm::core
