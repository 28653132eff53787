#include "output_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli_common.h"
#include "edgemm/atomic_file.h"

namespace edgemm::cli {

namespace fs = std::filesystem;

namespace {

Status os_error(const std::string& what, int error) {
  return Status(StatusCode::kIo, what + ": " + std::strerror(error));
}

/// The files under `dir`, relative to it, manifest excluded.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (fs::is_directory(it->symlink_status(ec))) continue;  // a link counts as a file, not followed
    const std::string relative = it->path().lexically_relative(dir).string();
    if (relative != kOutputManifest) files.insert(relative);
  }
  return files;
}

/// The files an earlier edgemm run listed in `dir`'s manifest; empty when there is none.
std::set<std::string> manifest_files(const fs::path& dir) {
  std::ifstream in(dir / kOutputManifest);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  std::set<std::string> files;
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) return files;
  for (const auto& f : j["files"]) {
    if (f.is_string()) files.insert(f.get<std::string>());
  }
  return files;
}

/// OK when `dir` may be replaced: missing, empty, or holding only files its manifest lists.
/// Messages name the folder as `shown`.
Status check_replaceable(const fs::path& dir, const std::string& shown) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (!fs::exists(status)) return Status::ok();
  if (!fs::is_directory(status)) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + shown + "' is a file (or a link), not a folder; a folder is written there");
  }
  const std::set<std::string> present = files_under(dir);
  const bool has_manifest = fs::exists(dir / kOutputManifest, ec);
  if (present.empty() && !has_manifest && fs::is_empty(dir, ec)) return Status::ok();
  if (!has_manifest) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + shown + "' is not empty and was not written by edgemm (it has no " + kOutputManifest +
                      "): nothing is overwritten; give a new or empty folder");
  }
  const std::set<std::string> listed = manifest_files(dir);
  for (const std::string& f : present) {
    if (!listed.count(f)) {
      return Status(StatusCode::kInvalidArgument, "'" + shown + "' holds '" + f +
                                                      "', which edgemm did not write: nothing is overwritten; move it "
                                                      "away or give another folder");
    }
  }
  return Status::ok();
}

/// kInvalidArgument when one of `inputs` lies inside `dir` (replacing it would delete the input).
Status check_no_input_inside(const fs::path& dir, const std::string& shown, const std::vector<std::string>& inputs) {
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(dir, ec);
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const fs::path file = fs::weakly_canonical(input, ec);
    const fs::path relative = file.lexically_relative(folder);
    if (!relative.empty() && *relative.begin() != "..") {
      return Status(StatusCode::kInvalidArgument,
                    "refusing to write '" + shown + "': it holds an input, '" + input + "'");
    }
  }
  return Status::ok();
}

/// Creates (or opens) the staging folder and locks it. Returns the lock's descriptor.
Expected<int> lock_staging(const fs::path& staging, const std::string& path) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::mkdir(staging.c_str(), 0777) != 0 && errno != EEXIST) {
      return os_error("cannot create the staging folder '" + staging.string() + "'", errno);
    }
    const int fd = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) continue;  // removed meanwhile by the writer that finished
    if (fd < 0) return os_error("cannot open the staging folder '" + staging.string() + "'", errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error != EWOULDBLOCK) return os_error("cannot lock '" + staging.string() + "'", error);
      return Status(StatusCode::kIo, "'" + path + "' is being written by another edgemm process (its staging folder '" +
                                         staging.string() + "' is locked): wait for it to finish, or write elsewhere");
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::stat(staging.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      return fd;
    }
    ::close(fd);  // the folder was renamed into place or removed between open and lock: again
  }
  return Status(StatusCode::kIo, "cannot lock the staging folder '" + staging.string() + "': it keeps changing");
}

/// Removes `dir` with its contents, again if files appeared while it was removed.
void remove_folder(const fs::path& dir) {
  std::error_code ec;
  for (int attempt = 0; attempt < 3 && fs::exists(fs::symlink_status(dir, ec)); ++attempt) fs::remove_all(dir, ec);
}

Status write_manifest(const fs::path& staging) {
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& f : files_under(staging)) files.push_back(f);
  const nlohmann::json j = {{"schema", "edgemm.output/1"}, {"command", invocation()}, {"files", files}};
  return write_text_file((staging / kOutputManifest).string(), json_text(j) + "\n");
}

/// Puts `staging` in place of the existing folder `path` and removes the old content.
Status swap_into_place(const fs::path& staging, const fs::path& path) {
  // The old folder is locked while it sits at the staging name, so that a writer arriving now
  // does not take it for a stale staging folder and start writing into it.
  const int old_fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (old_fd >= 0) ::flock(old_fd, LOCK_EX);
  Status status = Status::ok();
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    remove_folder(staging);
  } else if (errno == EINVAL || errno == ENOSYS) {  // a file system without RENAME_EXCHANGE
    const fs::path old = path.parent_path() / ("." + path.filename().string() + ".edgemm-old");
    remove_folder(old);
    if (::rename(path.c_str(), old.c_str()) != 0) {
      status = os_error("cannot replace '" + path.string() + "'", errno);
    } else if (::rename(staging.c_str(), path.c_str()) != 0) {
      status = os_error("cannot replace '" + path.string() + "'", errno);
      ::rename(old.c_str(), path.c_str());  // the earlier output back in place
    } else {
      remove_folder(old);
    }
  } else {
    status = os_error("cannot replace '" + path.string() + "'", errno);
  }
  if (old_fd >= 0) ::close(old_fd);
  return status;
}

