#pragma once
/// \file atomic_file.h
/// Outputs written whole or not at all. A file is written under a temporary name in its own
/// folder ('.<name>.tmp-<pid>-<n>') and renamed over the destination once complete: rename(2)
/// within one file system is atomic, so readers and concurrent writers see the old file or a
/// new complete one, never a part (the last writer wins). The temporaries of unfinished outputs
/// are registered so that a signal watcher (the edgemm CLI has one) can remove them
/// before the process dies. This guards against interruption and concurrent writers, not power
/// loss (nothing is fsync'ed). A symbolic link stays and its target is replaced; a device or pipe
/// (/dev/null) is written in place.

#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "edgemm/status.h"

namespace edgemm {

/// A file being written to a temporary beside its destination. Not copyable; the destructor
/// removes the temporary unless commit() succeeded.
class AtomicFile {
 public:
  /// Creates the temporary beside `path`. Errors: kIo naming `path` and the OS error (missing
  /// folder, no permission).
  static Expected<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends `size` bytes; a failure is remembered and reported by commit().
  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }

  /// Closes the temporary and renames it over the destination. Errors: kIo naming the
  /// destination and the OS error (disk full, the destination is a folder); the temporary is
  /// then removed and the destination left as it was.
  Status commit();

  /// The destination.
  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string target, std::string temp, std::FILE* file);
  void discard();

  std::string path_;    ///< as given, for messages
  std::string target_;  ///< what the temporary replaces: `path_`, or the file its link points to
  std::string temp_;    ///< empty when writing in place
  std::FILE* file_ = nullptr;
  int error_ = 0;  ///< errno of the first failed write
};

/// Writes `bytes` to `path` through an AtomicFile. Errors: those of AtomicFile.
Status write_file_atomically(const std::string& path, std::string_view bytes);

/// Records `path` (a file or folder) as an unfinished output, removed by remove_temporaries().
void register_temporary(const std::string& path);
/// Forgets `path` (it was committed or removed).
void forget_temporary(const std::string& path);
/// Removes every registered temporary (folders with their contents); returns how many there
/// were. For a signal watcher about to end the process: it takes lock_outputs() first.
int remove_temporaries();
/// Held while outputs are committed (renamed into place), so that a signal watcher calling
/// remove_temporaries() waits until a group of renames (a model and its external data) is done.
/// Recursive: the holder may register, forget and commit.
std::unique_lock<std::recursive_mutex> lock_outputs();

}  // namespace edgemm
