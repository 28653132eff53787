// Test helper for the export parity test (export_parity_test.sh): imports an ONNX model and
// writes it back with ir::export_onnx_file, so that ONNX Runtime can run both.
// Usage: edgemm_export_model IN.onnx OUT.onnx [EXTERNAL_DATA_THRESHOLD_BYTES]
// Exit status: 0 on success, 2 for bad arguments, else edgemm::exit_code of the failure.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s IN.onnx OUT.onnx [EXTERNAL_DATA_THRESHOLD_BYTES]\n", argv[0]);
    return 2;
  }
  edgemm::ir::ExportOptions options;
  if (argc == 4) {
    char* end = nullptr;
    options.external_data_threshold = std::strtoll(argv[3], &end, 10);
    if (end == argv[3] || *end != '\0') {
      std::fprintf(stderr, "threshold '%s' is not a number of bytes\n", argv[3]);
      return 2;
    }
  }
  auto model = edgemm::ir::import_onnx_file(argv[1]);
  if (!model.has_value()) {
    std::fprintf(stderr, "%s\n", model.status().to_string().c_str());
    return edgemm::exit_code(model.status());
  }
  const edgemm::Status written = edgemm::ir::export_onnx_file(*model, argv[2], options);
  if (!written.is_ok()) {
    std::fprintf(stderr, "%s\n", written.to_string().c_str());
    return edgemm::exit_code(written);
  }
  return 0;
}
