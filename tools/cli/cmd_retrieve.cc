/// `edgemm retrieve`: CLIP image-text retrieval (docs/clip.md, "Retrieval"). Three modes:
///   --model DIR --index OUT.idx IMAGE...            build an index of image embeddings
///   --model DIR --index OUT.idx --query TEXT        rank the indexed images by a text
///   --model DIR --labels "a,b,..." IMAGE...         zero-shot scores of each image per label

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "edgemm/pipelines/clip.h"

namespace edgemm::cli {
namespace {

struct RetrieveArgs {
  std::string model;
  std::string index;
  std::vector<std::string> images;
  std::string query;
  bool query_given = false;
  std::string labels;
  bool labels_given = false;
  int top_k = 5;
  int threads = 0;
  std::string precision = "fp32";
  int batch = 8;
  float logit_scale = 0;
  bool json = false;
  bool no_optimize = false;
  int prune_after_layer = -1;
  float prune_keep_ratio = 0.5f;
  std::string prune_rule = "cls_attention";
};

Status usage(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

/// Checks that the options name exactly one mode.
Status check_mode(const RetrieveArgs& a) {
  if (a.model.empty()) return usage("--model DIR is required (a CLIP package folder, see docs/clip.md)");
  if (a.query_given && a.labels_given) return usage("--query and --labels are separate modes; give one");
  if (a.query_given) {
    if (a.index.empty()) return usage("--query needs --index FILE (an index built with `edgemm retrieve --index`)");
    if (!a.images.empty()) return usage("--query ranks the images of --index; do not list images with it");
    if (a.top_k < 1) return usage("--top-k must be at least 1, got " + std::to_string(a.top_k));
    return Status::ok();
  }
  if (a.labels_given) {
    if (a.images.empty()) return usage("--labels needs at least one image");
    if (!a.index.empty()) return usage("--labels scores the images given; it does not use --index");
    return Status::ok();
  }
  if (a.index.empty()) {
    return usage(a.images.empty() ? "nothing to do: give --index FILE IMAGE... (build), --index FILE --query TEXT "
                                    "(search) or --labels LIST IMAGE... (zero-shot)"
                                  : "images given without --index FILE (where to write their embeddings) or --labels");
  }
  if (a.images.empty()) return usage("--index FILE without images or --query: nothing to do");
  return Status::ok();
}

/// Splits "a cat, a rocket" at commas, trimming spaces. Errors: an empty label.
Expected<std::vector<std::string>> split_labels(const std::string& text) {
  std::vector<std::string> labels;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) return usage("--labels has an empty label in '" + text + "'");
    labels.push_back(item.substr(b, e - b + 1));
  }
  if (text.empty() || text.back() == ',') return usage("--labels has an empty label in '" + text + "'");
  return labels;
}

Expected<clip::ClipModel> load_model(const RetrieveArgs& a, bool vision, bool text) {
  clip::ClipOptions options;
  options.threads = a.threads;
  options.precision = a.precision;
  options.optimize = !a.no_optimize;
  options.load_vision = vision;
  options.load_text = text;
  options.image_batch = a.batch;
  options.prune_after_layer = a.prune_after_layer;
  options.prune_keep_ratio = a.prune_keep_ratio;
  options.prune_rule = a.prune_rule;
  return clip::ClipModel::load(a.model, options);
}

/// Preprocesses `images` one by one (an unreadable one is reported and skipped) and embeds them in
/// batches. Returns the embeddings of the readable images; `kept` gets their paths and `skipped`
/// the others with their errors.
Expected<Tensor> embed_readable(const clip::ClipModel& model, const std::vector<std::string>& images, int batch,
                                std::vector<std::string>& kept, std::vector<std::pair<std::string, Status>>& skipped,
                                const char* label) {
  const int64_t dim = model.embedding_dim();
  std::vector<float> all;
  std::vector<Tensor> pending;
  std::vector<std::string> pending_paths;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::ok();
    const Shape one = pending[0].shape();
    auto pixels = Tensor::create(DataType::kFloat32, {static_cast<int64_t>(pending.size()), 3, one[2], one[3]});
    if (!pixels.has_value()) return pixels.status();
    for (size_t i = 0; i < pending.size(); ++i) {
      std::memcpy(pixels->data<float>() + i * pending[i].element_count(), pending[i].data<float>(),
                  pending[i].byte_size());
    }
    auto e = model.embed_pixels(*pixels);
    if (!e.has_value()) return e.status();
    all.insert(all.end(), e->data<float>(), e->data<float>() + e->element_count());
    kept.insert(kept.end(), pending_paths.begin(), pending_paths.end());
    pending.clear();
    pending_paths.clear();
    return Status::ok();
  };
  ProgressBar progress(label, images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    progress.update(i, images[i]);
    auto pixels = model.preprocess_file(images[i]);
    if (!pixels.has_value()) {
      progress.clear();
      std::cerr << "edgemm retrieve: skipped: " << pixels.status().to_string() << "\n";
      skipped.emplace_back(images[i], pixels.status());
      continue;
    }
    pending.push_back(std::move(pixels).value());
    pending_paths.push_back(images[i]);
    if (static_cast<int>(pending.size()) >= batch) EDGEMM_RETURN_IF_ERROR(flush());
  }
  EDGEMM_RETURN_IF_ERROR(flush());
  progress.clear();
  return Tensor::from_floats({static_cast<int64_t>(kept.size()), dim}, all);
}

