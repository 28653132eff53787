#include "edgemm/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

namespace edgemm {

namespace fs = std::filesystem;

namespace {

std::recursive_mutex& outputs_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

std::set<std::string>& temporaries() {
  static std::set<std::string> paths;
  return paths;
}

Status io_error(const std::string& path, int error) {
  return make_error(StatusCode::kIo, "cannot write '" + path + "': " + std::strerror(error));
}

}  // namespace

void register_temporary(const std::string& path) {
  auto lock = lock_outputs();
  temporaries().insert(path);
}

void forget_temporary(const std::string& path) {
  auto lock = lock_outputs();
  temporaries().erase(path);
}

int remove_temporaries() {
  auto lock = lock_outputs();
  const int count = static_cast<int>(temporaries().size());
  std::error_code ec;
  for (const std::string& path : temporaries()) fs::remove_all(path, ec);
  temporaries().clear();
  return count;
}

std::unique_lock<std::recursive_mutex> lock_outputs() {
  return std::unique_lock<std::recursive_mutex>(outputs_mutex());
}

AtomicFile::AtomicFile(std::string path, std::string target, std::string temp, std::FILE* file)
    : path_(std::move(path)), target_(std::move(target)), temp_(std::move(temp)), file_(file) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      temp_(std::move(other.temp_)),
      file_(other.file_),
      error_(other.error_) {
  other.file_ = nullptr;
  other.temp_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this == &other) return *this;
  discard();
  path_ = std::move(other.path_);
  target_ = std::move(other.target_);
  temp_ = std::move(other.temp_);
  file_ = other.file_;
  error_ = other.error_;
  other.file_ = nullptr;
  other.temp_.clear();
  return *this;
}

AtomicFile::~AtomicFile() { discard(); }

Expected<AtomicFile> AtomicFile::create(const std::string& path) {
  static std::atomic<int> counter{0};
  std::error_code ec;
  fs::path destination(path);
  if (fs::is_symlink(fs::symlink_status(destination, ec))) {
    destination = fs::weakly_canonical(destination, ec);  // the link stays; its target is replaced
    if (ec) destination = path;
  }
  const fs::file_status status = fs::status(destination, ec);
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status)) {
    // A device or pipe (/dev/null, a FIFO) is written in place: renaming over it would replace it.
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) return io_error(path, errno);
    return AtomicFile(path, path, "", file);
  }
  if (destination.filename().empty())
    return make_error(StatusCode::kIo, "cannot write '" + path + "': not a file name");
  const std::string temp = (destination.parent_path() / ("." + destination.filename().string() + ".tmp-" +
                                                         std::to_string(getpid()) + "-" + std::to_string(++counter)))
                               .string();
  auto lock = lock_outputs();  // registered before it exists: a signal never leaves it behind
  register_temporary(temp);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    forget_temporary(temp);
    return io_error(path, error);
  }
  std::FILE* file = ::fdopen(fd, "wb");
  if (file == nullptr) {
    const int error = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    forget_temporary(temp);
    return io_error(path, error);
  }
  return AtomicFile(path, destination.string(), temp, file);
}

void AtomicFile::write(const void* data, size_t size) {
  if (error_ != 0 || file_ == nullptr || size == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, size, file_) != size) error_ = errno != 0 ? errno : EIO;
}

Status AtomicFile::commit() {
  if (file_ == nullptr) return make_error(StatusCode::kInternal, "'" + path_ + "' was already committed");
  errno = 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (error_ == 0 && !closed) error_ = errno != 0 ? errno : EIO;
  if (error_ != 0) {
    const Status failed = io_error(path_, error_);
    discard();
    return failed;
  }
  if (temp_.empty()) return Status::ok();  // a device or pipe, written in place
  auto lock = lock_outputs();
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const Status failed = io_error(path_, errno);
    discard();
    return failed;
  }
  forget_temporary(temp_);
  temp_.clear();
  return Status::ok();
}

void AtomicFile::discard() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  if (temp_.empty()) return;
  ::unlink(temp_.c_str());
  forget_temporary(temp_);
  temp_.clear();
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  EDGEMM_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path));
  file.write(bytes);
  return file.commit();
}

}  // namespace edgemm
