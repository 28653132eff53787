#pragma once
/// \file probe_process.h
/// Runs capability probes (one-node ONNX models) through OpenCV DNN 4.6 in a forked child
/// process. OpenCV 4.6 does not only throw on what it cannot run: some nodes write outside their
/// buffers (CumSum over a non-last axis computes garbage and can end in glibc's "double free or
/// corruption"), which in this process would corrupt edgemm's heap or abort the program.
///
/// One child serves the probes of a ProbeProcess, one at a time: a job is copied into a shared
/// memory file (memfd) that the child maps, and the answer comes back through a pipe. A child
/// that dies is replaced, and the probe it was running is tried again alone in the new child, so
/// a crash is blamed on a probe only when that probe crashes a fresh process too. A child that
/// stops answering is killed after kProbeTimeoutSeconds. (A child per probe would isolate each
/// probe as well, but forking a loaded process costs 5-40 ms here: seconds per model.)

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/opencv/opencv_dnn.h"
#include "edgemm/tensor.h"

namespace edgemm::backends::opencv {

class JobMapping;

/// One probe: a serialized one-node ModelProto, the values fed to its runtime inputs, and what
/// edgemm's native kernels compute from them.
struct ProbeJob {
  std::string onnx;
  std::vector<NamedShape> inputs;    ///< runtime inputs (float32, static shapes)
  std::vector<NamedShape> outputs;   ///< non-empty outputs (float32, static shapes)
  std::vector<Tensor> input_values;  ///< one float32 tensor per `inputs` entry
  /// edgemm's native outputs for input_values, one per `outputs` entry; empty when the native
  /// kernels cannot run the node (then only OpenCV's output shapes are checked).
  std::vector<Tensor> expected;
};

/// The answer to one probe.
struct ProbeAnswer {
  std::string reason;  ///< "" when OpenCV runs the node and agrees with the native kernels
  /// False when the probe itself could not run (no fork, socket or shared file): the reason
  /// says nothing about the node and must not be cached.
  bool about_node = true;
};

/// Longest a child may spend on one probe before it is killed and the probe refused (seconds).
inline constexpr int kProbeTimeoutSeconds = 60;

/// Largest difference between OpenCV's and the native kernels' outputs a probe accepts, as
/// |opencv - native| <= kProbeTolerance * (1 + |native|); NaN must meet NaN, infinities their
/// own sign. Catches wrong semantics, not rounding.
inline constexpr double kProbeTolerance = 1e-3;

/// The probe child of one capability() call. Not thread-safe (one caller drives it); separate
/// ProbeProcess objects may run in parallel. The child runs OpenCV single-threaded, writes
/// nothing (stdout and stderr go to /dev/null, no core dumps) and leaves through _exit.
class ProbeProcess {
 public:
  /// No child yet: the first submit() forks it.
  ProbeProcess();
  ProbeProcess(const ProbeProcess&) = delete;
  ProbeProcess& operator=(const ProbeProcess&) = delete;
  /// Ends the child (EOF on its command pipe, then waits for it) and closes the shared file.
  ~ProbeProcess();

  /// Hands `job` to the child (starting it on first use) and returns without waiting, so the
  /// caller can prepare the next job meanwhile. Errors: kIo when the shared file or the child
  /// cannot be set up (then wait() returns that error's message).
  Status submit(const ProbeJob& job);

  /// Waits for the answer to the job last submitted: reason "" when OpenCV imported the model,
  /// ran forward on job.input_values, gave the declared output shapes (DnnNet::forward_blobs)
  /// and, when job.expected is set, the same values within kProbeTolerance; else why not, e.g.
  /// "OpenCV DNN 4.6 cannot import it: ...", "OpenCV DNN 4.6 crashed probing it (signal 6,
  /// Aborted)", "OpenCV DNN 4.6 did not finish probing it within 60 s".
  ProbeAnswer wait();

 private:
  /// How the child answered (or not) the job it was given.
  enum class End { kAnswered, kCrashed, kOther };
  /// Forks the child. Errors: kIo naming the failed call.
  Status start();
  /// Kills (when `kill_first`) and reaps the child; its wait status, or -1 when unknown.
  int stop(bool kill_first);
  /// Grows the shared file to at least `bytes` (doubling). Errors: kIo.
  Status reserve(size_t bytes);
  /// Sends the size of the job already in the shared file to the child. Errors: kIo.
  Status send();
  /// The child's answer; when it gives none (crash, timeout), why, and the child is gone.
  std::string receive(End* end);

  pid_t pid_ = -1;
  int memfd_ = -1;                       ///< the job, as serialized by submit()
  int socket_fd_ = -1;                   ///< job sizes to the child, answers from it
  size_t job_bytes_ = 0;                 ///< size of the job in the shared file
  size_t file_bytes_ = 0;                ///< size of the shared file
  std::unique_ptr<JobMapping> mapping_;  ///< the parent's view of the shared file
  std::string failed_;                   ///< why the last submit() failed (not about the node)
};

}  // namespace edgemm::backends::opencv
