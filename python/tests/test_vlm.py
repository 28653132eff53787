"""edgemm.VlmModel on the tiny random VLM package (tests/fixtures/vlm_tiny) against the C++ CLI:
`edgemm vqa --model ... IMAGE QUESTION --json` (greedy, sampled, --raw-prompt, --ocr) is the oracle
for the prompt, the token ids and the text; streaming is checked against the same model's
non-streamed generation and the CLI."""

import json
import time

import numpy as np
import pytest
from PIL import Image

import edgemm
from testenv import ROOT, run_cli

MODEL = ROOT / "tests" / "fixtures" / "vlm_tiny"
PPOCR = ROOT / "models" / "ppocrv4"
IMAGE = MODEL / "reference" / "images" / "p0_chelsea.png"
OCR_IMAGE = ROOT / "tests" / "fixtures" / "ocr_vqa" / "boarding_line.png"
QUESTION = "What is in the image?"
N = 8  # new tokens per generation: the tiny model is fast, 8 tokens show the sequence
GREEDY = {"temperature": 0.0}


def cli_vqa(image, question, *flags, max_new_tokens=N):
    """`edgemm vqa --model vlm_tiny IMAGE QUESTION --json --threads 2 --max-new-tokens N FLAGS`, parsed."""
    proc = run_cli("vqa", "--model", MODEL, image, question, "--json", "--threads", "2", "--max-new-tokens",
                   max_new_tokens, *flags)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def assert_same(result, cli):
    """A VlmResult equals the CLI's JSON: ids, text (answer), prompt and stop_reason."""
    assert isinstance(result, edgemm.VlmResult)
    assert result.ids == cli["ids"]
    assert result.text == cli["answer"]
    assert result.prompt == cli["prompt"]
    assert result.stop_reason == cli["stop_reason"]


@pytest.fixture(scope="module")
def model():
    return edgemm.VlmModel(str(MODEL), threads=2)


@pytest.fixture(scope="module")
def cli_greedy():
    return cli_vqa(IMAGE, QUESTION)


def test_chat_prompt_matches_cli(model, cli_greedy):
    """chat_prompt(question, 1) is the prompt the CLI builds with the package's chat template."""
    assert model.chat_prompt(QUESTION, 1) == cli_greedy["prompt"]
    assert "<image>" in cli_greedy["prompt"] and QUESTION in cli_greedy["prompt"]


def test_generate_default_is_greedy_like_cli(model, cli_greedy):
    """generate(question, image, max_new_tokens=N) with the documented defaults (temperature=0:
    greedy) gives the ids, text, prompt and stop reason of `edgemm vqa ... --json --max-new-tokens N`
    (oracle: the CLI, whose default is greedy too)."""
    assert_same(model.generate(QUESTION, str(IMAGE), max_new_tokens=N), cli_greedy)


def test_generate_greedy_matches_cli(model, cli_greedy):
    """With temperature=0 given explicitly, generate() equals the CLI's greedy run (oracle: the CLI);
    timings count the new tokens."""
    result = model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **GREEDY)
    assert_same(result, cli_greedy)
    assert result.stop_reason == "max_new_tokens" and len(result.ids) == N
    assert result.timings["new_tokens"] == N
    assert result.timings["prompt_tokens"] == cli_greedy["timings"]["prompt_tokens"]
    assert result.ocr is None


@pytest.mark.parametrize("form", ["pathlib", "bytes", "rgb", "list"])
def test_image_forms_match_cli(model, cli_greedy, form):
    """The image as a pathlib.Path, PNG bytes, a PIL RGB array or a one-element list gives the CLI's
    greedy answer (oracle: the CLI on the PNG file)."""
    arg = {
        "pathlib": IMAGE,
        "bytes": IMAGE.read_bytes(),
        "rgb": np.asarray(Image.open(IMAGE).convert("RGB")),
        "list": [str(IMAGE)],
    }[form]
    assert_same(model.generate(QUESTION, arg, max_new_tokens=N, **GREEDY), cli_greedy)


@pytest.mark.parametrize(
    "options, flags",
    [
        ({"temperature": 0.8, "seed": 7}, ["--temperature", "0.8", "--seed", "7"]),
        (
            {"temperature": 1.3, "seed": 123, "top_k": 20, "top_p": 0.9, "repetition_penalty": 1.2},
            ["--temperature", "1.3", "--seed", "123", "--top-k", "20", "--top-p", "0.9", "--repetition-penalty", "1.2"],
        ),
    ],
    ids=["temperature+seed", "all-sampling-options"],
)
def test_sampled_matches_cli(model, options, flags):
    """Sampling (temperature > 0 with a seed, and with top_k / top_p / repetition_penalty) gives the
    ids and text of the CLI with the same flags (oracle: the CLI); the same seed twice gives the same
    answer."""
    cli = cli_vqa(IMAGE, QUESTION, *flags)
    result = model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **options)
    assert_same(result, cli)
    assert model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **options).ids == result.ids


