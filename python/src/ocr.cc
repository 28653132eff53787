/// `OcrPipeline` for Python: PP-OCRv4 detection, angle classification and recognition
/// (edgemm/pipelines/ocr.h). Results are dicts in the schema of `edgemm ocr --json`'s images
/// (docs/ocr.md); python/edgemm/pipelines.py turns them into OcrResult objects.

#include "edgemm/pipelines/ocr.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "common.h"
#include "edgemm/pipelines/vlm.h"

namespace edgemm::python {
namespace {

/// Sets the OcrOptions field `name` (RuntimeOptions, the file names and the thresholds).
void set_ocr_option(ocr::OcrOptions& o, const std::string& name, const py::handle& v) {
  if (set_runtime_option(o, name, v)) return;
  auto f = [&](float& field) { field = option_cast<float>(v, name, "float"); };
  auto i = [&](int& field) { field = option_cast<int>(v, name, "int"); };
  auto b = [&](bool& field) { field = option_cast<bool>(v, name, "bool"); };
  auto s = [&](std::string& field) { field = option_cast<std::string>(v, name, "str"); };
  if (name == "det_model") return s(o.files.det);
  if (name == "cls_model") return s(o.files.cls);
  if (name == "rec_model") return s(o.files.rec);
  if (name == "dictionary") return s(o.files.dictionary);
  if (name == "use_cls") return b(o.use_cls);
  if (name == "detect_orientation") return b(o.detect_orientation);
  if (name == "det_limit_side") return i(o.det_limit_side);
  if (name == "det_threshold") return f(o.det_threshold);
  if (name == "box_threshold") return f(o.box_threshold);
  if (name == "max_candidates") return i(o.max_candidates);
  if (name == "unclip_ratio") return f(o.unclip_ratio);
  if (name == "min_box_side") return i(o.min_box_side);
  if (name == "line_tolerance") return f(o.line_tolerance);
  if (name == "cls_threshold") return f(o.cls_threshold);
  if (name == "cls_batch") return i(o.cls_batch);
  if (name == "rec_batch") return i(o.rec_batch);
  if (name == "rec_score_threshold") return f(o.rec_score_threshold);
  if (name == "space_threshold") return f(o.space_threshold);
  if (name == "score_mode") {
    const std::string mode = option_cast<std::string>(v, name, "str");
    if (mode != "fast" && mode != "slow") {
      throw_status(
          make_error(StatusCode::kInvalidArgument, "score_mode must be \"fast\" or \"slow\", got \"" + mode + "\""));
    }
    o.score_mode = mode == "fast" ? ocr::ScoreMode::kFast : ocr::ScoreMode::kSlow;
    return;
  }
  throw py::type_error("OcrPipeline() got an unexpected keyword argument '" + name + "'");
}

/// The result as `edgemm ocr --json` writes one image (without "file").
py::dict result_dict(const ocr::OcrResult& r) {
  py::list lines;
  for (const ocr::OcrLine& line : r.lines) {
    py::list polygon;
    for (const ocr::Point& p : line.polygon) polygon.append(py::make_tuple(p.x, p.y));
    py::dict d;
    d["polygon"] = polygon;
    d["text"] = line.text;
    d["score"] = line.score;
    d["box_score"] = line.box_score;
    d["rotated_180"] = line.rotated_180;
    lines.append(d);
  }
  const ocr::OcrTimings& t = r.timings;
  py::dict timings;
  timings["decode"] = t.decode_ms;
  timings["det"] = t.det_ms;
  timings["post"] = t.post_ms;
  timings["cls"] = t.cls_ms;
  timings["rec"] = t.rec_ms;
  timings["total"] = t.total_ms;
  py::dict d;
  d["width"] = r.width;
  d["height"] = r.height;
  d["orientation"] = r.orientation;
  d["lines"] = lines;
  d["timings_ms"] = timings;
  return d;
}

class Ocr {
 public:
  Ocr(const py::object& models_dir, const py::kwargs& kwargs) {
    ocr::OcrOptions options;
    options.models_dir = path_string(models_dir);
    for (const auto& [key, value] : kwargs) set_ocr_option(options, py::str(key), value);
    Expected<std::unique_ptr<ocr::OcrPipeline>> created = make_error(StatusCode::kInternal, "not loaded");
    {
      py::gil_scoped_release release;
      created = ocr::OcrPipeline::create(options);
    }
    pipeline_ = take(std::move(created));
  }

  /// Reads the text of `image` (a path, encoded bytes, or a uint8 H×W[×C] array in `order`).
  py::dict run(const py::object& image, const std::string& order) const { return result_dict(read(image, order)); }

  /// OCR+VQA: (the question a VLM gets after this pipeline reads `image`, as `edgemm vqa --ocr`
  /// asks it (vlm::ocr_grounded_question), the OCR result).
  py::tuple grounded_question(const py::object& image, const std::string& question, const std::string& order) const {
    const ocr::OcrResult result = read(image, order);
    return py::make_tuple(vlm::ocr_grounded_question(result, question), result_dict(result));
  }

 private:
  ocr::OcrResult read(const py::object& image, const std::string& order) const {
    Expected<ocr::OcrResult> result = make_error(StatusCode::kInternal, "not run");
    if (is_path(image)) {
      const std::string path = path_string(image);
      py::gil_scoped_release release;
      result = pipeline_->run_file(path);
    } else {
      const ImageArg arg = to_image(image, order, /*keep_alpha=*/true, "image");
      py::gil_scoped_release release;
      result = pipeline_->run(arg.view);
    }
    return take(std::move(result));
  }

  std::unique_ptr<ocr::OcrPipeline> pipeline_;
};

}  // namespace

void bind_ocr(py::module_& m) {
  py::class_<Ocr>(m, "_OcrPipeline", "edgemm::ocr::OcrPipeline; see edgemm.OcrPipeline.")
      .def(py::init<const py::object&, const py::kwargs&>(), py::arg("models_dir"))
      .def("run", &Ocr::run, py::arg("image"), py::arg("order") = "rgb")
      .def("grounded_question", &Ocr::grounded_question, py::arg("image"), py::arg("question"),
           py::arg("order") = "rgb");
}

}  // namespace edgemm::python
