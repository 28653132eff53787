#ifndef EDGEMM_PLUGIN_ABI_H_
#define EDGEMM_PLUGIN_ABI_H_
/** \file plugin_abi.h
 * The C ABI between edgemm and a vendor plugin: a shared library that runs parts of an ONNX
 * graph on a vendor runtime (RKNN, AscendCL, Horizon DNN, QNN, ...). Pure C99, so a plugin can
 * be written in C or C++ and built with the vendor's own toolchain; edgemm loads it with dlopen
 * (InferencerConfig::backend "plugin", InferencerConfig::plugin_path) and adapts it to its
 * Backend interface (src/backends/backend.h). The split follows ONNX Runtime's execution
 * provider ABI (GetCapability, then Compile per partition, then Compute) and ggml's backend
 * registry (one exported entry point that returns a table of functions). docs/plugins.md is the
 * guide for plugin authors.
 *
 * Versioning: a plugin exports one function, EDGEMM_PLUGIN_ENTRY_POINT, that returns a table
 * (EdgemmPluginApi) whose first two fields are the ABI version the plugin was built against
 * and the table's size. edgemm refuses a plugin whose abi_version differs from its own
 * EDGEMM_PLUGIN_ABI_VERSION (the message names both versions and the file) or whose table is
 * smaller than the one that version defines. Any incompatible change to this file bumps
 * EDGEMM_PLUGIN_ABI_VERSION.
 *
 * Models cross the boundary as serialized ONNX ModelProto bytes (onnx.proto; standard ONNX
 * domains only, every tensor inline, value_info from shape inference), tensors as
 * EdgemmPluginTensor views, messages as NUL-terminated UTF-8 in host-owned buffers.
 *
 * Memory rule: whoever allocates frees. The host owns everything it passes in (model bytes,
 * options, input tensors, the verdict array, the error buffer); the plugin reads it only during
 * the call and keeps no pointer into it afterwards. The plugin owns the API table, its strings,
 * partitions (until release_partition) and output tensors (until release_output).
 *
 * Errors: every fallible function returns an EdgemmPluginStatus code; on anything but
 * EDGEMM_PLUGIN_OK it writes one sentence into the host's EdgemmPluginError (naming the node,
 * op or value at fault) and leaves no resource for the host to release. A function must not
 * let a C++ exception, longjmp or signal escape; it must not abort the process on bad input.
 *
 * Threading: see each function. In short, run may be called from many threads at once on the
 * same partition; everything else may be called concurrently for different models and
 * partitions (two Inferencers created in parallel), so a plugin keeps no unsynchronized
 * mutable global state.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define EDGEMM_PLUGIN_ABI_VERSION 1u

/** Name of the one symbol a plugin exports (an EdgemmPluginGetApiFn). */
#define EDGEMM_PLUGIN_ENTRY_POINT "edgemm_plugin_get_api"

/** Marks the entry point as exported from a library built with -fvisibility=hidden. */
#if defined(_WIN32)
#define EDGEMM_PLUGIN_EXPORT __declspec(dllexport)
#else
#define EDGEMM_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/** Bytes of EdgemmPluginError::message, terminating NUL included. Longer text is truncated. */
#define EDGEMM_PLUGIN_MESSAGE_CAPACITY 1024
/** Bytes of EdgemmPluginVerdict::reason, terminating NUL included. Longer text is truncated. */
#define EDGEMM_PLUGIN_REASON_CAPACITY 256

/** Result codes of the plugin functions. They mirror edgemm's StatusCode, so the host reports
 * the plugin's failure under the matching category (and the CLI exits with its exit code);
 * any other value is reported as an internal error. */
typedef enum EdgemmPluginStatus {
  EDGEMM_PLUGIN_OK = 0,
  EDGEMM_PLUGIN_INVALID_ARGUMENT = 1, /**< bad options or inputs (device, dtype, shape) */
  EDGEMM_PLUGIN_INVALID_MODEL = 2,    /**< the model bytes do not parse or are inconsistent */
  EDGEMM_PLUGIN_UNSUPPORTED = 3,      /**< valid ONNX the vendor runtime cannot run */
  EDGEMM_PLUGIN_OUT_OF_MEMORY = 4,    /**< host or device memory ran out */
  EDGEMM_PLUGIN_IO = 5,               /**< a file or device could not be read or opened */
  EDGEMM_PLUGIN_INTERNAL = 6          /**< a bug or an unexpected vendor runtime failure */
} EdgemmPluginStatus;

