#pragma once
/// \file opencv_backend.h
/// The "opencv" backend: OpenCV DNN 4.6 (Debian's libopencv-dnn406, cv::dnn) runs the partitions
/// of a graph that it can run; edgemm's native kernels run the rest (docs/backends.md).
///
/// Linking: this folder is not part of edgemm_core (the core does not depend on OpenCV). It is
/// the CMake OBJECT library `edgemm_backend_opencv`, whose static initializer registers the
/// backend under kOpenCvBackendName (backends::register_backend). A program has
/// RuntimeOptions::backend "opencv" exactly when it links that object library (the `edgemm`
/// CLI, edgemm_bench users and the unit tests do); an object library, unlike a static one, is
/// never dropped by the linker for having no referenced symbol.
///
/// Configuration (BackendConstraints): device "cpu" (DNN_BACKEND_OPENCV, DNN_TARGET_CPU),
/// precision "fp32". Threads: cv::setNumThreads(RuntimeOptions::threads; 0 = all hardware
/// threads), which is process-wide. OpenCV in Debian runs its parallel loops on TBB while
/// edgemm's kernels use OpenMP: the two pools take turns (a partition runs while the native
/// nodes wait, and the other way round), but each keeps its own threads, so with n threads a
/// mixed graph keeps up to 2n threads alive, and the idle pool's threads may spin for a while
/// before they sleep (libgomp: OMP_WAIT_POLICY=passive makes its threads sleep at once).
///
/// Capability: OpenCV itself is asked about every node (opencv_probe.h). Compile: the partition
/// is exported to ONNX (ir::export_onnx_bytes), read with cv::dnn::readNetFromONNX and run once on
/// zeros, so that OpenCV's shape errors surface at load. A partition that fails there goes back
/// to native with the reason in the placement (partition.h).

#include <memory>

#include "backends/backend.h"

namespace edgemm::backends::opencv {

/// The name the backend registers under.
inline constexpr const char* kOpenCvBackendName = "opencv";

/// Makes the backend (any config: make_backend checks device and precision against its
/// constraints, and the thread count comes with BackendOptions at compile). Never fails.
Expected<std::unique_ptr<Backend>> make_opencv_backend(const RuntimeOptions& config);

}  // namespace edgemm::backends::opencv
