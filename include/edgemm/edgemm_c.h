#ifndef EDGEMM_EDGEMM_C_H_
#define EDGEMM_EDGEMM_C_H_
/**
 * \file edgemm_c.h
 * edgemm's C API (library edgemm_c): load an ONNX model and run it on caller-owned buffers, and
 * read the text of images with the PP-OCRv4 pipeline, from C or any language with a C FFI. It
 * wraps the C++ API (edgemm/inferencer.h, edgemm/pipelines/ocr.h) with opaque handles, in the
 * manner of ONNX Runtime's C API: no C++ type and no exception crosses it.
 *
 * Errors: a function that can fail returns an edgemm_status*, NULL on success; otherwise an
 * object the caller owns and frees with edgemm_status_free(), carrying a code and a message that
 * names the node, op, input or value at fault (the C++ Status's). Null handles or pointers where
 * an object is required give EDGEMM_INVALID_ARGUMENT.
 *
 * Ownership: every object made by a *_create function (or returned through an out-pointer) is
 * the caller's and freed by its *_destroy / *_free function, which accept NULL. Strings returned
 * by accessors live as long as the object they came from.
 *
 * Thread safety: edgemm_inferencer_run() and the edgemm_ocr_run_*() functions may be called from
 * several threads at once on one handle (each call uses its own buffers); accessors may be called
 * concurrently with them. Destroying a handle while another thread uses it is undefined. A run
 * sets the calling thread's OpenMP thread count to the handle's threads and restores it after.
 *
 * ABI: edgemm_abi_version() returns EDGEMM_C_ABI_VERSION of the library actually loaded;
 * programs compare it with the header's. Structs passed in carry no hidden fields; a change to
 * any of them bumps the version.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this header's ABI; bumped on every incompatible change. */
#define EDGEMM_C_ABI_VERSION 1

/** Largest tensor rank edgemm_output can report. */
#define EDGEMM_MAX_RANK 8

/** EDGEMM_C_ABI_VERSION of the loaded library. */
uint32_t edgemm_abi_version(void);

/** Error categories, as edgemm::StatusCode (edgemm/status.h). */
typedef enum edgemm_status_code {
  EDGEMM_OK = 0,
  EDGEMM_INVALID_ARGUMENT = 1, /**< a bad value from the caller (input name, shape, dtype, option) */
  EDGEMM_INVALID_MODEL = 2,    /**< a malformed or inconsistent model file */
  EDGEMM_UNSUPPORTED = 3,      /**< valid ONNX that edgemm does not implement */
  EDGEMM_OUT_OF_MEMORY = 4,    /**< an allocation failed or a size exceeds the limit */
  EDGEMM_IO = 5,               /**< a file could not be read or written */
  EDGEMM_INTERNAL = 6          /**< a bug in edgemm */
} edgemm_status_code;

/** An error (opaque). NULL means success. */
typedef struct edgemm_status edgemm_status;

/** The code of `status` (EDGEMM_OK for NULL). */
edgemm_status_code edgemm_status_get_code(const edgemm_status* status);
/** The message of `status`, UTF-8 ("" for NULL); valid until edgemm_status_free(). */
const char* edgemm_status_get_message(const edgemm_status* status);
/** Frees `status` (NULL is fine). */
void edgemm_status_free(edgemm_status* status);

/** Element types, numbered as ONNX's TensorProto.DataType (and edgemm::DataType). */
typedef enum edgemm_dtype {
  EDGEMM_DTYPE_UNDEFINED = 0,
  EDGEMM_DTYPE_FLOAT32 = 1,
  EDGEMM_DTYPE_UINT8 = 2,
  EDGEMM_DTYPE_INT8 = 3,
  EDGEMM_DTYPE_UINT16 = 4,
  EDGEMM_DTYPE_INT16 = 5,
  EDGEMM_DTYPE_INT32 = 6,
  EDGEMM_DTYPE_INT64 = 7,
  EDGEMM_DTYPE_BOOL = 9, /**< one byte per element, 0 or 1 */
  EDGEMM_DTYPE_FLOAT16 = 10,
  EDGEMM_DTYPE_FLOAT64 = 11,
  EDGEMM_DTYPE_UINT32 = 12,
  EDGEMM_DTYPE_UINT64 = 13,
  EDGEMM_DTYPE_BFLOAT16 = 16
} edgemm_dtype;