/// The folder as an absolute path without "." or ".." parts or trailing separators ("out/",
/// "./out" and "out" are one folder; "." is the working folder by its name).
fs::path folder_path(const std::string& path) {
  std::error_code ec;
  fs::path dir = fs::absolute(path, ec).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  return dir;
}

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = ::write(g_signal_pipe[1], &byte, 1);
}

std::mutex g_handler_mutex;
std::function<void()> g_interrupt_handler;  // set_interrupt_handler's, called on the first signal

/// Waits for a signal, removes the unfinished outputs, and ends the process by that signal (after
/// calling the interrupt handler on the first one instead, when there is one).
void watch_signals() {
  unsigned char sig = 0;
  for (bool first = true;; first = false) {
    while (::read(g_signal_pipe[0], &sig, 1) != 1) {
    }
    std::lock_guard<std::mutex> lock(g_handler_mutex);  // set_interrupt_handler waits for it
    if (!first || !g_interrupt_handler) break;
    g_interrupt_handler();
  }
  auto lock = lock_outputs();  // a commit in progress finishes first; none starts after
  if (remove_temporaries() > 0) std::cerr << "edgemm: interrupted; the unfinished output was removed" << std::endl;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
  ::_exit(128 + sig);
}

}  // namespace

OutputFolder::OutputFolder(std::string shown, fs::path path, fs::path staging, int lock_fd)
    : shown_(std::move(shown)), path_(std::move(path)), staging_(std::move(staging)), lock_fd_(lock_fd) {}

OutputFolder::OutputFolder(OutputFolder&& other) noexcept
    : shown_(std::move(other.shown_)),
      path_(std::move(other.path_)),
      staging_(std::move(other.staging_)),
      lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

OutputFolder& OutputFolder::operator=(OutputFolder&& other) noexcept {
  if (this == &other) return *this;
  release();
  shown_ = std::move(other.shown_);
  path_ = std::move(other.path_);
  staging_ = std::move(other.staging_);
  lock_fd_ = other.lock_fd_;
  other.lock_fd_ = -1;
  return *this;
}

OutputFolder::~OutputFolder() { release(); }

Expected<OutputFolder> OutputFolder::claim(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "the output folder name is empty");
  if (path == "-") {
    return Status(StatusCode::kInvalidArgument, "a folder cannot be written to standard output ('-'): give its name");
  }
  const fs::path dir = folder_path(path);
  if (!dir.has_filename() || dir == dir.root_path()) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' cannot be replaced by an output folder");
  }
  EDGEMM_RETURN_IF_ERROR(check_replaceable(dir, path));  // before creating anything
  EDGEMM_RETURN_IF_ERROR(check_no_input_inside(dir, path, inputs));
  std::error_code ec;
  const fs::path parent = dir.parent_path();
  fs::create_directories(parent, ec);
  if (ec) return os_error("cannot create '" + parent.string() + "'", ec.value());
  const fs::path staging = parent / ("." + dir.filename().string() + ".edgemm-tmp");
  auto lock = lock_outputs();
  EDGEMM_ASSIGN_OR_RETURN(const int fd, lock_staging(staging, path));
  register_temporary(staging.string());
  OutputFolder folder(path, dir, staging, fd);
  for (const auto& entry : fs::directory_iterator(staging, ec)) fs::remove_all(entry.path(), ec);  // a stale one
  EDGEMM_RETURN_IF_ERROR(check_replaceable(dir, path));  // again, now that no other edgemm writes it
  return folder;
}

Status OutputFolder::commit() {
  if (lock_fd_ < 0) return Status(StatusCode::kInternal, "'" + shown_ + "' was already committed");
  Status status = write_manifest(staging_);
  auto lock = lock_outputs();
  if (status.is_ok()) status = check_replaceable(path_, shown_);
  if (status.is_ok()) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path_, ec))) {
      if (::rename(staging_.c_str(), path_.c_str()) != 0) status = os_error("cannot create '" + shown_ + "'", errno);
    } else {
      status = swap_into_place(staging_, path_);
    }
  }
  if (!status.is_ok()) {
    release();
    return status;
  }
  forget_temporary(staging_.string());  // its name may already be another writer's new staging folder
  ::close(lock_fd_);
  lock_fd_ = -1;
  return Status::ok();
}

void OutputFolder::release() {
  if (lock_fd_ < 0) return;
  auto lock = lock_outputs();
  remove_folder(staging_);  // not committed: still ours, locked
  forget_temporary(staging_.string());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

void set_interrupt_handler(std::function<void()> handler) {
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  g_interrupt_handler = std::move(handler);
}

void install_interrupt_cleanup() {
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  std::thread(watch_signals).detach();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace edgemm::cli
