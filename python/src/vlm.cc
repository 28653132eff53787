/// `VlmModel` for Python: generation with a KV cache, whole or as a stream of text pieces
/// (edgemm/pipelines/vlm.h).

#include "edgemm/pipelines/vlm.h"

#include <pybind11/stl.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "common.h"

namespace edgemm::python {
namespace {

void set_vlm_option(vlm::VlmOptions& o, const std::string& name, const py::handle& v) {
  if (set_runtime_option(o, name, v)) return;
  if (name == "decoder_file") {
    o.decoder_file = option_cast<std::string>(v, name, "str");
  } else if (name == "bind_kv_cache") {
    o.bind_kv_cache = option_cast<bool>(v, name, "bool");
  } else if (name == "kv_capacity") {
    o.kv_capacity = option_cast<int>(v, name, "int");
    if (o.kv_capacity < 0 || o.kv_capacity > 4096) {
      throw_status(make_error(
          StatusCode::kInvalidArgument,
          "kv_capacity must be in [0, 4096] (0: the model's context), got " + std::to_string(o.kv_capacity)));
    }
  } else {
    throw py::type_error("VlmModel() got an unexpected keyword argument '" + name + "'");
  }
}

/// GenerateOptions from the keyword arguments of generate(): max_new_tokens, temperature (> 0
/// samples, as `edgemm vqa --temperature`), top_k, top_p, repetition_penalty, seed, stop_ids,
/// skip_special_tokens.
vlm::GenerateOptions generate_options(const py::dict& kwargs) {
  vlm::GenerateOptions g;
  g.sampling.temperature = 0;  // greedy unless asked, as `edgemm vqa`
  for (const auto& [key, v] : kwargs) {
    const std::string name = py::str(key);
    if (name == "max_new_tokens") {
      g.max_new_tokens = option_cast<int>(v, name, "int");
    } else if (name == "temperature") {
      g.sampling.temperature = option_cast<float>(v, name, "float");
    } else if (name == "top_k") {
      g.sampling.top_k = option_cast<int>(v, name, "int");
    } else if (name == "top_p") {
      g.sampling.top_p = option_cast<float>(v, name, "float");
    } else if (name == "repetition_penalty") {
      g.sampling.repetition_penalty = option_cast<float>(v, name, "float");
    } else if (name == "seed") {
      g.sampling.seed = option_cast<uint64_t>(v, name, "int >= 0");
    } else if (name == "stop_ids") {
      g.stop_ids = option_cast<std::vector<int64_t>>(v, name, "a list of int");
    } else if (name == "skip_special_tokens") {
      g.skip_special_tokens = option_cast<bool>(v, name, "bool");
    } else {
      throw py::type_error("generate() got an unexpected keyword argument '" + name + "'");
    }
  }
  // The ranges of `edgemm vqa`'s flags (tools/cli/vlm_options.cc).
  auto refuse = [](const std::string& what) { throw_status(make_error(StatusCode::kInvalidArgument, what)); };
  const vlm::SamplingOptions& s = g.sampling;
  if (g.max_new_tokens < 1 || g.max_new_tokens > (1 << 20)) {
    refuse("max_new_tokens must be in [1, 1048576], got " + std::to_string(g.max_new_tokens));
  }
  if (!(s.temperature >= 0 && s.temperature <= 100))
    refuse("temperature must be in [0, 100], got " + std::to_string(s.temperature));
  if (s.top_k < 0 || s.top_k > (1 << 24)) refuse("top_k must be in [0, 16777216], got " + std::to_string(s.top_k));
  if (!(s.top_p >= 1e-6f && s.top_p <= 1)) refuse("top_p must be in [1e-6, 1], got " + std::to_string(s.top_p));
  if (!(s.repetition_penalty >= 1e-3f && s.repetition_penalty <= 100)) {
    refuse("repetition_penalty must be in [0.001, 100], got " + std::to_string(s.repetition_penalty));
  }
  g.sampling.do_sample = g.sampling.temperature > 0;
  return g;
}

py::dict result_dict(const vlm::GenerateResult& r) {
  const vlm::GenerateTimings& t = r.timings;
  py::dict timings;
  timings["preprocess_ms"] = t.preprocess_ms;
  timings["vision_encoder_ms"] = t.vision_ms;
  timings["prefill_ms"] = t.prefill_ms;
  timings["decode_ms"] = t.decode_ms;
  timings["time_to_first_token_ms"] = t.first_token_ms;
  timings["prompt_tokens"] = t.prompt_tokens;
  timings["cached_prompt_tokens"] = t.cached_prompt_tokens;
  timings["new_tokens"] = t.new_tokens;
  py::dict d;
  d["text"] = r.text;
  d["ids"] = r.ids;
  d["stop_reason"] = r.stop_reason;
  d["timings"] = timings;
  return d;
}

/// A loaded model and the lock that keeps it to one generation at a time (VlmModel is not
/// thread-safe); shared with the streams it starts.
struct Model {
  std::mutex busy;
  std::optional<vlm::VlmModel> vlm;
};

/// Images of one call, viewed for as long as the call (or its stream) runs.
struct Images {
  std::vector<ImageArg> args;
  std::vector<ImageView> views;
};

Images read_images(const py::list& images, const std::string& order) {
  Images out;
  for (size_t i = 0; i < images.size(); ++i) {
    out.args.push_back(to_image(images[i], order, /*keep_alpha=*/true, "image " + std::to_string(i)));
  }
  for (const ImageArg& a : out.args) out.views.push_back(a.view);
  return out;
}

/// A generation running on its own thread, read as an iterator of text pieces. Closing it (or
/// dropping it) stops the generation (stop_reason "cancelled") and waits for the thread.
class TokenStream {
 public:
  TokenStream(std::shared_ptr<Model> model, std::string prompt, Images images, vlm::GenerateOptions options)
      : model_(std::move(model)), images_(std::move(images)), state_(std::make_shared<State>()) {
    options.should_stop = [state = state_] { return state->cancel.load(); };
    worker_ = std::thread([model = model_, state = state_, prompt = std::move(prompt), views = images_.views,
                           options = std::move(options)] {
      std::lock_guard<std::mutex> busy(model->busy);
      auto on_token = [&state](int64_t, const std::string& piece) {
        if (piece.empty()) return;
        std::lock_guard<std::mutex> lock(state->mu);
        state->pieces.push_back(piece);
        state->ready.notify_one();
      };
      Expected<vlm::GenerateResult> result = model->vlm->generate(prompt, views, options, on_token);
      std::lock_guard<std::mutex> lock(state->mu);
      state->result.emplace(std::move(result));
      state->ready.notify_one();
    });
  }
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;
  ~TokenStream() { stop(); }

