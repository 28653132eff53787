"""The pipelines for Python: OcrPipeline (PP-OCRv4), ClipModel (embeddings, zero-shot) and VlmModel
(generation, streamed or whole; OCR+VQA) over edgemm's C++ pipelines (docs/python.md).

Images are given as a path (str or os.PathLike), the bytes of an encoded file (PNG, JPEG, ...),
or a uint8 numpy array H×W (gray), H×W×3 or H×W×4 whose channels are in `order`: "rgb" (PIL,
imageio, matplotlib; the default) or "bgr" (OpenCV's cv2.imread)."""

import atexit
import dataclasses
import weakref
from typing import List, NamedTuple, Optional, Tuple

import numpy as np

from edgemm import _edgemm


@dataclasses.dataclass(frozen=True)
class OcrLine:
    """One recognized line."""

    text: str  #: UTF-8 text
    score: float  #: mean CTC confidence of the kept time steps, in [0, 1]
    box: Tuple[Tuple[float, float], ...]  #: 4 corners (x, y) in image pixels: top-left, top-right, bottom-right, bottom-left
    box_score: float  #: the detector's score of the box, in [0, 1]
    rotated_180: bool  #: the line was read turned by 180°


@dataclasses.dataclass(frozen=True)
class OcrResult:
    """The lines of one image in reading order; iterating gives the lines."""

    width: int  #: image size in pixels
    height: int
    orientation: int  #: degrees the image was turned (clockwise) to read it upright: 0, 90, 180 or 270
    lines: List[OcrLine]
    timings_ms: dict  #: decode, det, post, cls, rec, total

    def __iter__(self):
        return iter(self.lines)

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, index):
        return self.lines[index]

    def to_dict(self):
        """The image's entry of `edgemm ocr --json` (docs/ocr.md), without "file"."""
        return {
            "width": self.width,
            "height": self.height,
            "orientation": self.orientation,
            "lines": [
                {
                    "polygon": [list(p) for p in line.box],
                    "text": line.text,
                    "score": line.score,
                    "box_score": line.box_score,
                    "rotated_180": line.rotated_180,
                }
                for line in self.lines
            ],
            "timings_ms": dict(self.timings_ms),
        }


def _ocr_result(d):
    lines = [
        OcrLine(l["text"], l["score"], tuple(tuple(p) for p in l["polygon"]), l["box_score"], l["rotated_180"])
        for l in d["lines"]
    ]
    return OcrResult(d["width"], d["height"], d["orientation"], lines, d["timings_ms"])


class OcrPipeline:
    """PP-OCRv4: detection, the angle classifier and recognition (`edgemm ocr`).

    `models_dir` holds the three models and the dictionary (scripts/setup.sh fetches them to
    models/ppocrv4). Options, with `edgemm ocr`'s defaults: threads (0 = all cores), backend,
    optimize, device, precision, plugin_path; det_model, cls_model, rec_model, dictionary (file
    names in models_dir); use_cls, detect_orientation, det_limit_side, det_threshold,
    box_threshold, max_candidates, unclip_ratio, score_mode ("fast"/"slow"), min_box_side,
    line_tolerance, cls_threshold, cls_batch, rec_batch, rec_score_threshold, space_threshold
    (edgemm/pipelines/ocr.h). `run` may be called from several threads at once."""

    def __init__(self, models_dir, **options):
        self._impl = _edgemm._OcrPipeline(models_dir, **options)
        self._dir = models_dir

    def __repr__(self):
        return f"edgemm.OcrPipeline('{self._dir}')"

    def run(self, image, order="rgb"):
        """The lines of `image` (a path, encoded bytes, or a uint8 array in `order`) as an OcrResult."""
        return _ocr_result(self._impl.run(image, _order(order)))

    __call__ = run


class ZeroShot(NamedTuple):
    """Zero-shot scores: float32 [images, labels] arrays."""

    probs: np.ndarray  #: softmax over the labels of logit_scale × cosine; rows sum to 1
    cosine: np.ndarray  #: cosine similarity of image and label, in [-1, 1]
    labels: List[str]


def _as_list(items):
    return list(items) if isinstance(items, (list, tuple)) else [items]


def _order(order):
    if order not in ("rgb", "bgr", "RGB", "BGR"):
        raise _edgemm.InvalidArgument(f'order must be "rgb" or "bgr", got {order!r}')
    return order.lower()


class ClipModel:
    """A CLIP package (transformers.js layout: config.json, preprocessor_config.json,
    tokenizer.json, onnx/vision_model.onnx + onnx/text_model.onnx or onnx/model.onnx), as
    `edgemm retrieve` loads it. Options: threads, backend, optimize, device, precision,
    plugin_path; load_vision, load_text, image_batch, prune_after_layer, prune_keep_ratio,
    prune_rule (edgemm/pipelines/clip.h). Calls may come from several threads at once."""

    def __init__(self, model_dir, **options):
        self._impl = _edgemm._ClipModel(model_dir, **options)
        self._dir = model_dir

    def __repr__(self):
        return f"edgemm.ClipModel('{self._dir}')"

    def encode_text(self, texts):
        """float32 [N, D] embeddings of a text or a list of texts, rows L2-normalized."""
        return self._impl.encode_text(_as_list(texts))

    def encode_image(self, images, order="rgb"):
        """float32 [N, D] embeddings of an image or a list of images, rows L2-normalized."""
        return self._impl.encode_image(_as_list(images), _order(order))

    def zero_shot(self, images, labels, logit_scale=None, order="rgb"):
        """Zero-shot classification of images against text labels: ZeroShot(probs, cosine,
        labels), [N, len(labels)] each. logit_scale None uses the package's (logit_scale)."""
        labels = _as_list(labels)
        for label in labels:
            if not isinstance(label, str):
                raise TypeError(f"each label must be str, got {type(label).__name__}")
        if logit_scale is not None and (isinstance(logit_scale, bool) or not isinstance(logit_scale, (int, float))):
            raise TypeError(f"logit_scale must be a number or None, got {type(logit_scale).__name__}")
        scale = 0.0 if logit_scale is None else float(logit_scale)
        if not 0 < scale <= 1000 and logit_scale is not None:
            raise _edgemm.InvalidArgument(f"logit_scale must be in (0, 1000] (None: the package's), got {logit_scale}")
        embeds = self.encode_image(images, order)
        probs, cosine = self._impl.classify(embeds, labels, scale)
        return ZeroShot(probs, cosine, labels)

    @property
    def embedding_dim(self):
        return self._impl.embedding_dim

    @property
    def logit_scale(self):
        """exp(logit_scale_init_value) of config.json (14.29 for CLIP), or 1."""
        return self._impl.logit_scale

    @property
    def model_id(self):
        return self._impl.model_id


