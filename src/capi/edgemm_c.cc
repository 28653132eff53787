// The C API (include/edgemm/edgemm_c.h) over the C++ one: handles own the C++ objects, every
// entry point turns a Status (or an exception) into an edgemm_status.
#include "edgemm/edgemm_c.h"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "edgemm/inferencer.h"
#include "edgemm/pipelines/ocr.h"

struct edgemm_status {
  edgemm_status_code code;
  std::string message;
};

struct edgemm_inferencer {
  std::unique_ptr<edgemm::Inferencer> model;
};

struct edgemm_ocr {
  std::unique_ptr<edgemm::ocr::OcrPipeline> pipeline;
};

struct edgemm_ocr_result {
  edgemm::ocr::OcrResult result;
};

namespace {

static_assert(static_cast<int>(edgemm::StatusCode::kInternal) == EDGEMM_INTERNAL);
static_assert(static_cast<int>(edgemm::DataType::kBFloat16) == EDGEMM_DTYPE_BFLOAT16);
static_assert(sizeof(edgemm_dtype) == sizeof(int32_t));

/// Returned when even an error cannot be allocated; edgemm_status_free() leaves it alone.
edgemm_status out_of_memory{EDGEMM_OUT_OF_MEMORY, "out of memory"};

edgemm_status* make_status(edgemm_status_code code, std::string message) {
  try {
    return new edgemm_status{code, std::move(message)};
  } catch (const std::bad_alloc&) {
    return &out_of_memory;
  }
}

edgemm_status* to_c(const edgemm::Status& status) {
  if (status.is_ok()) return nullptr;
  return make_status(static_cast<edgemm_status_code>(status.code()), status.message());
}

edgemm_status* null_argument(const char* what) {
  try {
    return make_status(EDGEMM_INVALID_ARGUMENT, std::string(what) + " is NULL");
  } catch (const std::bad_alloc&) {
    return &out_of_memory;
  }
}

/// Runs `body` (returning edgemm_status*) with exceptions turned into EDGEMM_INTERNAL.
template <typename Body>
edgemm_status* guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return &out_of_memory;
  } catch (const std::exception& e) {
    return make_status(EDGEMM_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return make_status(EDGEMM_INTERNAL, "unexpected exception");
  }
}

edgemm::RuntimeOptions to_runtime_options(const edgemm_runtime_options* c) {
  edgemm::RuntimeOptions options;
  if (c == nullptr) return options;
  options.threads = c->threads;
  options.optimize = c->optimize != 0;
  if (c->backend) options.backend = c->backend;
  if (c->plugin_path) options.plugin_path = c->plugin_path;
  if (c->device) options.device = c->device;
  if (c->precision) options.precision = c->precision;
  return options;
}

/// Borrowed tensors over the callers' buffers. Errors: kInvalidArgument naming the input (no
/// name, unknown dtype, NULL shape or data, a negative or overflowing shape).
edgemm::Expected<std::vector<std::pair<std::string, edgemm::Tensor>>> to_tensors(const edgemm_input* inputs,
                                                                                 size_t input_count) {
  std::vector<std::pair<std::string, edgemm::Tensor>> tensors;
  for (size_t i = 0; i < input_count; ++i) {
    const edgemm_input& in = inputs[i];
    const std::string what = "input " + std::to_string(i) + (in.name ? " '" + std::string(in.name) + "'" : "");
    if (in.name == nullptr) return edgemm::make_error(edgemm::StatusCode::kInvalidArgument, what + " has no name");
    if (in.rank > 0 && in.shape == nullptr) {
      return edgemm::make_error(edgemm::StatusCode::kInvalidArgument,
                                what + " has rank " + std::to_string(in.rank) + " but its shape is NULL");
    }
    // Read as an integer: a C caller may store any value in the enum, which C++ must not load.
    int32_t code = 0;
    std::memcpy(&code, &in.dtype, sizeof code);
    const auto dtype = static_cast<edgemm::DataType>(code);
    if (!edgemm::dtype_supported(dtype)) {
      return edgemm::make_error(edgemm::StatusCode::kInvalidArgument,
                                what + " has an unknown dtype " + std::to_string(code));
    }
    edgemm::Shape shape(in.shape, in.shape + in.rank);
    if (auto count = edgemm::shape_element_count(shape); !count) {
      return edgemm::make_error(count.status().code(), what + ": " + count.status().message());
    }
    if (in.data == nullptr) return edgemm::make_error(edgemm::StatusCode::kInvalidArgument, what + " has NULL data");
    tensors.emplace_back(in.name, edgemm::Tensor::borrow(dtype, std::move(shape), const_cast<void*>(in.data)));
  }
  return tensors;
}