  /// The next piece of text; StopIteration at the end; the generation's error, if any.
  std::string next() {
    std::unique_lock<std::mutex> lock(state_->mu);
    {
      py::gil_scoped_release release;
      state_->ready.wait(lock, [this] { return !state_->pieces.empty() || state_->result.has_value(); });
    }
    if (!state_->pieces.empty()) {
      std::string piece = std::move(state_->pieces.front());
      state_->pieces.pop_front();
      return piece;
    }
    if (!state_->result->has_value()) throw_status(state_->result->status());
    throw py::stop_iteration();
  }

  /// Stops the generation if it still runs and waits for its thread.
  void close() {
    py::gil_scoped_release release;
    stop();
  }

  /// The whole result (as VlmModel.generate's) once the stream has ended; None before.
  py::object result() {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->result.has_value() || !state_->result->has_value()) return py::none();
    return result_dict(state_->result->value());
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable ready;
    std::deque<std::string> pieces;
    std::optional<Expected<vlm::GenerateResult>> result;
    std::atomic<bool> cancel{false};
  };

  void stop() {
    state_->cancel = true;
    if (worker_.joinable()) worker_.join();
  }

  std::shared_ptr<Model> model_;
  Images images_;  ///< the pixels the worker reads; outlive it (joined in stop())
  std::shared_ptr<State> state_;
  std::thread worker_;
};

class Vlm {
 public:
  Vlm(const py::object& dir, const py::kwargs& kwargs) : model_(std::make_shared<Model>()) {
    vlm::VlmOptions options;
    for (const auto& [key, value] : kwargs) set_vlm_option(options, py::str(key), value);
    const std::string path = path_string(dir);
    Expected<vlm::VlmModel> loaded = make_error(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release release;
      loaded = vlm::VlmModel::load(path, options);
    }
    model_->vlm.emplace(take(std::move(loaded)));
  }

  std::string chat_prompt(const std::string& question, int images) const {
    return take(model_->vlm->chat_prompt(question, images));
  }

  /// Generates after `prompt` (each "<image>" one of `images`): the result as a dict.
  py::dict generate(const std::string& prompt, const py::list& images, const std::string& order,
                    const py::dict& kwargs) {
    const vlm::GenerateOptions options = generate_options(kwargs);
    const Images read = read_images(images, order);
    Expected<vlm::GenerateResult> result = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> busy(model_->busy);
      result = model_->vlm->generate(prompt, read.views, options);
    }
    return result_dict(take(std::move(result)));
  }

  /// As generate(), as an iterator of text pieces.
  std::unique_ptr<TokenStream> stream(const std::string& prompt, const py::list& images, const std::string& order,
                                      const py::dict& kwargs) {
    vlm::GenerateOptions options = generate_options(kwargs);
    Images read = read_images(images, order);
    return std::make_unique<TokenStream>(model_, prompt, std::move(read), std::move(options));
  }

  std::string kv_cache_mode() const { return model_->vlm->kv_cache_mode(); }

 private:
  std::shared_ptr<Model> model_;
};

}  // namespace

void bind_vlm(py::module_& m) {
  py::class_<TokenStream>(m, "_TokenStream", "A generation read as an iterator of text pieces.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &TokenStream::next)
      .def("close", &TokenStream::close)
      .def("result", &TokenStream::result);
  py::class_<Vlm>(m, "_VlmModel", "edgemm::vlm::VlmModel; see edgemm.VlmModel.")
      .def(py::init<const py::object&, const py::kwargs&>(), py::arg("model_dir"))
      .def("chat_prompt", &Vlm::chat_prompt, py::arg("question"), py::arg("images"))
      .def("generate", &Vlm::generate, py::arg("prompt"), py::arg("images"), py::arg("order"), py::arg("options"))
      .def("stream", &Vlm::stream, py::arg("prompt"), py::arg("images"), py::arg("order"), py::arg("options"))
      .def_property_readonly("kv_cache_mode", &Vlm::kv_cache_mode);
}

}  // namespace edgemm::python
