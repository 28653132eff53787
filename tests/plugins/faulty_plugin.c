/* A deliberately misbehaving plugin for tests/unit/backend_plugin_test.cc, written in C99 (it is
 * also the C compile test of edgemm/plugin_abi.h: built with -std=c99 -pedantic-errors -Werror).
 *
 * It claims every node and fails in the way its device names:
 *   "capability-fails"  capability returns EDGEMM_PLUGIN_UNSUPPORTED with a message
 *   "no-reason"         capability refuses every node without a reason
 *   "compile-fails"     compile returns EDGEMM_PLUGIN_UNSUPPORTED with a message
 *   "null-partition"    compile returns EDGEMM_PLUGIN_OK and no partition
 *   "run-fails"         run returns EDGEMM_PLUGIN_INVALID_ARGUMENT with a message
 *   "null-output"       run returns EDGEMM_PLUGIN_OK with outputs of 4 float32 and no data
 *   "bad-dtype"         run returns EDGEMM_PLUGIN_OK with outputs of dtype 8 (string)
 * Built several times with compile definitions that break the table instead:
 *   FAULTY_ABI_VERSION=N  declares ABI version N
 *   FAULTY_NULL_API       the entry point returns NULL
 *   FAULTY_NULL_RUN       the table has no run function
 * faulty_plugin_outstanding() (exported for the test) counts outputs not yet released. Not
 * thread-safe: the tests call it from one thread. */

#include <stdlib.h>
#include <string.h>

#include "edgemm/plugin_abi.h"

#ifndef FAULTY_ABI_VERSION
#define FAULTY_ABI_VERSION EDGEMM_PLUGIN_ABI_VERSION
#endif

struct EdgemmPluginPartition {
  char mode[32];
};

static const char* const kDevices[] = {"capability-fails", "no-reason",   "compile-fails", "null-partition",
                                       "run-fails",        "null-output", "bad-dtype"};
static const char* const kPrecisions[] = {"fp32"};
static const int64_t kDims[] = {4};
static char kElements[16];
static int outstanding = 0;

static void set_message(EdgemmPluginError* error, const char* text) {
  strncpy(error->message, text, EDGEMM_PLUGIN_MESSAGE_CAPACITY - 1);
}

static int32_t faulty_capability(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                                 EdgemmPluginVerdict* verdicts, size_t node_count, EdgemmPluginError* error) {
  size_t n;
  (void)model;
  (void)model_size;
  if (strcmp(options->device, "capability-fails") == 0) {
    set_message(error, "faulty capability fails on purpose");
    return EDGEMM_PLUGIN_UNSUPPORTED;
  }
  for (n = 0; n < node_count; ++n) verdicts[n].supported = strcmp(options->device, "no-reason") != 0;
  return EDGEMM_PLUGIN_OK;
}

static int32_t faulty_compile(const void* model, size_t model_size, const EdgemmPluginOptions* options,
                              EdgemmPluginPartition** partition, EdgemmPluginError* error) {
  (void)model;
  (void)model_size;
  *partition = NULL;
  if (strcmp(options->device, "compile-fails") == 0) {
    set_message(error, "faulty compile fails on purpose");
    return EDGEMM_PLUGIN_UNSUPPORTED;
  }
  if (strcmp(options->device, "null-partition") == 0) return EDGEMM_PLUGIN_OK;
  *partition = (EdgemmPluginPartition*)calloc(1, sizeof(EdgemmPluginPartition));
  if (*partition == NULL) return EDGEMM_PLUGIN_OUT_OF_MEMORY;
  strncpy((*partition)->mode, options->device, sizeof((*partition)->mode) - 1);
  return EDGEMM_PLUGIN_OK;
}

/* Not static: FAULTY_NULL_RUN builds leave it unused (hidden, not exported). */
int32_t faulty_run(const EdgemmPluginPartition* partition, const EdgemmPluginTensor* inputs, size_t input_count,
                   EdgemmPluginTensor* outputs, size_t output_count, EdgemmPluginError* error) {
  size_t i;
  (void)inputs;
  (void)input_count;
  if (strcmp(partition->mode, "run-fails") == 0) {
    set_message(error, "faulty run fails on purpose");
    return EDGEMM_PLUGIN_INVALID_ARGUMENT;
  }
  for (i = 0; i < output_count; ++i) {
    outputs[i].dtype = strcmp(partition->mode, "bad-dtype") == 0 ? 8 : 1;
    outputs[i].rank = 1;
    outputs[i].dims = kDims;
    outputs[i].data = strcmp(partition->mode, "null-output") == 0 ? NULL : kElements;
    ++outstanding;
  }
  return EDGEMM_PLUGIN_OK;
}

static void faulty_release_output(const EdgemmPluginTensor* output) {
  (void)output;
  --outstanding;
}

static void faulty_release_partition(EdgemmPluginPartition* partition) { free(partition); }

#ifdef FAULTY_NULL_RUN
#define FAULTY_RUN NULL
#else
#define FAULTY_RUN faulty_run
#endif

/* Not static: FAULTY_NULL_API builds leave it unused (hidden by -fvisibility=hidden, not exported). */
const EdgemmPluginApi faulty_api = {FAULTY_ABI_VERSION,
                                    sizeof(EdgemmPluginApi),
                                    "faulty",
                                    sizeof kDevices / sizeof kDevices[0],
                                    kDevices,
                                    1,
                                    kPrecisions,
                                    faulty_capability,
                                    faulty_compile,
                                    FAULTY_RUN,
                                    faulty_release_output,
                                    faulty_release_partition};

EDGEMM_PLUGIN_EXPORT const EdgemmPluginApi* edgemm_plugin_get_api(uint32_t host_abi_version) {
  (void)host_abi_version;
#ifdef FAULTY_NULL_API
  return NULL;
#else
  return &faulty_api;
#endif
}

EDGEMM_PLUGIN_EXPORT int faulty_plugin_outstanding(void);
int faulty_plugin_outstanding(void) { return outstanding; }