/** Where a failing function writes its message. Owned by the host (usually on its stack),
 * message[0] is NUL on entry. The plugin writes at most EDGEMM_PLUGIN_MESSAGE_CAPACITY bytes,
 * NUL included, and only when it returns something other than EDGEMM_PLUGIN_OK. The host
 * reads it only after such a return (and NUL-terminates it itself, so a plugin that forgets
 * cannot make it read past the buffer); an empty message is reported as "no message". */
typedef struct EdgemmPluginError {
  char message[EDGEMM_PLUGIN_MESSAGE_CAPACITY];
} EdgemmPluginError;

/** The plugin's verdict on one node of the main graph, written by capability. Owned by the
 * host, zeroed on entry (unsupported, empty reason). */
typedef struct EdgemmPluginVerdict {
  int32_t supported; /**< non-zero: the plugin can run this node */
  /** Why not, for a refused node: one phrase naming the op, attribute, dtype or shape, e.g.
   * "Softmax is not in the NPU's op list". Shown in edgemm's placement report. Ignored for a
   * supported node. An empty reason for a refused node is reported as "no reason given". */
  char reason[EDGEMM_PLUGIN_REASON_CAPACITY];
} EdgemmPluginVerdict;

/** Settings of one Inferencer (InferencerConfig), passed to capability and compile. Owned by
 * the host; valid only during the call (copy what you keep). */
typedef struct EdgemmPluginOptions {
  const char* device;    /**< one of EdgemmPluginApi::devices, NUL-terminated */
  const char* precision; /**< one of EdgemmPluginApi::precisions, NUL-terminated */
  int32_t threads;       /**< host CPU threads the partition may use, >= 1 */
} EdgemmPluginOptions;

/** A dense row-major (C order) tensor view: inputs from the host, outputs from the plugin. */
typedef struct EdgemmPluginTensor {
  /** Graph input or output name of the partition, NUL-terminated. Set by the host for inputs
   * and outputs alike (the plugin does not write it). */
  const char* name;
  int32_t dtype;       /**< ONNX TensorProto.DataType number: 1 float32, 7 int64, 10 float16, ... */
  int32_t rank;        /**< number of axes, >= 0 (0: a scalar of one element) */
  const int64_t* dims; /**< `rank` extents, each >= 0; may be NULL only when rank is 0 */
  /** The elements, contiguous, product(dims) × element size bytes, suitably aligned for the
   * dtype. May be NULL only when the tensor has no elements. Inputs: read-only for the plugin. */
  const void* data;
  /** Outputs only: the plugin's token for this tensor, handed back to release_output. Opaque to
   * the host (may be NULL if release_output does not need it). Inputs: NULL. */
  void* owner;
} EdgemmPluginTensor;

/** A compiled partition. Defined by each plugin; opaque to the host. */
typedef struct EdgemmPluginPartition EdgemmPluginPartition;

/** The plugin's function table. Static storage in the plugin: valid from the entry point's
 * return until the library is unloaded; never written by the host. Every field is required
 * (non-NULL) unless it says otherwise; edgemm refuses a table with a NULL one, naming it. */
