#pragma once
/// \file clip.h
/// CLIP image-text retrieval (Radford et al., "Learning Transferable Visual Models From Natural
/// Language Supervision", 2021) on model packages in the layout transformers.js and Optimum publish
/// (e.g. `Xenova/clip-vit-base-patch32`): config.json, preprocessor_config.json, tokenizer.json
/// (+ tokenizer_config.json) and onnx/vision_model.onnx + onnx/text_model.onnx, or one combined
/// onnx/model.onnx. Image preprocessing follows transformers.js 4.3.1's CLIPImageProcessor in node
/// (docs/clip.md, "Retrieval"); embeddings are L2-normalized float32 rows; an EmbeddingIndex keeps
/// the embeddings of many images on disk for text queries.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgemm/image_view.h"
#include "edgemm/inferencer.h"
#include "edgemm/status.h"
#include "edgemm/tensor.h"

namespace edgemm::clip {

/// Resampling filter of preprocessor_config.json's `resample` (PIL's numbering).
enum class Resample {
  kNearest,   ///< 0
  kBilinear,  ///< 2 (and 4 box, 5 hamming, which transformers.js also runs as bilinear)
  kBicubic,   ///< 3: Catmull-Rom (a = -0.5)
  kLanczos,   ///< 1: Lanczos-3, antialiased (sharp's resize kernel "lanczos3", as PIL's LANCZOS)
};

/// preprocessor_config.json of a CLIPImageProcessor / CLIPFeatureExtractor (transformers' field
/// names; defaults are transformers.js's ImageProcessor defaults where the file omits a field).
struct ImageProcessorConfig {
  bool do_convert_rgb = true;  ///< gray → RGB, alpha dropped (always done: the models take 3 channels)
  bool do_resize = true;       ///< true when the file has a `size` and does not say otherwise
  /// Resize target, pixels. `size: {"shortest_edge": S}` (or `size: S`, an integer, read as the
  /// shortest edge as Python transformers does) keeps the aspect ratio; `{"longest_edge": L}` caps
  /// the longer side; `{"height": H, "width": W}` resizes to exactly W × H. 0 = not set.
  int shortest_edge = 0;                    ///< pixels; 0 = not set
  int longest_edge = 0;                     ///< pixels; 0 = not set
  int resize_height = 0;                    ///< pixels, exact resize (with resize_width); 0 = not set
  int resize_width = 0;                     ///< pixels; 0 = not set
  Resample resample = Resample::kBilinear;  ///< transformers.js default 2 when absent
  bool do_center_crop = false;              ///< crop crop_width × crop_height around the centre after resizing
  int crop_height = 0;                      ///< pixels (`crop_size: {"height", "width"}` or an integer)
  int crop_width = 0;                       ///< pixels
  bool do_rescale = true;                   ///< multiply 8-bit samples by rescale_factor
  double rescale_factor = 1.0 / 255.0;      ///< CLIP: 1/255
  bool do_normalize = false;                ///< then (v − image_mean[c]) / image_std[c]
  std::array<double, 3> image_mean = {0.0, 0.0, 0.0};  ///< RGB, after rescaling
  std::array<double, 3> image_std = {1.0, 1.0, 1.0};   ///< RGB, after rescaling

  /// Parses the text of a preprocessor_config.json; `source` names it in errors.
  /// Errors: kInvalidModel naming `source` and the field (malformed JSON, a field of the wrong type,
  /// a non-positive size, a zero std, no usable size with do_resize, no crop_size with
  /// do_center_crop, mean/std not of length 1 or 3, resample outside PIL's 0-5).
  static Expected<ImageProcessorConfig> parse(const std::string& json_text, const std::string& source);
  /// Reads and parses a file. Errors: kIo naming the path when it cannot be read; those of parse().
  static Expected<ImageProcessorConfig> load(const std::string& path);
};

/// Output size in pixels (width, height) of the resize step for a `width` × `height` image, as
/// transformers.js computes it: scale so the shorter side becomes shortest_edge, then so the
/// longer side is at most longest_edge, each side floor(round(x, 2 decimals)); or exactly
/// resize_width × resize_height. Returns the input size when do_resize is off.
std::array<int, 2> resize_output_size(const ImageProcessorConfig& config, int width, int height);

/// config.json fields the pipeline uses (Hugging Face CLIPConfig names).
struct ClipConfig {
  std::string model_id;                          ///< `_name_or_path` when present, else the package folder's name
  int projection_dim = 0;                        ///< embedding length (config.json `projection_dim`)
  int image_size = 0;                            ///< vision_config.image_size, pixels (0 when absent)
  int max_position_embeddings = 0;               ///< text_config.max_position_embeddings, tokens (0 when absent)
  std::optional<int64_t> pad_token_id;           ///< text_config.pad_token_id
  std::optional<double> logit_scale_init_value;  ///< config.json `logit_scale_init_value` (log scale)