/// Sets `out`'s dtype, rank, shape and size_bytes from `tensor`. Errors: kUnsupported above
/// EDGEMM_MAX_RANK; kInvalidArgument when its buffer is too small (naming the size needed).
edgemm::Status describe_output(const edgemm::Tensor& tensor, edgemm_output& out) {
  const std::string what = "output '" + std::string(out.name) + "'";
  if (tensor.rank() > EDGEMM_MAX_RANK) {
    return edgemm::make_error(edgemm::StatusCode::kUnsupported, what + " has rank " + std::to_string(tensor.rank()) +
                                                                    ", above EDGEMM_MAX_RANK (" +
                                                                    std::to_string(EDGEMM_MAX_RANK) + ")");
  }
  out.dtype = static_cast<edgemm_dtype>(tensor.dtype());
  out.rank = static_cast<size_t>(tensor.rank());
  for (size_t a = 0; a < out.rank; ++a) out.shape[a] = tensor.shape()[a];
  out.size_bytes = tensor.byte_size();
  if (out.size_bytes > out.capacity_bytes) {
    return edgemm::make_error(edgemm::StatusCode::kInvalidArgument,
                              what + " " + edgemm::shape_to_string(tensor.shape()) + " needs " +
                                  std::to_string(out.size_bytes) + " bytes; its buffer holds " +
                                  std::to_string(out.capacity_bytes));
  }
  return edgemm::Status::ok();
}

/// Describes every output, then copies them all when every buffer is large enough; otherwise
/// copies none and returns the first error.
edgemm::Status copy_outputs(const std::vector<edgemm::Tensor>& tensors, edgemm_output* outputs, size_t count) {
  edgemm::Status first;
  for (size_t i = 0; i < count; ++i) {
    edgemm::Status status = describe_output(tensors[i], outputs[i]);
    if (first.is_ok()) first = std::move(status);
  }
  if (!first.is_ok()) return first;
  for (size_t i = 0; i < count; ++i) {
    if (outputs[i].size_bytes > 0) std::memcpy(outputs[i].data, tensors[i].raw_data(), outputs[i].size_bytes);
  }
  return edgemm::Status::ok();
}

const char* name_at(const std::vector<edgemm::ValueInfo>& values, size_t index) {
  return index < values.size() ? values[index].name.c_str() : nullptr;
}

const edgemm::ocr::OcrLine* line_at(const edgemm_ocr_result* result, size_t index) {
  if (result == nullptr || index >= result->result.lines.size()) return nullptr;
  return &result->result.lines[index];
}

edgemm_status* finish_ocr(edgemm::Expected<edgemm::ocr::OcrResult> result, edgemm_ocr_result** out) {
  if (!result) return to_c(result.status());
  *out = new edgemm_ocr_result{std::move(*result)};
  return nullptr;
}

}  // namespace