nlohmann::json skipped_json(const std::vector<std::pair<std::string, Status>>& skipped) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [file, status] : skipped) out.push_back({{"file", file}, {"error", error_json(status)}});
  return out;
}

int build_index(const RetrieveArgs& a) {
  auto model = load_model(a, true, false);
  if (!model.has_value()) return report_error("retrieve", model.status(), a.json);
  const Status writable = check_output_path(a.index, a.images);
  if (!writable.is_ok()) return report_error("retrieve", writable, a.json);
  std::vector<std::string> kept;
  std::vector<std::pair<std::string, Status>> skipped;
  auto embeddings = embed_readable(*model, a.images, a.batch, kept, skipped, "index");
  if (!embeddings.has_value()) return report_error("retrieve", embeddings.status(), a.json);
  if (kept.empty()) {
    return report_error(
        "retrieve",
        Status(skipped.front().second.code(),
               "none of the " + std::to_string(a.images.size()) +
                   " images could be read; no index written (first error: " + skipped.front().second.message() + ")"),
        a.json);
  }
  clip::EmbeddingIndex index = clip::EmbeddingIndex::for_model(*model);
  Status status = index.add(*embeddings, kept);
  if (status.is_ok()) status = index.save(a.index);
  if (!status.is_ok()) return report_error("retrieve", status, a.json);
  if (a.json) {
    std::cout << json_text({{"index", a.index},
                            {"model_id", index.model_id},
                            {"vision_model_sha256", index.vision_model_sha256},
                            {"dim", index.dim},
                            {"count", index.size()},
                            {"skipped", skipped_json(skipped)}})
              << std::endl;
  } else {
    std::cout << "indexed " << index.size() << " image" << (index.size() == 1 ? "" : "s") << " into " << a.index
              << (skipped.empty() ? "" : " (" + std::to_string(skipped.size()) + " skipped)") << "\n";
  }
  // Skipped images make the run fail (exit code of the first), though the index of the rest is written.
  return skipped.empty() ? 0 : exit_code(skipped.front().second);
}

int query_index(const RetrieveArgs& a) {
  const size_t b = a.query.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return report_error("retrieve", usage("--query is empty"), a.json);
  auto index = clip::EmbeddingIndex::load(a.index);
  if (!index.has_value()) return report_error("retrieve", index.status(), a.json);
  auto model = load_model(a, false, true);
  if (!model.has_value()) return report_error("retrieve", model.status(), a.json);
  Status same = index->check_model(*model);
  if (!same.is_ok()) return report_error("retrieve", same, a.json);
  auto text = model->embed_texts({a.query});
  if (!text.has_value()) return report_error("retrieve", text.status(), a.json);
  auto matches =
      index->search(std::vector<float>(text->data<float>(), text->data<float>() + text->element_count()), a.top_k);
  if (!matches.has_value()) return report_error("retrieve", matches.status(), a.json);
  if (a.json) {
    nlohmann::json results = nlohmann::json::array();
    for (size_t i = 0; i < matches->size(); ++i) {
      results.push_back({{"rank", i + 1}, {"path", (*matches)[i].path}, {"score", (*matches)[i].score}});
    }
    std::cout << json_text({{"query", a.query},
                            {"index", a.index},
                            {"model_id", model->config().model_id},
                            {"count", index->size()},
                            {"results", results}})
              << std::endl;
  } else {
    for (size_t i = 0; i < matches->size(); ++i) {
      std::cout << i + 1 << "\t" << std::fixed << std::setprecision(4) << (*matches)[i].score << "\t"
                << (*matches)[i].path << "\n";
    }
  }
  return 0;
}