  /// Parses config.json's text. Errors: kInvalidModel naming `source` and the field.
  static Expected<ClipConfig> parse(const std::string& json_text, const std::string& source);
};

/// Loading options.
/// RuntimeOptions apply to both encoders. A precision other than "fp32" changes
/// vision_model_sha256() (the index identity), as embeddings differ in their last digits.
struct ClipOptions : RuntimeOptions {
  bool load_vision = true;  ///< load the image encoder (needed by embed_images)
  bool load_text = true;    ///< load the text encoder and tokenizer (needed by embed_texts)
  int image_batch = 8;      ///< images per vision run (a static batch dimension in the model wins)
  /// Visual token pruning (docs/clip.md "Visual token pruning: the rule"), off by default: after
  /// encoder layer `prune_after_layer` (0-based; -1 = off) the vision encoder keeps the class token
  /// and ceil(prune_keep_ratio × patches) patches ranked by `prune_rule` ("cls_attention" or
  /// "mean_abs"). Separate vision_model.onnx only (a combined model.onnx gives kUnsupported).
  /// Changes vision_model_sha256() (the index identity): embeddings differ from unpruned ones.
  int prune_after_layer = -1;
  float prune_keep_ratio = 1.0f;
  std::string prune_rule = "cls_attention";
};

/// Zero-shot scores of one image: one entry per label, in the labels' order.
struct LabelScores {
  std::vector<float> cosine;  ///< cosine similarity image · label, in [-1, 1]
  std::vector<float> probs;   ///< softmax over labels of logit_scale × cosine, sums to 1
};

/// Implementation detail of ClipModel (src/pipelines/clip/clip_model.cc).
class ClipModelImpl;

/// A loaded CLIP package. Thread safety: the embed_* and classify calls are const and may run from
/// several threads at once (Inferencers and the tokenizer are thread-safe). Owns its models.
class ClipModel {
 public:
  ~ClipModel();
  /// Movable, not copyable (owns its Inferencers).
  ClipModel(ClipModel&&) noexcept;
  ClipModel& operator=(ClipModel&&) noexcept;

  /// Loads the package in folder `dir`: config.json, preprocessor_config.json (when load_vision),
  /// tokenizer.json + tokenizer_config.json (when load_text), and onnx/vision_model.onnx +
  /// onnx/text_model.onnx, or onnx/model.onnx (pixel_values and input_ids in; image_embeds and
  /// text_embeds out). Input and output names come from the models: transformers.js names first
  /// (pixel_values, input_ids, attention_mask, image_embeds, text_embeds), else the only float
  /// rank-4 input / integer input and the only rank-2 output. attention_mask is fed only when the
  /// text model declares it.
  /// Errors: kIo for a missing folder or required file (naming it), kInvalidModel for malformed
  /// JSON, missing fields, or models whose inputs/outputs do not fit (naming file and field),
  /// kUnsupported for unsupported preprocessing settings or tokenizer types. Never throws.
  static Expected<ClipModel> load(const std::string& dir, const ClipOptions& options = {});

  /// Decodes an image file (PNG, JPEG with EXIF orientation, BMP, TIFF, WebP; gray, RGB, RGBA —
  /// alpha dropped, as transformers.js) and preprocesses it: float32 [1, 3, H, W] pixel_values
  /// (RGB, NCHW, H × W the crop size). Errors: kIo (missing/unreadable file), kInvalidArgument
  /// (not an image, empty, larger than 2^28 pixels), naming the path.
  Expected<Tensor> preprocess_file(const std::string& path) const;

  /// Preprocesses an in-memory image (edgemm/image_view.h; alpha dropped, gray expanded) as
  /// preprocess_file() does a decoded file. Errors: kUnsupported (no vision model loaded),
  /// kInvalidArgument for an inconsistent view (ImageView lists them).
  Expected<Tensor> preprocess(const ImageView& image) const;

  /// Image embeddings of float32 pixel_values [N, 3, H, W] (as from preprocess_*): float32
  /// [N, projection_dim], each row L2-normalized. Errors: kInvalidArgument (shape or dtype), kUnsupported
  /// (no vision model loaded), those of Inferencer::run.
  Expected<Tensor> embed_pixels(const Tensor& pixel_values) const;

  /// Reads, preprocesses and embeds image files, image_batch at a time: float32 [N, projection_dim],
  /// rows L2-normalized, in the order of `paths`. Fails on the first unreadable image (errors of
  /// preprocess_file and embed_pixels).
  Expected<Tensor> embed_images(const std::vector<std::string>& paths) const;
  /// As embed_images(paths) for in-memory images (errors of preprocess(ImageView)).
  Expected<Tensor> embed_images(const std::vector<ImageView>& images) const;