/**
 * How models run: edgemm::RuntimeOptions (edgemm/runtime_options.h), which documents each field.
 * Fill it with edgemm_runtime_options_init() first. Strings are read during the create call only.
 */
typedef struct edgemm_runtime_options {
  int32_t threads;         /**< intra-op threads per model; 0 = all hardware threads */
  int32_t optimize;        /**< nonzero: run the graph passes at load */
  /** "native" or "plugin" (NULL = "native"); "opencv" only in programs that link the build
     tree's object library edgemm_backend_opencv (the edgemm CLI), not in an installed SDK */
  const char* backend;
  const char* plugin_path; /**< shared library for backend "plugin"; NULL = none */
  const char* device;      /**< NULL = "cpu" */
  const char* precision;   /**< "fp32", "bf16", "fp16"; NULL = "fp32" */
} edgemm_runtime_options;

/** Sets `options` to the defaults: all threads, passes on, native, cpu, fp32. */
void edgemm_runtime_options_init(edgemm_runtime_options* options);

/* ---- Inferencer: one ONNX model ---------------------------------------------------------- */

/** A loaded, compiled model (opaque; edgemm::Inferencer). */
typedef struct edgemm_inferencer edgemm_inferencer;

/**
 * Loads, checks, optimizes and compiles the model at `model_path` (external data is read
 * relative to its folder). `options` may be NULL (defaults). On success *out is the new handle;
 * on failure it is NULL and the status says why (EDGEMM_IO, EDGEMM_INVALID_MODEL,
 * EDGEMM_UNSUPPORTED naming the node and op, EDGEMM_INVALID_ARGUMENT for a bad option).
 */
edgemm_status* edgemm_inferencer_create(const char* model_path, const edgemm_runtime_options* options,
                                        edgemm_inferencer** out);
/** Frees the model (NULL is fine). */
void edgemm_inferencer_destroy(edgemm_inferencer* inferencer);

/** Number of graph inputs / outputs. */
size_t edgemm_inferencer_input_count(const edgemm_inferencer* inferencer);
size_t edgemm_inferencer_output_count(const edgemm_inferencer* inferencer);
/** Name of input / output `index` (NULL when out of range). */
const char* edgemm_inferencer_input_name(const edgemm_inferencer* inferencer, size_t index);
const char* edgemm_inferencer_output_name(const edgemm_inferencer* inferencer, size_t index);

/** An input tensor: caller memory, read during the run only; dense row-major. */
typedef struct edgemm_input {
  const char* name;     /**< a graph input's name */
  edgemm_dtype dtype;   /**< must be the input's declared dtype */
  const int64_t* shape; /**< `rank` extents, compatible with the declared shape */
  size_t rank;
  const void* data; /**< element count × element size bytes */
} edgemm_input;

/**
 * An output to fetch into caller memory. The caller sets `name`, `data` and `capacity_bytes`;
 * the run sets `dtype`, `rank`, `shape` and `size_bytes` of every requested output, also when a
 * buffer is too small: then the run fails with EDGEMM_INVALID_ARGUMENT naming the first output
 * and the size it needs, and no buffer is written, so a caller can size its buffers and run
 * again.
 */
typedef struct edgemm_output {
  const char* name;               /**< in: a graph output's name */
  void* data;                     /**< in: where the values go (may be NULL when capacity_bytes is 0) */
  size_t capacity_bytes;          /**< in: bytes available at `data` */
  edgemm_dtype dtype;             /**< out */
  size_t rank;                    /**< out: at most EDGEMM_MAX_RANK */
  int64_t shape[EDGEMM_MAX_RANK]; /**< out: the first `rank` entries */
  size_t size_bytes;              /**< out: bytes the output has */
} edgemm_output;

