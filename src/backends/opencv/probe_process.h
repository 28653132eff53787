#pragma once
/// \file probe_process.h
/// Runs capability probes (one-node ONNX models) through OpenCV DNN 4.6 in a helper process,
/// the `edgemm-opencv-probe` program (probe_child.h). OpenCV 4.6 does not only throw on what it
/// cannot run: some nodes write outside their buffers (CumSum over a non-last axis computes
/// garbage and can end in glibc's "double free or corruption"), which in this process would
/// corrupt edgemm's heap or abort the program.
///
/// The helper is spawned (posix_spawn), not forked from this process: a fork of a process whose
/// other threads (OpenCV's or edgemm's pools, the caller's own) hold a lock leaves that lock
/// taken forever in the child, and GCC 12's AddressSanitizer allocator has no fork handlers,
/// so a child forked while another thread allocated hung on its next allocation.
///
/// One helper serves the probes of a ProbeProcess, one at a time: a job is copied into a shared
/// memory file (memfd) that the helper maps, and the answer comes back through a socket
/// (probe_protocol.h). A helper that dies is replaced, and the probe it was running is tried
/// again alone in the new one, so a crash is blamed on a probe only when that probe crashes a
/// fresh process too. A helper that stops answering is killed after kProbeTimeoutSeconds.
///
/// The helper is found at $EDGEMM_OPENCV_PROBE when that is set, else beside the running program
/// (build/bin/edgemm), else where this build put it (EDGEMM_OPENCV_PROBE_BUILD_PATH).

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/opencv/probe_protocol.h"
#include "edgemm/status.h"

namespace edgemm::backends::opencv {

/// The answer to one probe.
struct ProbeAnswer {
  std::string reason;  ///< "" when OpenCV runs the node and agrees with the native kernels
  /// False when the probe itself could not run (no helper, socket or shared file): the reason
  /// says nothing about the node and must not be cached.
  bool about_node = true;
};

/// Longest a helper may spend on one probe before it is killed and the probe refused (seconds).
inline constexpr int kProbeTimeoutSeconds = 60;

/// The probe helper's path: $EDGEMM_OPENCV_PROBE when set, else `edgemm-opencv-probe` beside
/// the running program, else the one this build made. Errors: kIo naming every place
/// looked at (and $EDGEMM_OPENCV_PROBE when set to a file that is not an executable).
Expected<std::string> probe_helper_path();

/// The probe helper of one capability() call. Not thread-safe (one caller drives it); separate
/// ProbeProcess objects may run in parallel.
class ProbeProcess {
 public:
  /// No helper yet: the first submit() starts it.
  ProbeProcess();
  ProbeProcess(const ProbeProcess&) = delete;
  ProbeProcess& operator=(const ProbeProcess&) = delete;
  /// Ends the helper (EOF on its socket, then waits for it) and closes the shared file.
  ~ProbeProcess();

  /// Hands `job` to the helper (starting it on first use) and returns without waiting, so the
  /// caller can prepare the next job meanwhile. Errors: kIo when there is no helper or when the
  /// shared file or the helper cannot be set up (then wait() returns that message).
  Status submit(const ProbeJob& job);

  /// Waits for the answer to the job last submitted: reason "" when OpenCV imported the model,
  /// ran forward on job.input_values, gave the declared output shapes (DnnNet::forward_blobs)
  /// and, when job.expected is set, the same values within kProbeTolerance; else why not, e.g.
  /// "OpenCV DNN 4.6 cannot import it: ...", "OpenCV DNN 4.6 crashed probing it (signal 6,
  /// Aborted)", "OpenCV DNN 4.6 did not finish probing it within 60 s".
  ProbeAnswer wait();

 private:
  /// How the helper answered (or not) the job it was given.
  enum class End { kAnswered, kCrashed, kOther };
  /// Spawns the helper with its socket and the shared file at kChildSocketFd and kChildMemFd.
  /// Errors: kIo naming the missing helper or the failed call.
  Status start();
  /// Kills (when `kill_first`) and reaps the helper; its wait status, or -1 when unknown.
  int stop(bool kill_first);
  /// Grows the shared file to at least `bytes` (doubling). Errors: kIo.
  Status reserve(size_t bytes);
  /// Sends the size of the job already in the shared file to the helper. Errors: kIo.
  Status send();
  /// The helper's answer; when it gives none (crash, timeout), why, and the helper is gone.
  std::string receive(End* end);

  pid_t pid_ = -1;
  int memfd_ = -1;                       ///< the job, as serialized by submit()
  int socket_fd_ = -1;                   ///< job sizes to the helper, answers from it
  size_t job_bytes_ = 0;                 ///< size of the job in the shared file
  size_t file_bytes_ = 0;                ///< size of the shared file
  std::unique_ptr<JobMapping> mapping_;  ///< the parent's view of the shared file
  std::string failed_;                   ///< why the last submit() failed (not about the node)
};

}  // namespace edgemm::backends::opencv
