#pragma once
/// \file probe_child.h
/// The probe helper's side of probe_protocol.h: the body of the `edgemm-opencv-probe` program
/// (src/backends/opencv/helper/probe_main.cc) that ProbeProcess (probe_process.h) starts.

namespace edgemm::backends::opencv {

/// Answers probe jobs until the parent closes the socket at kChildSocketFd, then leaves through
/// _exit(0) (no atexit handlers, no leak check). For each job: "" when OpenCV DNN 4.6 imported
/// the model, ran forward on the job's inputs, gave the declared output shapes and, when the job
/// has expected values, the same values within kProbeTolerance; else why not, e.g. "OpenCV DNN
/// 4.6 cannot import it: ...". Runs OpenCV single-threaded, writes nothing (stdout and stderr go
/// to /dev/null, glibc's heap-corruption reports too) and leaves no core dump.
[[noreturn]] void probe_child_main();

}  // namespace edgemm::backends::opencv
