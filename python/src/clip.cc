/// `ClipModel` for Python: image and text embeddings and zero-shot classification
/// (edgemm/pipelines/clip.h).

#include "edgemm/pipelines/clip.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "common.h"

namespace edgemm::python {
namespace {

void set_clip_option(clip::ClipOptions& o, const std::string& name, const py::handle& v) {
  if (set_runtime_option(o, name, v)) return;
  if (name == "load_vision") {
    o.load_vision = option_cast<bool>(v, name, "bool");
  } else if (name == "load_text") {
    o.load_text = option_cast<bool>(v, name, "bool");
  } else if (name == "image_batch") {
    o.image_batch = option_cast<int>(v, name, "int");
  } else if (name == "prune_after_layer") {
    o.prune_after_layer = option_cast<int>(v, name, "int");
  } else if (name == "prune_keep_ratio") {
    o.prune_keep_ratio = option_cast<float>(v, name, "float");
  } else if (name == "prune_rule") {
    o.prune_rule = option_cast<std::string>(v, name, "str");
  } else {
    throw py::type_error("ClipModel() got an unexpected keyword argument '" + name + "'");
  }
}

/// A single item or a list/tuple of them, as a list.
py::list as_list(const py::object& items) {
  if (py::isinstance<py::list>(items) || py::isinstance<py::tuple>(items)) return py::list(items);
  py::list one;
  one.append(items);
  return one;
}

class Clip {
 public:
  Clip(const py::object& dir, const py::kwargs& kwargs) {
    clip::ClipOptions options;
    for (const auto& [key, value] : kwargs) set_clip_option(options, py::str(key), value);
    const std::string path = path_string(dir);
    Expected<clip::ClipModel> loaded = make_error(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release release;
      loaded = clip::ClipModel::load(path, options);
    }
    model_.emplace(take(std::move(loaded)));
  }

  /// float32 [N, D] embeddings of one text or a list of texts, rows L2-normalized.
  py::array encode_text(const py::object& texts) const {
    std::vector<std::string> list;
    for (const py::handle& t : as_list(texts)) list.push_back(option_cast<std::string>(t, "each text", "str"));
    Expected<Tensor> embeds = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      embeds = model_->embed_texts(list);
    }
    return to_array(take(std::move(embeds)));
  }

  /// float32 [N, D] embeddings of one image or a list (paths, encoded bytes, uint8 arrays in `order`).
  py::array encode_image(const py::object& images, const std::string& order) const {
    std::vector<ImageArg> args;
    std::vector<ImageView> views;
    const py::list list = as_list(images);
    if (list.empty()) throw_status(make_error(StatusCode::kInvalidArgument, "encode_image needs at least one image"));
    for (size_t i = 0; i < list.size(); ++i) {
      args.push_back(to_image(list[i], order, /*keep_alpha=*/true, "image " + std::to_string(i)));
    }
    for (const ImageArg& a : args) views.push_back(a.view);
    Expected<Tensor> embeds = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      embeds = model_->embed_images(views);
    }
    return to_array(take(std::move(embeds)));
  }

  /// Zero-shot classification of L2-normalized image embeddings [N, D] against `labels`:
  /// (probs, cosine), each float32 [N, len(labels)].
  py::tuple classify(const py::array& image_embeds, const std::vector<std::string>& labels, float logit_scale) const {
    const InputTensor embeds = to_tensor(image_embeds, "image_embeds");
    Expected<std::vector<clip::LabelScores>> scores = make_error(StatusCode::kInternal, "not run");
    {
      py::gil_scoped_release release;
      scores = model_->classify(embeds.tensor, labels, logit_scale);
    }
    const std::vector<clip::LabelScores> rows = take(std::move(scores));
    const auto n = static_cast<py::ssize_t>(rows.size()), l = static_cast<py::ssize_t>(labels.size());
    py::array_t<float> probs({n, l}), cosine({n, l});
    for (py::ssize_t i = 0; i < n; ++i) {
      for (py::ssize_t j = 0; j < l; ++j) {
        probs.mutable_at(i, j) = rows[i].probs[j];
        cosine.mutable_at(i, j) = rows[i].cosine[j];
      }
    }
    return py::make_tuple(probs, cosine);
  }

  int embedding_dim() const { return model_->embedding_dim(); }
  float logit_scale() const { return model_->logit_scale(); }
  std::string model_id() const { return model_->config().model_id; }
  std::string vision_model_sha256() const { return model_->vision_model_sha256(); }

 private:
  std::optional<clip::ClipModel> model_;
};

}  // namespace

void bind_clip(py::module_& m) {
  py::class_<Clip>(m, "_ClipModel", "edgemm::clip::ClipModel; see edgemm.ClipModel.")
      .def(py::init<const py::object&, const py::kwargs&>(), py::arg("model_dir"))
      .def("encode_text", &Clip::encode_text, py::arg("texts"))
      .def("encode_image", &Clip::encode_image, py::arg("images"), py::arg("order") = "rgb")
      .def("classify", &Clip::classify, py::arg("image_embeds"), py::arg("labels"), py::arg("logit_scale") = 0.0f)
      .def_property_readonly("embedding_dim", &Clip::embedding_dim)
      .def_property_readonly("logit_scale", &Clip::logit_scale)
      .def_property_readonly("model_id", &Clip::model_id)
      .def_property_readonly("vision_model_sha256", &Clip::vision_model_sha256);
}

}  // namespace edgemm::python