typedef struct EdgemmPluginApi {
  /** EDGEMM_PLUGIN_ABI_VERSION of the header the plugin was built with. Must come first. */
  uint32_t abi_version;
  /** sizeof(EdgemmPluginApi) as the plugin was compiled: at least what the host's version
   * defines. Must come second. */
  uint32_t struct_size;
  /** Backend name shown in placement reports and Inferencer::backend(), NUL-terminated, e.g.
   * "rknn". Not empty and not "native" (reserved for edgemm's own kernels). */
  const char* name;
  /** Devices the plugin accepts in EdgemmPluginOptions::device (device_count names, each
   * NUL-terminated), e.g. {"npu"}. At least one. edgemm refuses other devices before any call. */
  size_t device_count;
  const char* const* devices;
  /** Precisions accepted in EdgemmPluginOptions::precision, e.g. {"fp16", "int8"}. At least one.
   * edgemm's names: "fp32", "fp16", "int8" (a plugin may declare others). */
  size_t precision_count;
  const char* const* precisions;

  /** Decides which nodes the plugin can run. `model` holds `model_size` bytes of a serialized
   * ONNX ModelProto (the whole graph after edgemm's standard-op passes; host-owned, valid during
   * the call). Writes one verdict per node of the main graph, in the order of
   * GraphProto.node, into `verdicts[0 .. node_count)`; node_count is the number of nodes in
   * the model (a plugin that counts differently returns EDGEMM_PLUGIN_INVALID_MODEL).
   * Consecutive supported nodes become one partition (passed to compile); nodes with
   * subgraphs (If, Loop, Scan) always stay on edgemm. A failure refuses every node, with the
   * message as the reason; edgemm then runs the whole model itself.
   * Thread safety: may run concurrently with any function for other models. */
  int32_t (*capability)(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                        EdgemmPluginVerdict* verdicts, size_t node_count, EdgemmPluginError* error);

  /** Compiles one partition: `model` holds `model_size` bytes of a standalone ModelProto of
   * nodes that capability accepted (graph inputs with their dtypes and the shapes known at
   * load, the initializers the nodes read, graph outputs in the order run must produce them).
   * On success stores a non-NULL handle in `*partition`, owned by the plugin until
   * release_partition. On failure stores NULL; edgemm's create() then fails with the message
   * (it does not fall back, since capability promised the nodes).
   * Thread safety: may run concurrently with any function for other partitions. */
  int32_t (*compile)(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                     EdgemmPluginPartition** partition, EdgemmPluginError* error);

  /** Runs a compiled partition. `inputs[0 .. input_count)` are the partition's graph inputs in
   * graph order (host-owned, valid during the call). `outputs[0 .. output_count)` are the
   * partition's graph outputs in graph order: the host sets each `name` and zeroes the rest;
   * on success the plugin fills dtype, rank, dims, data and owner of every one with memory it
   * owns. The host reads them and then calls release_output once per output, possibly later and
   * from another thread. On failure the plugin frees whatever it allocated for the outputs
   * before returning, and the host calls no release_output.
   * Thread safety: may be called from several threads at once with the same partition (each
   * call with its own inputs and outputs); never after release_partition(partition). */
  int32_t (*run)(const EdgemmPluginPartition* partition, const EdgemmPluginTensor* inputs, size_t input_count,
                 EdgemmPluginTensor* outputs, size_t output_count, EdgemmPluginError* error);

  /** Frees one output of a successful run (its dims and data), given a copy of the tensor the
   * plugin filled: dtype, rank, dims, data and owner as the plugin set them, name NULL (the
   * host's string may be gone). Called exactly once per output. Cannot fail. Thread safety: any
   * thread, any time before the library is unloaded, also after release_partition of the
   * partition that made it. */
  void (*release_output)(const EdgemmPluginTensor* output);

  /** Frees a compiled partition. Called exactly once per successful compile, after every run
   * on it has returned. Cannot fail. Thread safety: as compile. */
  void (*release_partition)(EdgemmPluginPartition* partition);
} EdgemmPluginApi;

/** The entry point's type. `host_abi_version` is the host's EDGEMM_PLUGIN_ABI_VERSION. Returns
 * the plugin's table (edgemm checks its abi_version and struct_size), or NULL when the plugin
 * cannot serve that host version at all (edgemm reports that, naming the file and its version). Must be cheap and
 * side-effect free: edgemm calls it every time it loads the library. Thread-safe. */
typedef const EdgemmPluginApi* (*EdgemmPluginGetApiFn)(uint32_t host_abi_version);

/** The entry point every plugin defines, exported with C linkage and default visibility. */
EDGEMM_PLUGIN_EXPORT const EdgemmPluginApi* edgemm_plugin_get_api(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* EDGEMM_PLUGIN_ABI_H_ */
