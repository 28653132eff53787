/// \file probe_protocol.cc
/// The probe job's layout and the socket I/O (see probe_protocol.h).

#include "backends/opencv/probe_protocol.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace edgemm::backends::opencv {
namespace {

/// Counts (data == nullptr) or writes the bytes of a job.
struct Writer {
  char* data = nullptr;
  size_t pos = 0;
  void bytes(const void* p, size_t n) {
    if (data != nullptr && n > 0) std::memcpy(data + pos, p, n);
    pos += n;
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void text(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void shape(const Shape& s) {
    u64(s.size());
    bytes(s.data(), s.size() * sizeof(int64_t));
  }
  void tensor(const Tensor& t) {
    pos = (pos + 63) / 64 * 64;
    bytes(t.raw_data(), t.byte_size());
  }
};

void write_job(const ProbeJob& job, Writer& w) {
  w.text(job.onnx);
  w.u64(job.inputs.size());
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    w.text(job.inputs[i].name);
    w.shape(job.inputs[i].shape);
    w.tensor(job.input_values[i]);
  }
  w.u64(job.outputs.size());
  for (const NamedShape& out : job.outputs) {
    w.text(out.name);
    w.shape(out.shape);
  }
  w.u64(job.expected.empty() ? 0 : 1);
  for (const Tensor& t : job.expected) w.tensor(t);
}

/// Reads a job from a mapping of the shared file; tensors borrow the mapping.
struct Reader {
  const char* data;
  size_t pos = 0;
  uint64_t u64() {
    uint64_t v;
    std::memcpy(&v, data + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string text() {
    const size_t n = u64();
    std::string s(data + pos, n);
    pos += n;
    return s;
  }
  Shape shape() {
    Shape s(u64());
    std::memcpy(s.data(), data + pos, s.size() * sizeof(int64_t));
    pos += s.size() * sizeof(int64_t);
    return s;
  }
  Tensor tensor(const Shape& shape) {
    pos = (pos + 63) / 64 * 64;
    Tensor t = Tensor::borrow(DataType::kFloat32, shape, const_cast<char*>(data + pos));
    pos += t.byte_size();
    return t;
  }
};

}  // namespace

size_t job_size(const ProbeJob& job) {
  Writer counter;
  write_job(job, counter);
  return counter.pos;
}

void encode(const ProbeJob& job, char* data) {
  Writer writer{data};
  write_job(job, writer);
}

ProbeJob decode(const char* data) {
  Reader r{data};
  ProbeJob job;
  job.onnx = r.text();
  for (uint64_t n = r.u64(), i = 0; i < n; ++i) {
    NamedShape in{r.text(), r.shape()};
    job.input_values.push_back(r.tensor(in.shape));
    job.inputs.push_back(std::move(in));
  }
  for (uint64_t n = r.u64(), i = 0; i < n; ++i) job.outputs.push_back({r.text(), r.shape()});
  if (r.u64() != 0) {
    for (const NamedShape& out : job.outputs) job.expected.push_back(r.tensor(out.shape));
  }
  return job;
}

bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

char* JobMapping::at_least(int fd, size_t size, bool writable) {
  if (size <= bytes_) return data_;
  unmap();
  void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  data_ = static_cast<char*>(p);
  bytes_ = size;
  return data_;
}

void JobMapping::unmap() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace edgemm::backends::opencv
