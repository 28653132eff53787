#pragma once
/// \file output_folder.h
/// Folders the CLI writes as one output (`convert --target -o DIR`, `run --output-dir DIR`),
/// and the signal handling that keeps unfinished outputs from staying behind.
///
/// The files go to a staging folder beside DIR, '.<name>.edgemm-tmp', which the writing process
/// holds locked (flock(2), released by the kernel when the process ends, however it ends). When
/// everything is written, a manifest ('.edgemm-output', the files and the command line) is added
/// and the staging folder takes DIR's place (renameat2 RENAME_EXCHANGE, then the old content is
/// removed). So DIR is always absent, the previous complete output, or the new complete output:
/// - a second process aiming at DIR finds the staging folder locked and stops (kIo, exit 6);
/// - SIGINT, SIGTERM or SIGHUP remove the staging folder before the process ends
///   (install_interrupt_cleanup());
/// - a staging folder left by a process killed outright (SIGKILL, power loss) is not locked, and
///   the next writer clears it.
/// DIR may be missing, an empty folder or one an earlier edgemm run wrote (every file in it
/// listed in its manifest): it is replaced whole. A folder holding anything else is refused, so
/// that `-o ~` or a folder with the user's own files is never emptied.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "edgemm/status.h"

namespace edgemm::cli {

/// The manifest file an output folder gets (JSON: schema "edgemm.output/1", command, files).
inline constexpr const char* kOutputManifest = ".edgemm-output";

/// An output folder being written. Not copyable; the destructor removes the staging folder and
/// releases the lock unless commit() succeeded.
class OutputFolder {
 public:
  /// Claims `path` for this process before any long work. `inputs` are the files the command
  /// reads; none may lie inside `path`. Errors: kInvalidArgument for an empty path, a file, a
  /// folder holding files edgemm did not write (named) or holding an input; kIo when another
  /// process is writing `path` (its staging folder is locked) or the staging folder cannot be
  /// created.
  static Expected<OutputFolder> claim(const std::string& path, const std::vector<std::string>& inputs);
  OutputFolder(OutputFolder&& other) noexcept;
  OutputFolder& operator=(OutputFolder&& other) noexcept;
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder();

  /// Where the files go until commit().
  const std::filesystem::path& staging() const { return staging_; }

  /// Writes the manifest and puts the staging folder in place of the folder claimed. Errors:
  /// kInvalidArgument when files edgemm did not write appeared in it meanwhile; kIo when a
  /// rename fails (the staging folder is then removed).
  Status commit();

 private:
  OutputFolder(std::string shown, std::filesystem::path path, std::filesystem::path staging, int lock_fd);
  void release();

  std::string shown_;           ///< the folder as the user wrote it, for messages
  std::filesystem::path path_;  ///< absolute, normalized
  std::filesystem::path staging_;
  int lock_fd_ = -1;
};

/// Makes SIGINT, SIGTERM and SIGHUP remove the registered temporaries (edgemm/atomic_file.h:
/// unfinished files and staging folders) and then end the process by the same signal (a shell
/// reports 128 + the signal number, e.g. 130 for Ctrl-C). A signal ignored when edgemm starts
/// (nohup, background jobs of a non-interactive shell) stays ignored. Called once by main.
void install_interrupt_cleanup();

/// Makes the first SIGINT, SIGTERM or SIGHUP call `handler` (on the thread that watches signals)
/// instead of ending the process, e.g. so that `edgemm serve` drains its requests; a second signal
/// ends it as install_interrupt_cleanup() says. An empty `handler` restores that; setting one
/// waits until a handler that is running has returned.
void set_interrupt_handler(std::function<void()> handler);

}  // namespace edgemm::cli