  /// Text embeddings: tokenized with the package's tokenizer (special tokens added, truncated to
  /// tokenizer_config's model_max_length or text_config.max_position_embeddings, padded to the
  /// longest with the pad token), float32 [N, projection_dim], rows L2-normalized.
  /// Errors: kInvalidArgument for no texts, an empty (or all-whitespace) text or invalid UTF-8;
  /// kUnsupported without a text model; those of the tokenizer and Inferencer::run.
  Expected<Tensor> embed_texts(const std::vector<std::string>& texts) const;

  /// Text embeddings of token ids int64 [N, S] (already tokenized and padded): float32
  /// [N, projection_dim], rows L2-normalized. Errors as embed_texts().
  Expected<Tensor> embed_token_ids(const Tensor& input_ids, const Tensor* attention_mask = nullptr) const;

  /// The scale zero-shot classification multiplies cosines by: exp(logit_scale_init_value) from
  /// config.json (14.29 for CLIP's 2.6592; this is the initial value, not a trained scale, which
  /// the published packages do not carry outside the combined model), or 1 when absent.
  float logit_scale() const;

  /// Zero-shot classification of L2-normalized image embeddings [N, D] against `labels`
  /// (embedded with embed_texts): per image, cosine with each label and softmax(logit_scale ×
  /// cosine). `logit_scale` <= 0 uses logit_scale(). Errors: kInvalidArgument (no labels, an empty
  /// label, bad embedding shape), those of embed_texts().
  Expected<std::vector<LabelScores>> classify(const Tensor& image_embeds, const std::vector<std::string>& labels,
                                              float logit_scale = 0) const;

  /// config.json as read (model_id filled in from the folder name when absent).
  const ClipConfig& config() const;
  /// preprocessor_config.json as read (defaults when load_vision was off).
  const ImageProcessorConfig& processor() const;
  /// Embedding length (projection_dim, or the model's output width when config.json omits it).
  int embedding_dim() const;
  /// Path of the image encoder's ONNX file (onnx/vision_model.onnx or onnx/model.onnx).
  const std::string& vision_model_path() const;
  /// Lower-case hex sha256 of the image encoder's ONNX file: identifies the model in an index.
  /// With token pruning on, followed by "+prune(k=K,keep=R,rule=RULE)".
  const std::string& vision_model_sha256() const;
  /// The loaded encoders, by name ("vision", "text"; one "model" for a combined package).
  std::vector<std::pair<std::string, const Inferencer*>> models() const;

 private:
  explicit ClipModel(std::unique_ptr<ClipModelImpl> impl);
  std::unique_ptr<ClipModelImpl> impl_;
};

/// One ranked image.
struct Match {
  int64_t index = 0;  ///< row in the index
  std::string path;   ///< image path as stored
  float score = 0;    ///< cosine similarity with the query, in [-1, 1]
};

/// Image embeddings on disk, tied to the model that made them. File format (little-endian),
/// docs/clip.md "Index format": 8 bytes magic "EDGEMMIX", uint32 version (1), uint32 header length
/// L, L bytes of JSON {"model_id", "vision_model_sha256", "dim", "count"}, count paths (uint32 byte
/// length + raw bytes each), then count × dim float32 (row-major, L2-normalized). Not thread-safe
/// for concurrent mutation.
class EmbeddingIndex {
 public:
  std::string model_id;             ///< ClipConfig::model_id of the model that made it
  std::string vision_model_sha256;  ///< lower-case hex sha256 of the vision model file
  int dim = 0;                      ///< floats per vector
  std::vector<std::string> paths;   ///< one per vector
  std::vector<float> vectors;       ///< paths.size() × dim, row-major

  /// An empty index for `model`'s embeddings.
  static EmbeddingIndex for_model(const ClipModel& model);

  /// Appends rows of float32 [N, dim] embeddings with their paths. Errors: kInvalidArgument
  /// (shape, dtype or count mismatch).
  Status add(const Tensor& embeddings, const std::vector<std::string>& row_paths);

  /// Number of vectors.
  int64_t size() const { return static_cast<int64_t>(paths.size()); }

  /// Writes the file (replacing it). Errors: kIo naming the path.
  Status save(const std::string& path) const;

  /// Reads a file written by save(). Errors: kIo (cannot read), kInvalidArgument (not an edgemm
  /// index, unknown version, truncated or inconsistent header or data), naming the path.
  static Expected<EmbeddingIndex> load(const std::string& path);

  /// Checks that the index was made by `model` (same vision model sha256 and dim).
  /// Errors: kInvalidArgument naming both model ids and checksums.
  Status check_model(const ClipModel& model) const;

  /// The `top_k` vectors with the highest cosine with the L2-normalized `query` (dim floats), best
  /// first (ties: lower index first). top_k larger than size() returns all. Errors:
  /// kInvalidArgument for top_k < 1 or a query of the wrong length.
  Expected<std::vector<Match>> search(const std::vector<float>& query, int top_k) const;
};

/// Computes the sha256 of a file (FIPS 180-4) as lower-case hex. Errors: kIo naming the path.
Expected<std::string> sha256_file(const std::string& path);

}  // namespace edgemm::clip
