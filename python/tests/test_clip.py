"""edgemm.ClipModel on the tiny CLIP package (tests/fixtures/clip_tiny). Oracles: the C++ CLI
(`edgemm retrieve`: the embeddings it stores in an index, the cosines and probabilities of
`--labels ... --json`), the fixture's PyTorch reference text embeddings (reference/), and numpy for
the softmax of scaled cosines."""

import json
import pathlib
import struct

import numpy as np
import pytest
from PIL import Image

import edgemm
from testenv import ROOT, run_cli

MODEL = ROOT / "tests" / "fixtures" / "clip_tiny"
REFERENCE = MODEL / "reference"
PHOTOS = ROOT / "data" / "photos"
IMAGES = [PHOTOS / "chelsea.png", PHOTOS / "coffee.png", PHOTOS / "rocket.jpg"]
LABELS = ["a photo of a cat", "A cup of coffee on a table.", "rocket launch at night!!"]
TOL = 1e-5


def read_index(path):
    """An `edgemm retrieve --index` file (docs/clip.md "Index format"): (header, paths, [count, dim]
    float32 embeddings)."""
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"EDGEMMIX"
    version, length = struct.unpack("<II", data[8:16])
    assert version == 1
    header = json.loads(data[16 : 16 + length])
    offset, paths = 16 + length, []
    for _ in range(header["count"]):
        (n,) = struct.unpack("<I", data[offset : offset + 4])
        paths.append(data[offset + 4 : offset + 4 + n].decode())
        offset += 4 + n
    embeds = np.frombuffer(data[offset:], np.float32).reshape(header["count"], header["dim"])
    return header, paths, embeds


def cli_embeddings(images, folder):
    """The CLI's image embeddings of `images`: the rows of the index `edgemm retrieve --index` writes."""
    index = pathlib.Path(folder) / "cli.idx"
    proc = run_cli("retrieve", "--model", MODEL, "--index", index, "--threads", "2", *images)
    assert proc.returncode == 0, proc.stderr
    header, paths, embeds = read_index(index)
    assert paths == [str(p) for p in images]
    return header, embeds


def cli_labels(images, labels, *flags):
    """`edgemm retrieve --labels L --json IMAGES FLAGS` as parsed JSON."""
    proc = run_cli("retrieve", "--model", MODEL, "--labels", ",".join(labels), "--json", "--threads", "2", *flags,
                   *images)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def model():
    return edgemm.ClipModel(str(MODEL), threads=2)


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory):
    return cli_embeddings(IMAGES, tmp_path_factory.mktemp("clip_index"))


def test_properties_match_cli_index(model, cli_index):
    """embedding_dim and model_id are those the CLI writes in its index header; logit_scale is
    exp(logit_scale_init_value) of config.json (oracle: numpy on config.json)."""
    header, _ = cli_index
    assert model.embedding_dim == header["dim"] == 32
    assert model.model_id == header["model_id"]
    config = json.loads((MODEL / "config.json").read_text())
    assert model.logit_scale == pytest.approx(np.exp(config["logit_scale_init_value"]), rel=1e-6)


def test_encode_image_matches_cli_index(model, cli_index):
    """encode_image of a list of paths (two PNGs and a JPEG) equals the rows of the index `edgemm
    retrieve --index` writes for the same files within 1e-5 (oracle: the CLI); float32 [N, D], rows
    L2-normalized."""
    _, ref = cli_index
    got = model.encode_image([str(p) for p in IMAGES])
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_encode_image_one_by_one_matches_batch(model, cli_index):
    """One image at a time (a single path, not a list) gives its [1, D] row of the CLI's index."""
    _, ref = cli_index
    for i, path in enumerate(IMAGES):
        got = model.encode_image(path)
        assert got.shape == (1, ref.shape[1])
        np.testing.assert_allclose(got[0], ref[i], rtol=0, atol=TOL)


@pytest.mark.parametrize("form", ["str", "pathlib", "bytes", "rgb", "bgr"])
def test_image_forms_give_cli_embedding(model, cli_index, form):
    """A PNG given as a str path, a pathlib.Path, its bytes, its RGB array (PIL, order='rgb') or its BGR
    array (order='bgr') gives the CLI's embedding of the file within 1e-5 (oracle: the CLI index)."""
    _, ref = cli_index
    path = IMAGES[0]
    rgb = np.asarray(Image.open(path).convert("RGB"))
    arg, order = {
        "str": (str(path), "rgb"),
        "pathlib": (path, "rgb"),
        "bytes": (path.read_bytes(), "rgb"),
        "rgb": (rgb, "rgb"),
        "bgr": (np.ascontiguousarray(rgb[..., ::-1]), "bgr"),
    }[form]
    np.testing.assert_allclose(model.encode_image(arg, order=order)[0], ref[0], rtol=0, atol=TOL)