@dataclasses.dataclass(frozen=True)
class VlmResult:
    """One generation."""

    text: str  #: the answer
    ids: List[int]  #: new token ids (a final stop token included)
    stop_reason: str  #: "stop_token", "max_new_tokens", "context" or "cancelled"
    timings: dict  #: preprocess_ms, vision_encoder_ms, prefill_ms, decode_ms, time_to_first_token_ms, token counts
    prompt: str  #: the prompt the model was given (after the chat template)
    ocr: Optional[OcrResult] = None  #: the OCR result of OCR+VQA


class TextStream:
    """A generation read piece by piece: iterating yields the answer's text as it is generated (a
    character whose bytes span several tokens comes whole). `result` is the VlmResult once the
    iteration has ended (None before). Closing the stream (close(), leaving a `with` block, or dropping it) stops
    the generation."""

    def __init__(self, impl, prompt, ocr):
        self._impl = impl
        self._prompt = prompt
        self._ocr = ocr
        _open_streams.add(self)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._impl)

    def close(self):
        self._impl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def result(self):
        d = self._impl.result()
        return None if d is None else VlmResult(**d, prompt=self._prompt, ocr=self._ocr)


# Streams still open when the interpreter exits are stopped first, so that no generation thread
# outlives the models it reads.
_open_streams = weakref.WeakSet()


@atexit.register
def _close_open_streams():
    for stream in list(_open_streams):
        stream.close()


class VlmModel:
    """A vision-language model package (SmolVLM / Idefics3 in transformers.js' layout), as
    `edgemm vqa` loads it. Options: threads, backend, optimize, device, precision, plugin_path;
    decoder_file, bind_kv_cache, kv_capacity (edgemm/pipelines/vlm.h). One generation runs at a
    time: concurrent calls wait for each other."""

    def __init__(self, model_dir, **options):
        self._impl = _edgemm._VlmModel(model_dir, **options)
        self._dir = model_dir

    def __repr__(self):
        return f"edgemm.VlmModel('{self._dir}')"

    def chat_prompt(self, question, images=1):
        """The package's chat template applied to one user turn of `images` images and `question`."""
        return self._impl.chat_prompt(question, images)

    def generate(self, question, images=(), *, ocr=None, chat_template=True, stream=False, order="rgb", **generation):
        """Answers `question` about `images` (an image or a list), as `edgemm vqa`.

        With chat_template (the default) the question is put in the package's chat template with
        one image part per image; otherwise it is the prompt itself, each "<image>" standing for
        one of the images. `ocr` (an OcrPipeline) first reads the first image and asks the question
        with the text found (OCR+VQA, `edgemm vqa --ocr`). Generation options, with `edgemm vqa`'s
        defaults: max_new_tokens=64, temperature=0 (greedy; > 0 samples), top_k=50, top_p=1,
        repetition_penalty=1, seed=0, stop_ids=[], skip_special_tokens=True.

        Returns a VlmResult, or with stream=True a TextStream of text pieces."""
        images = _as_list(images)
        order = _order(order)
        if not isinstance(question, str):
            raise TypeError(f"the question must be a str, got {type(question).__name__}")
        if not question.strip():
            raise _edgemm.InvalidArgument("the question is empty: ask something")
        try:
            question.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _edgemm.InvalidArgument(f"the question is not valid UTF-8 text: {e.reason} at {e.start}") from None
        if not isinstance(stream, bool) or not isinstance(chat_template, bool):
            raise TypeError("stream and chat_template must be bool")
        if ocr is not None and not isinstance(ocr, OcrPipeline):
            raise TypeError(f"ocr must be an edgemm.OcrPipeline, got {type(ocr).__name__}")
        ocr_result = None
        if ocr is not None:
            if not images:
                raise _edgemm.InvalidArgument("OCR+VQA needs an image")
            question, ocr_dict = ocr._impl.grounded_question(images[0], question, order)
            ocr_result = _ocr_result(ocr_dict)
        prompt = self._impl.chat_prompt(question, len(images)) if chat_template else question
        if stream:
            return TextStream(self._impl.stream(prompt, images, order, generation), prompt, ocr_result)
        d = self._impl.generate(prompt, images, order, generation)
        return VlmResult(**d, prompt=prompt, ocr=ocr_result)

    @property
    def kv_cache_mode(self):
        """"bound (capacity N)" when the decoder appends to edgemm's KV cache in place, else
        "concat" and the reason."""
        return self._impl.kv_cache_mode
