#pragma once
/// \file pipeline_bench.h
/// `edgemm bench --pipeline ocr --set DIR`: the OCR pipeline over a folder of images, one run
/// per image (cycling through the set in name order), with per-stage medians. Same
/// measurement plan as models (compare.h). Peer: Guten OCR (@gutenye/ocr-node, PP-OCRv4 det +
/// rec on onnxruntime-node, no angle classifier) in a node host (tools/reference/guten_server.js).

#include <functional>
#include <string>
#include <vector>

#include "bench/compare.h"
#include "bench/report.h"
#include "bench/runtimes.h"
#include "edgemm/tools/bench.h"

namespace edgemm::bench {

/// Everything a pipeline benchmark needs.
struct PipelineBenchOptions {
  std::string pipeline = "ocr";  ///< the only pipeline so far
  std::string set_dir;           ///< images: .jpg .jpeg .png .bmp .webp .tif .tiff files directly in it
  std::string models_dir;        ///< PP-OCRv4 folder
  bool use_cls = true;
  EdgemmBackend edgemm_backend;  ///< the backend edgemm's three models run on (docs/backends.md)
  std::vector<int> threads = {1};
  std::vector<std::string> peers;  ///< "guten-ocr" or none
  std::string reference_dir;       ///< folder of guten_server.js
  double timeout_s = 600;          ///< longest wait for the peer's load or one block
  CompareOptions compare;          ///< runs count images: a run is one image
  std::function<void(int, int, const std::string&)> on_point;
};

/// Runs the benchmark, one point per thread count. Errors: no images (kIo); a pipeline that
/// cannot load or fails on an image is reported in its result.
Expected<std::vector<BenchPoint>> bench_pipeline(const PipelineBenchOptions& options);

}  // namespace edgemm::bench