def test_rgba_and_gray_arrays_match_cli(model, tmp_path):
    """An RGBA array (alpha dropped) and a gray array give the CLI's embeddings of the same pixels saved
    as RGBA / gray PNGs (oracle: the CLI index)."""
    rgb = np.asarray(Image.open(IMAGES[1]).convert("RGB"))
    alpha = np.random.default_rng(0).integers(0, 256, rgb.shape[:2] + (1,), dtype=np.uint8)
    rgba = np.ascontiguousarray(np.concatenate([rgb, alpha], -1))
    gray = np.ascontiguousarray(rgb[..., 1])
    Image.fromarray(rgba, "RGBA").save(tmp_path / "rgba.png")
    Image.fromarray(gray).save(tmp_path / "gray.png")
    _, ref = cli_embeddings([tmp_path / "rgba.png", tmp_path / "gray.png"], tmp_path)
    got = model.encode_image([rgba, gray])
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)


def test_encode_text_matches_reference_embeddings(model):
    """encode_text of the fixture's prompts (reference/prompts.json) equals the L2-normalized
    PyTorch text embeddings of reference/prompt_text_embeds.npy within 1e-5 (oracle: the fixture's
    reference), one at a time and as a list."""
    prompts = json.loads((REFERENCE / "prompts.json").read_text())["texts"]
    ref = np.load(REFERENCE / "prompt_text_embeds.npy").astype(np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    got = model.encode_text(prompts)
    assert got.dtype == np.float32 and got.shape == (len(prompts), model.embedding_dim)
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)
    for i, text in enumerate(prompts):
        np.testing.assert_allclose(model.encode_text(text)[0], ref[i], rtol=0, atol=TOL)


def test_text_embeddings_match_cli_cosines(model):
    """The CLI's zero-shot cosines (`retrieve --labels --json`) equal encode_image · encode_text
    within 1e-5 (oracle: the CLI, for the text side the CLI exposes no embeddings directly)."""
    cli = cli_labels(IMAGES, LABELS)
    cos = model.encode_image(IMAGES) @ model.encode_text(LABELS).T
    ref = np.array([[s["cosine"] for s in im["scores"]] for im in cli["images"]])
    np.testing.assert_allclose(cos, ref, rtol=0, atol=TOL)


def softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("logit_scale", [None, 100.0, 1.0])
def test_zero_shot_is_softmax_of_scaled_cosines(model, logit_scale):
    """zero_shot probs rows sum to 1 and equal softmax(s · cosine) computed with numpy from
    encode_image / encode_text (s = model.logit_scale when None), cosine equals their dot products
    (oracle: numpy)."""
    z = model.zero_shot(IMAGES, LABELS, logit_scale=logit_scale)
    assert isinstance(z, edgemm.ZeroShot)
    assert z.labels == LABELS
    assert z.probs.shape == z.cosine.shape == (len(IMAGES), len(LABELS))
    cos = model.encode_image(IMAGES).astype(np.float64) @ model.encode_text(LABELS).astype(np.float64).T
    s = model.logit_scale if logit_scale is None else logit_scale
    np.testing.assert_allclose(z.cosine, cos, rtol=0, atol=TOL)
    np.testing.assert_allclose(z.probs.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(z.probs, softmax(s * cos), rtol=0, atol=TOL)


@pytest.mark.parametrize("logit_scale", [None, 100.0])
def test_zero_shot_matches_cli_labels(model, logit_scale):
    """zero_shot equals `edgemm retrieve --labels ... --json [--logit-scale S]`: labels, logit scale,
    probs and cosines within 1e-5 (oracle: the CLI)."""
    flags = [] if logit_scale is None else ["--logit-scale", str(logit_scale)]
    cli = cli_labels(IMAGES, LABELS, *flags)
    z = model.zero_shot([str(p) for p in IMAGES], LABELS, logit_scale=logit_scale)
    assert cli["labels"] == z.labels
    if logit_scale is None:
        assert cli["logit_scale"] == pytest.approx(model.logit_scale, rel=1e-6)
    probs = np.array([[s["prob"] for s in im["scores"]] for im in cli["images"]])
    cosine = np.array([[s["cosine"] for s in im["scores"]] for im in cli["images"]])
    assert [[s["label"] for s in im["scores"]] for im in cli["images"]] == [LABELS] * len(IMAGES)
    np.testing.assert_allclose(z.probs, probs, rtol=0, atol=TOL)
    np.testing.assert_allclose(z.cosine, cosine, rtol=0, atol=TOL)


def test_zero_shot_single_image_and_label_strings(model):
    """A single image and a single label string are taken as one-element lists: [1, 1] of prob 1."""
    z = model.zero_shot(str(IMAGES[0]), "a photo of a cat")
    assert z.labels == ["a photo of a cat"] and z.probs.shape == (1, 1)
    assert z.probs[0, 0] == pytest.approx(1.0, abs=1e-6)


# ---------------------------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize("texts", ["", "   ", [""], ["a cat", ""]], ids=["empty", "blank", "[empty]", "[ok, empty]"])
def test_empty_text_raises_invalid_argument(model, texts):
    """An empty or blank text raises InvalidArgument (as `retrieve --query "  "` exits 2)."""
    with pytest.raises(edgemm.InvalidArgument, match="empty"):
        model.encode_text(texts)


def test_empty_lists_raise_invalid_argument(model):
    """An empty list of texts, of images, or of labels raises InvalidArgument."""
    with pytest.raises(edgemm.InvalidArgument):
        model.encode_text([])
    with pytest.raises(edgemm.InvalidArgument):
        model.encode_image([])
    with pytest.raises(edgemm.InvalidArgument):
        model.zero_shot(str(IMAGES[0]), [])
    with pytest.raises(edgemm.InvalidArgument):
        model.zero_shot([], LABELS)


@pytest.mark.parametrize("texts", [3, None, ["a cat", 3]], ids=["int", "None", "list with int"])
def test_non_str_text_raises_type_error(model, texts):
    """A text that is not a str raises TypeError saying what was expected."""
    with pytest.raises(TypeError, match="str"):
        model.encode_text(texts)


def test_empty_label_raises_invalid_argument(model):
    """An empty label raises InvalidArgument naming it (as `retrieve --labels "a cat,,a dog"` exits 2)."""
    with pytest.raises(edgemm.InvalidArgument, match="label 2"):
        model.zero_shot(str(IMAGES[0]), ["a cat", ""])


def test_non_str_label_raises_clear_type_error(model):
    """A label that is not a str raises TypeError with a message about the label (as encode_text's
    "each text must be str, got int"), not pybind11's "incompatible function arguments" dump of the
    internal classify() call and the embeddings array."""
    with pytest.raises(TypeError) as info:
        model.zero_shot(str(IMAGES[0]), ["a cat", 3])
    message = str(info.value)
    assert "label" in message and "incompatible function arguments" not in message, message


@pytest.mark.parametrize("scale", [-1.0, float("nan"), float("inf")], ids=["negative", "nan", "inf"])
def test_invalid_logit_scale_raises(model, scale):
    """A logit_scale that is negative, NaN or infinite raises InvalidArgument (the CLI refuses
    --logit-scale outside [0, 1000]) instead of being silently replaced by the package's scale
    (negative, NaN) or giving NaN probabilities (inf)."""
    with pytest.raises(edgemm.InvalidArgument):
        z = model.zero_shot(str(IMAGES[0]), LABELS[:2], logit_scale=scale)
        pytest.fail(f"logit_scale={scale} gave probs {z.probs.tolist()}")


def test_bad_images_raise(model, tmp_path):
    """A missing image file raises IoError; a non-image file and a float array raise InvalidArgument."""
    (tmp_path / "notes.jpg").write_text("not an image")
    with pytest.raises(edgemm.IoError):
        model.encode_image(str(tmp_path / "missing.png"))
    with pytest.raises(edgemm.InvalidArgument):
        model.encode_image(str(tmp_path / "notes.jpg"))
    with pytest.raises(edgemm.InvalidArgument):
        model.encode_image(np.zeros((8, 8, 3), np.float32))


def test_bad_constructor_arguments(tmp_path):
    """An unknown option raises TypeError, a wrong option type TypeError, a missing package IoError."""
    with pytest.raises(TypeError, match="no_such_option"):
        edgemm.ClipModel(str(MODEL), no_such_option=1)
    with pytest.raises(TypeError, match="image_batch"):
        edgemm.ClipModel(str(MODEL), image_batch="eight")
    with pytest.raises(edgemm.IoError):
        edgemm.ClipModel(str(tmp_path / "nowhere"))
