/* Runs the PP-OCRv4 text detector through edgemm's C API on a mid-grey 64 x 96 input and prints
 * the probability map's shape. Usage: det_example DET_MODEL.onnx   Exit code 1 on any error.
 * Build: cc det_example.c -o det_example $(pkg-config --cflags --libs [--static] edgemm-c) */
#include <stdio.h>
#include <stdlib.h>

#include "edgemm/edgemm_c.h"

static int fail(edgemm_status* status) {
  fprintf(stderr, "error: %s\n", edgemm_status_get_message(status));
  edgemm_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DET_MODEL.onnx\n", argv[0]);
    return 1;
  }
  if (edgemm_abi_version() != EDGEMM_C_ABI_VERSION) return 1;
  edgemm_runtime_options options;
  edgemm_runtime_options_init(&options);
  options.threads = 1;
  edgemm_inferencer* det = NULL;
  edgemm_status* status = edgemm_inferencer_create(argv[1], &options, &det);
  if (status) return fail(status);

  enum { kHeight = 64, kWidth = 96 };
  const int64_t shape[4] = {1, 3, kHeight, kWidth};
  static float pixels[3 * kHeight * kWidth];
  for (size_t i = 0; i < sizeof pixels / sizeof pixels[0]; ++i) pixels[i] = 0.5f;
  const edgemm_input input = {edgemm_inferencer_input_name(det, 0), EDGEMM_DTYPE_FLOAT32, shape, 4, pixels};
  static float map[kHeight * kWidth];
  edgemm_output output = {edgemm_inferencer_output_name(det, 0), map, sizeof map};
  status = edgemm_inferencer_run(det, &input, 1, &output, 1);
  if (status) {
    edgemm_inferencer_destroy(det);
    return fail(status);
  }
  printf("%s:", output.name);
  for (size_t axis = 0; axis < output.rank; ++axis) printf(" %lld", (long long)output.shape[axis]);
  printf("\n");
  edgemm_inferencer_destroy(det);
  return 0;
}
