#pragma once
/// \file probe_protocol.h
/// What the parent (probe_process.h) and the probe helper (probe_child.h) exchange. Over one
/// socket pair, the parent writes a job into a shared memory file (memfd) and sends its size
/// (uint64); the helper answers [uint32 length][reason]. The helper finds the socket at file
/// descriptor kChildSocketFd and the shared file at kChildMemFd.
///
/// Job layout in the shared file (native byte order, tensor data at 64-byte offsets):
///   u64 onnx size, onnx bytes; u64 input count, per input: name, shape, float32 data;
///   u64 output count, per output: name, shape; u64 has_expected, per output: float32 data.
/// Names are u64 length + bytes, shapes u64 rank + int64 extents.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "backends/opencv/opencv_dnn.h"
#include "edgemm/tensor.h"

namespace edgemm::backends::opencv {

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

/// Largest difference between OpenCV's and the native kernels' outputs a probe accepts, as
/// |opencv - native| <= kProbeTolerance * (1 + |native|); NaN must meet NaN, infinities their
/// own sign. Catches wrong semantics, not rounding.
inline constexpr double kProbeTolerance = 1e-3;

/// The helper's socket and shared-file descriptors.
inline constexpr int kChildSocketFd = 3;
inline constexpr int kChildMemFd = 4;

/// Bytes `job` takes in the shared file.
size_t job_size(const ProbeJob& job);

/// Writes `job` at `data` (job_size(job) bytes).
void encode(const ProbeJob& job, char* data);

/// Reads a job written by encode(); its tensors borrow `data`.
ProbeJob decode(const char* data);

/// Sends all `size` bytes (MSG_NOSIGNAL: a closed peer gives false, not SIGPIPE).
bool send_all(int fd, const void* data, size_t size);

/// Reads exactly `size` bytes unless the peer closes or `deadline` passes (then false).
bool read_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline);

/// A shared mapping of the job file that is only replaced when a job outgrows it, so that its
/// pages fault in once rather than once per probe.
class JobMapping {
 public:
  JobMapping() = default;
  JobMapping(const JobMapping&) = delete;
  JobMapping& operator=(const JobMapping&) = delete;
  ~JobMapping() { unmap(); }
  /// At least `size` bytes of `fd` mapped (read-only unless `writable`), or nullptr (errno set).
  char* at_least(int fd, size_t size, bool writable);

 private:
  void unmap();
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace edgemm::backends::opencv