/**
 * Runs the model on `inputs` (every required graph input, each once) and copies the outputs
 * named in `outputs` into their buffers, all of them or, on any error, none. Errors:
 * EDGEMM_INVALID_ARGUMENT naming the input and the value at fault (unknown or missing name,
 * unknown or wrong dtype, rank or extent, a NULL data pointer), an unknown output name, or a
 * buffer too small; EDGEMM_OUT_OF_MEMORY for a shape whose size overflows or exceeds 16 GiB;
 * errors of the kernels (naming node and op).
 */
edgemm_status* edgemm_inferencer_run(const edgemm_inferencer* inferencer, const edgemm_input* inputs,
                                     size_t input_count, edgemm_output* outputs, size_t output_count);

/* ---- OCR: the PP-OCRv4 pipeline (edgemm/pipelines/ocr.h) --------------------------------- */

/** A loaded OCR pipeline (opaque; edgemm::ocr::OcrPipeline with PaddleOCR's defaults). */
typedef struct edgemm_ocr edgemm_ocr;
/** The lines read from one image (opaque; edgemm::ocr::OcrResult). */
typedef struct edgemm_ocr_result edgemm_ocr_result;

/**
 * Loads det, cls and rec and the dictionary from `models_dir` (the folder
 * edgemm-fetch-ppocr-models fills). `options` may be NULL. Errors: EDGEMM_IO naming every
 * missing file, EDGEMM_INVALID_MODEL, EDGEMM_INVALID_ARGUMENT.
 */
edgemm_status* edgemm_ocr_create(const char* models_dir, const edgemm_runtime_options* options, edgemm_ocr** out);
/** Frees the pipeline (NULL is fine). */
void edgemm_ocr_destroy(edgemm_ocr* ocr);

/**
 * Reads the text of an image file (PNG, JPEG, BMP, TIFF, WebP). Errors: EDGEMM_IO for a missing
 * or unreadable file, EDGEMM_INVALID_ARGUMENT for an empty, corrupt or too large image.
 */
edgemm_status* edgemm_ocr_run_file(const edgemm_ocr* ocr, const char* image_path, edgemm_ocr_result** out);
/**
 * Reads the text of an 8-bit image in memory: `height` rows of `width` pixels, `channels` 1
 * (gray), 3 (BGR) or 4 (BGRA) interleaved, rows `row_bytes` apart (0 = width × channels).
 */
edgemm_status* edgemm_ocr_run_image(const edgemm_ocr* ocr, const uint8_t* pixels, int32_t width, int32_t height,
                                    int32_t channels, int64_t row_bytes, edgemm_ocr_result** out);
/** Frees a result (NULL is fine). */
void edgemm_ocr_result_free(edgemm_ocr_result* result);

/** Number of lines, in reading order. */
size_t edgemm_ocr_result_line_count(const edgemm_ocr_result* result);
/** Text of line `index`, UTF-8 (NULL when out of range). */
const char* edgemm_ocr_result_line_text(const edgemm_ocr_result* result, size_t index);
/** Mean CTC confidence of line `index`, in [0, 1] (0 when out of range). */
float edgemm_ocr_result_line_score(const edgemm_ocr_result* result, size_t index);
/**
 * The quadrilateral of line `index` in image pixels: x0, y0, ..., x3, y3 clockwise from the
 * text's top-left corner, into `xy` (8 floats). Returns 0, or -1 when out of range.
 */
int edgemm_ocr_result_line_polygon(const edgemm_ocr_result* result, size_t index, float xy[8]);

#ifdef __cplusplus
}
#endif

#endif /* EDGEMM_EDGEMM_C_H_ */