def test_stream_pieces_join_to_whole_text(model, cli_greedy):
    """stream=True yields text pieces whose concatenation is the non-streamed text; afterwards
    result has the same ids and stop reason (oracle: generate() without streaming, and the CLI)."""
    whole = model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **GREEDY)
    stream = model.generate(QUESTION, str(IMAGE), max_new_tokens=N, stream=True, **GREEDY)
    pieces = list(stream)
    assert all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) == whole.text == cli_greedy["answer"]
    result = stream.result
    assert isinstance(result, edgemm.VlmResult)
    assert result.ids == whole.ids == cli_greedy["ids"]
    assert result.stop_reason == whole.stop_reason
    assert result.prompt == whole.prompt


def test_stream_sampled_matches_cli(model):
    """A sampled stream gives the CLI's sampled answer with the same seed (oracle: the CLI)."""
    cli = cli_vqa(IMAGE, QUESTION, "--temperature", "0.8", "--seed", "7")
    with model.generate(QUESTION, str(IMAGE), max_new_tokens=N, stream=True, temperature=0.8, seed=7) as stream:
        text = "".join(stream)
    assert text == cli["answer"]
    assert stream.result.ids == cli["ids"]


def test_stream_close_early_is_prompt_and_model_still_works(model, cli_greedy):
    """Closing a stream after its first piece (max_new_tokens large: without the close it would run
    to the end of the 256-token context, 130+ tokens) returns promptly with stop_reason "cancelled"
    and few ids (a prefix of the CLI's greedy ids), and the next generate() still equals the CLI
    (oracle: the CLI)."""
    stream = model.generate(QUESTION, str(IMAGE), max_new_tokens=100000, stream=True, **GREEDY)
    first = next(stream)
    assert first
    start = time.monotonic()
    stream.close()
    assert time.monotonic() - start < 1.0
    result = stream.result
    assert result is not None and result.stop_reason == "cancelled"
    assert 1 <= len(result.ids) < 32
    assert result.ids == cli_greedy["ids"][: len(result.ids)]
    # What the stream still yields after close() is what was generated before the stop: together
    # with the first piece, the text of result; then it ends.
    assert first + "".join(stream) == result.text
    with pytest.raises(StopIteration):
        next(stream)
    assert_same(model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **GREEDY), cli_greedy)


def test_dropped_stream_does_not_block_next_generate(model, cli_greedy):
    """A stream left unfinished in a `with` block, and one merely dropped (del), stop their
    generation: the next generate() returns the CLI's answer (oracle: the CLI)."""
    with model.generate(QUESTION, str(IMAGE), max_new_tokens=100000, stream=True, **GREEDY) as stream:
        next(stream)
    stream = model.generate(QUESTION, str(IMAGE), max_new_tokens=100000, stream=True, **GREEDY)
    next(stream)
    del stream
    start = time.monotonic()
    assert_same(model.generate(QUESTION, str(IMAGE), max_new_tokens=N, **GREEDY), cli_greedy)
    assert time.monotonic() - start < 10


def test_ocr_vqa_matches_cli(model):
    """OCR+VQA: generate(q, image, ocr=OcrPipeline(ppocrv4)) gives the prompt (with the OCR lines) and
    ids of `edgemm vqa --ocr` (oracle: the CLI), and result.ocr holds the lines the CLI lists."""
    question = "Which gate?"
    cli = cli_vqa(OCR_IMAGE, question, "--ocr", "--ocr-models", PPOCR, max_new_tokens=6)
    ocr = edgemm.OcrPipeline(str(PPOCR), threads=2)
    result = model.generate(question, str(OCR_IMAGE), ocr=ocr, max_new_tokens=6, **GREEDY)
    assert_same(result, cli)
    assert isinstance(result.ocr, edgemm.OcrResult)
    assert [line.text for line in result.ocr] == [line["text"] for line in cli["ocr_lines"]]
    for line, ref in zip(result.ocr, cli["ocr_lines"]):
        assert line.box[0] == pytest.approx((ref["x"], ref["y"]), abs=1e-3)


