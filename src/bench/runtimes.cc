#include "bench/runtimes.h"

namespace edgemm::bench {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string canonical_runtime_name(const std::string& name) {
  if (name == "ort") return "onnxruntime";
  if (name == "guten") return "guten-ocr";
  return name;
}

Expected<std::unique_ptr<BenchRuntime>> make_runtime(const std::string& name, const RuntimeSetup& setup) {
  const std::string canonical = canonical_runtime_name(name);
  if (canonical == "edgemm") return make_edgemm_runtime(setup);
  if (canonical == "onnxruntime") return make_ort_runtime(setup);
  if (canonical == "opencv") return make_opencv_runtime(setup);
  return make_error(StatusCode::kInvalidArgument,
                    "unknown runtime '" + name + "' (known: edgemm, onnxruntime (or ort), opencv)");
}

}  // namespace edgemm::bench