int zero_shot(const RetrieveArgs& a) {
  auto labels = split_labels(a.labels);
  if (!labels.has_value()) return report_error("retrieve", labels.status(), a.json);
  if (a.logit_scale < 0) return report_error("retrieve", usage("--logit-scale must be positive"), a.json);
  auto model = load_model(a, true, true);
  if (!model.has_value()) return report_error("retrieve", model.status(), a.json);
  std::vector<std::string> kept;
  std::vector<std::pair<std::string, Status>> skipped;
  auto embeddings = embed_readable(*model, a.images, a.batch, kept, skipped, "classify");
  if (!embeddings.has_value()) return report_error("retrieve", embeddings.status(), a.json);
  std::vector<clip::LabelScores> scores;
  if (!kept.empty()) {
    auto s = model->classify(*embeddings, *labels, a.logit_scale);
    if (!s.has_value()) return report_error("retrieve", s.status(), a.json);
    scores = std::move(s).value();
  }
  const float scale = a.logit_scale > 0 ? a.logit_scale : model->logit_scale();
  if (a.json) {
    nlohmann::json images = nlohmann::json::array();
    for (size_t i = 0; i < kept.size(); ++i) {
      nlohmann::json per_label = nlohmann::json::array();
      for (size_t l = 0; l < labels->size(); ++l) {
        per_label.push_back({{"label", (*labels)[l]}, {"prob", scores[i].probs[l]}, {"cosine", scores[i].cosine[l]}});
      }
      images.push_back({{"file", kept[i]}, {"scores", per_label}});
    }
    for (const auto& [file, status] : skipped) images.push_back({{"file", file}, {"error", error_json(status)}});
    std::cout << json_text({{"model_id", model->config().model_id},
                            {"logit_scale", scale},
                            {"labels", *labels},
                            {"images", images}})
              << std::endl;
  } else {
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept.size() + skipped.size() > 1) std::cout << "# " << kept[i] << "\n";
      std::vector<size_t> order(labels->size());
      for (size_t l = 0; l < order.size(); ++l) order[l] = l;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t x, size_t y) { return scores[i].probs[x] > scores[i].probs[y]; });
      for (size_t l : order) {
        std::cout << std::fixed << std::setprecision(4) << scores[i].probs[l] << "\t" << scores[i].cosine[l] << "\t"
                  << (*labels)[l] << "\n";
      }
    }
  }
  return skipped.empty() ? 0 : exit_code(skipped.front().second);
}

int retrieve_command(const RetrieveArgs& a) {
  const Status mode = check_mode(a);
  if (!mode.is_ok()) return report_error("retrieve", mode, a.json);
  if (a.query_given) return query_index(a);
  if (a.labels_given) return zero_shot(a);
  return build_index(a);
}

}  // namespace

void add_retrieve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RetrieveArgs>();
  CLI::App* cmd = app.add_subcommand(
      "retrieve",
      "CLIP image-text retrieval: build an image index (--index OUT IMAGE...), search it by text (--index IDX "
      "--query TEXT) or score images against labels (--labels \"a cat,a rocket\" IMAGE...)");
  cmd->add_option("images", args->images, "image files (PNG, JPEG, BMP, TIFF, WebP)");
  cmd->add_option("-m,--model", args->model,
                  "CLIP package folder (transformers.js layout: config.json, preprocessor_config.json, "
                  "tokenizer.json, onnx/vision_model.onnx + onnx/text_model.onnx or onnx/model.onnx)");
  cmd->add_option("-i,--index", args->index, "index file: written with images, read with --query");
  cmd->add_option("-q,--query", args->query, "text to rank the indexed images by")->each([args](const std::string&) {
    args->query_given = true;
  });
  cmd->add_option("-k,--top-k", args->top_k, "how many images --query prints")->capture_default_str();
  cmd->add_option("-l,--labels", args->labels, "comma-separated labels for zero-shot classification")
      ->each([args](const std::string&) { args->labels_given = true; });
  cmd->add_option("--logit-scale", args->logit_scale,
                  "scale of the cosines before the softmax (default: exp(logit_scale_init_value) of config.json, "
                  "or 1)")
      ->check(finite_range(0.0, 1000.0));
  cmd->add_option("-t,--threads", args->threads, "intra-op threads per model (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--precision", args->precision,
                  "fp32, bf16 (bfloat16 MatMul products on CPUs with AVX512_BF16) or fp16 (half-precision Conv and "
                  "MatMul on Arm CPUs with FP16 arithmetic), docs/backends.md; an index made at one precision is only "
                  "read at the same")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--batch", args->batch, "images per vision model run")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--prune-tokens-after-layer", args->prune_after_layer,
                  "visual token pruning: drop patch tokens after this 0-based vision encoder layer (docs/clip.md)")
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--prune-keep-ratio", args->prune_keep_ratio, "share of patch tokens kept, in (0, 1] (default 0.5)")
      ->check(finite_range(0, 1));
  cmd->add_option("--prune-rule", args->prune_rule, "token score: cls_attention (default) or mean_abs")
      ->check(CLI::IsMember({"cls_attention", "mean_abs"}));
  cmd->add_flag("--no-optimize", args->no_optimize, "run the ONNX files without edgemm's graph passes");
  cmd->add_flag("--json", args->json, "print a JSON document (schema in docs/clip.md)");
  cmd->callback([args, &exit_code] { exit_code = retrieve_command(*args); });
}

}  // namespace edgemm::cli