def test_raw_prompt_matches_cli(model):
    """chat_template=False with a raw prompt holding "<image>" equals `edgemm vqa --raw-prompt`
    (oracle: the CLI): the prompt is used as given."""
    prompt = "<image>Describe:"
    cli = cli_vqa(IMAGE, prompt, "--raw-prompt")
    result = model.generate(prompt, str(IMAGE), chat_template=False, max_new_tokens=N, **GREEDY)
    assert result.prompt == prompt
    assert_same(result, cli)


# ---------------------------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize("question", ["", "   \n"], ids=["empty", "blank"])
def test_empty_question_raises(model, question):
    """An empty or blank question raises InvalidArgument (as `edgemm vqa` exits 2: "empty")."""
    with pytest.raises(edgemm.InvalidArgument, match="empty"):
        model.generate(question, str(IMAGE))
    assert run_cli("vqa", "--model", MODEL, IMAGE, question).returncode == 2


@pytest.mark.parametrize(
    "prompt, images",
    [("<image><image>Describe:", 1), ("Describe:", 1), ("<image>Describe:", 2)],
    ids=["2 markers 1 image", "0 markers 1 image", "1 marker 2 images"],
)
def test_image_count_mismatch_in_raw_prompt_raises(model, prompt, images):
    """A raw prompt whose "<image>" count differs from the number of images raises InvalidArgument
    naming both counts (streamed or not); the CLI's --raw-prompt refuses it with exit 2."""
    with pytest.raises(edgemm.InvalidArgument, match='"<image>"'):
        model.generate(prompt, [str(IMAGE)] * images, chat_template=False, max_new_tokens=2, **GREEDY)
    with pytest.raises(edgemm.InvalidArgument):
        list(model.generate(prompt, [str(IMAGE)] * images, chat_template=False, max_new_tokens=2, stream=True))
    if images == 1:
        assert run_cli("vqa", "--model", MODEL, IMAGE, prompt, "--raw-prompt", "--max-new-tokens", 2).returncode == 2


@pytest.mark.parametrize("stream", [False, True])
def test_unknown_generation_kwarg_raises_type_error(model, stream):
    """An unknown generation keyword raises TypeError naming it, at the call (stream or not)."""
    with pytest.raises(TypeError, match="max_tokens"):
        model.generate(QUESTION, str(IMAGE), max_tokens=4, stream=stream)


def test_wrong_generation_kwarg_type_raises_type_error(model):
    """A generation option of the wrong type raises TypeError naming it."""
    with pytest.raises(TypeError, match="max_new_tokens"):
        model.generate(QUESTION, str(IMAGE), max_new_tokens="4")


@pytest.mark.parametrize("value", [0, -1])
def test_non_positive_max_new_tokens_raises(model, value):
    """max_new_tokens < 1 raises InvalidArgument, as the CLI refuses --max-new-tokens outside
    [1, 1048576] (exit 2), instead of silently returning an empty answer."""
    assert run_cli("vqa", "--model", MODEL, IMAGE, QUESTION, "--max-new-tokens", value).returncode == 2
    with pytest.raises(edgemm.InvalidArgument):
        result = model.generate(QUESTION, str(IMAGE), max_new_tokens=value)
        pytest.fail(f"max_new_tokens={value} returned {result.ids!r} ({result.stop_reason})")


def test_bad_sampling_values_raise_invalid_argument(model):
    """Sampling values outside their range (temperature < 0, top_p = 0) raise InvalidArgument."""
    with pytest.raises(edgemm.InvalidArgument, match="temperature"):
        model.generate(QUESTION, str(IMAGE), temperature=-1.0, max_new_tokens=2)
    with pytest.raises(edgemm.InvalidArgument, match="top_p"):
        model.generate(QUESTION, str(IMAGE), temperature=1.0, top_p=0.0, max_new_tokens=2)


def test_bad_images_and_packages_raise(model, tmp_path):
    """A missing image raises IoError, a text file InvalidArgument, OCR+VQA without an image
    InvalidArgument, a missing package IoError, an unknown model option TypeError."""
    (tmp_path / "notes.png").write_text("not an image")
    with pytest.raises(edgemm.IoError):
        model.generate(QUESTION, str(tmp_path / "missing.png"), max_new_tokens=2)
    with pytest.raises(edgemm.InvalidArgument):
        model.generate(QUESTION, str(tmp_path / "notes.png"), max_new_tokens=2)
    with pytest.raises(TypeError, match="OcrPipeline"):
        model.generate(QUESTION, [], ocr=object(), max_new_tokens=2)
    with pytest.raises(edgemm.IoError):
        edgemm.VlmModel(str(tmp_path / "nowhere"))
    with pytest.raises(TypeError, match="no_such_option"):
        edgemm.VlmModel(str(MODEL), no_such_option=1)