extern "C" {

uint32_t edgemm_abi_version(void) { return EDGEMM_C_ABI_VERSION; }

edgemm_status_code edgemm_status_get_code(const edgemm_status* status) { return status ? status->code : EDGEMM_OK; }

const char* edgemm_status_get_message(const edgemm_status* status) { return status ? status->message.c_str() : ""; }

void edgemm_status_free(edgemm_status* status) {
  if (status != &out_of_memory) delete status;
}

void edgemm_runtime_options_init(edgemm_runtime_options* options) {
  if (options == nullptr) return;
  const edgemm::RuntimeOptions defaults;
  *options = edgemm_runtime_options{defaults.threads, defaults.optimize ? 1 : 0, nullptr, nullptr, nullptr, nullptr};
}

edgemm_status* edgemm_inferencer_create(const char* model_path, const edgemm_runtime_options* options,
                                        edgemm_inferencer** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (model_path == nullptr) return null_argument("model_path");
  return guarded([&]() -> edgemm_status* {
    edgemm::InferencerConfig config;
    static_cast<edgemm::RuntimeOptions&>(config) = to_runtime_options(options);
    config.model_path = model_path;
    auto model = edgemm::Inferencer::create(config);
    if (!model) return to_c(model.status());
    *out = new edgemm_inferencer{std::move(*model)};
    return nullptr;
  });
}

void edgemm_inferencer_destroy(edgemm_inferencer* inferencer) { delete inferencer; }

size_t edgemm_inferencer_input_count(const edgemm_inferencer* inferencer) {
  return inferencer ? inferencer->model->inputs().size() : 0;
}

size_t edgemm_inferencer_output_count(const edgemm_inferencer* inferencer) {
  return inferencer ? inferencer->model->outputs().size() : 0;
}

const char* edgemm_inferencer_input_name(const edgemm_inferencer* inferencer, size_t index) {
  return inferencer ? name_at(inferencer->model->inputs(), index) : nullptr;
}

const char* edgemm_inferencer_output_name(const edgemm_inferencer* inferencer, size_t index) {
  return inferencer ? name_at(inferencer->model->outputs(), index) : nullptr;
}

edgemm_status* edgemm_inferencer_run(const edgemm_inferencer* inferencer, const edgemm_input* inputs,
                                     size_t input_count, edgemm_output* outputs, size_t output_count) {
  if (inferencer == nullptr) return null_argument("inferencer");
  if (inputs == nullptr && input_count > 0) return null_argument("inputs");
  if (outputs == nullptr && output_count > 0) return null_argument("outputs");
  return guarded([&]() -> edgemm_status* {
    std::vector<std::string> names;
    for (size_t i = 0; i < output_count; ++i) {
      if (outputs[i].name == nullptr)
        return make_status(EDGEMM_INVALID_ARGUMENT, "output " + std::to_string(i) + " has no name");
      if (outputs[i].data == nullptr && outputs[i].capacity_bytes > 0) {
        return make_status(EDGEMM_INVALID_ARGUMENT, "output '" + std::string(outputs[i].name) + "' has NULL data");
      }
      names.emplace_back(outputs[i].name);
    }
    if (names.empty()) return make_status(EDGEMM_INVALID_ARGUMENT, "no output requested");
    auto feeds = to_tensors(inputs, input_count);
    if (!feeds) return to_c(feeds.status());
    auto results = inferencer->model->run(*feeds, names);
    if (!results) return to_c(results.status());
    return to_c(copy_outputs(*results, outputs, output_count));
  });
}

edgemm_status* edgemm_ocr_create(const char* models_dir, const edgemm_runtime_options* options, edgemm_ocr** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (models_dir == nullptr) return null_argument("models_dir");
  return guarded([&]() -> edgemm_status* {
    edgemm::ocr::OcrOptions ocr_options;
    static_cast<edgemm::RuntimeOptions&>(ocr_options) = to_runtime_options(options);
    ocr_options.models_dir = models_dir;
    auto pipeline = edgemm::ocr::OcrPipeline::create(ocr_options);
    if (!pipeline) return to_c(pipeline.status());
    *out = new edgemm_ocr{std::move(*pipeline)};
    return nullptr;
  });
}

void edgemm_ocr_destroy(edgemm_ocr* ocr) { delete ocr; }

edgemm_status* edgemm_ocr_run_file(const edgemm_ocr* ocr, const char* image_path, edgemm_ocr_result** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (ocr == nullptr) return null_argument("ocr");
  if (image_path == nullptr) return null_argument("image_path");
  return guarded([&]() { return finish_ocr(ocr->pipeline->run_file(image_path), out); });
}

edgemm_status* edgemm_ocr_run_image(const edgemm_ocr* ocr, const uint8_t* pixels, int32_t width, int32_t height,
                                    int32_t channels, int64_t row_bytes, edgemm_ocr_result** out) {
  if (out == nullptr) return null_argument("out");
  *out = nullptr;
  if (ocr == nullptr) return null_argument("ocr");
  if (pixels == nullptr) return null_argument("pixels");
  return guarded([&]() {
    const edgemm::ImageView image{pixels, width, height, channels, row_bytes};
    return finish_ocr(ocr->pipeline->run(image), out);
  });
}

void edgemm_ocr_result_free(edgemm_ocr_result* result) { delete result; }

size_t edgemm_ocr_result_line_count(const edgemm_ocr_result* result) {
  return result ? result->result.lines.size() : 0;
}

const char* edgemm_ocr_result_line_text(const edgemm_ocr_result* result, size_t index) {
  const edgemm::ocr::OcrLine* line = line_at(result, index);
  return line ? line->text.c_str() : nullptr;
}

float edgemm_ocr_result_line_score(const edgemm_ocr_result* result, size_t index) {
  const edgemm::ocr::OcrLine* line = line_at(result, index);
  return line ? line->score : 0.0f;
}

int edgemm_ocr_result_line_polygon(const edgemm_ocr_result* result, size_t index, float xy[8]) {
  const edgemm::ocr::OcrLine* line = line_at(result, index);
  if (line == nullptr || xy == nullptr) return -1;
  for (int k = 0; k < 4; ++k) {
    xy[2 * k] = line->polygon[k].x;
    xy[2 * k + 1] = line->polygon[k].y;
  }
  return 0;
}

}  // extern "C"
