"""edgemm.OcrPipeline against the C++ CLI (`edgemm ocr --json`), which is the oracle throughout:
the same images given as paths, pathlib.Path, encoded bytes and RGB / BGR arrays give the CLI's
lines (texts exact, polygons within 1e-3, scores within 1e-5), its size and orientation; options
change the result as the CLI flags do; bad inputs raise edgemm's exceptions (with the category the
CLI reports for the same file) and never crash."""

import json
import pathlib
import threading

import numpy as np
import pytest
from PIL import Image

import edgemm
from testenv import ROOT, run_cli

MODELS = ROOT / "models" / "ppocrv4"

# A JPEG photo, an upside-down PNG page (labels.json tags it "upside_down") and a rotated JPEG photo
# (the smallest: the extra checks use it).
PHOTO = "data/demo/photo_text.jpg"
UPSIDE_DOWN = "data/ocr_set/012_page_blue.png"
ROTATED = "data/ocr_set/005_photo_rocket.jpg"
IMAGES = [PHOTO, UPSIDE_DOWN, ROTATED]


def cli_ocr(paths, *flags):
    """`edgemm ocr PATHS --json --threads 2 FLAGS`: the list of image entries."""
    proc = run_cli("ocr", *paths, "--json", "--threads", "2", "--models", MODELS, *flags)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["images"]


def assert_same(result, cli_image):
    """`result` (an OcrResult) equals the CLI's image entry: size and orientation exact, texts exact,
    polygons within 1e-3 px, score and box_score within 1e-5, rotated_180 exact."""
    assert isinstance(result, edgemm.OcrResult)
    assert (result.width, result.height) == (cli_image["width"], cli_image["height"])
    assert result.orientation == cli_image["orientation"]
    assert [line.text for line in result] == [line["text"] for line in cli_image["lines"]]
    assert len(result) == len(cli_image["lines"])
    for line, ref in zip(result, cli_image["lines"]):
        np.testing.assert_allclose(np.array(line.box, dtype=np.float64), np.array(ref["polygon"]), rtol=0, atol=1e-3)
        assert line.score == pytest.approx(ref["score"], abs=1e-5)
        assert line.box_score == pytest.approx(ref["box_score"], abs=1e-5)
        assert line.rotated_180 == ref["rotated_180"]


def rgb_of(path):
    """The pixels of `path` as PIL decodes them: H×W×3 uint8 RGB."""
    return np.asarray(Image.open(path).convert("RGB"))


@pytest.fixture(scope="module")
def pipeline():
    return edgemm.OcrPipeline(str(MODELS), threads=2)


@pytest.fixture(scope="module")
def cli_results():
    """The CLI's entries for IMAGES, by relative path (one CLI run)."""
    images = cli_ocr([ROOT / p for p in IMAGES])
    assert len(images) == len(IMAGES)
    return dict(zip(IMAGES, images))


@pytest.fixture(scope="module")
def array_cli_results(tmp_path_factory, cli_results):
    """For the array cases: relative path -> (PIL's RGB array, CLI entry). A PNG's pixels are the
    file's, so its oracle is the CLI on the original file; a JPEG's PIL pixels are written as a PNG
    that the CLI reads, so the oracle sees exactly the array's pixels (PIL's JPEG decoding need not
    equal OpenCV's)."""
    folder = tmp_path_factory.mktemp("ocr_arrays")
    out, jpegs, pngs = {}, [], []
    for p in IMAGES:
        rgb = rgb_of(ROOT / p)
        if p.endswith(".png"):
            out[p] = (rgb, cli_results[p])
        else:
            png = folder / (pathlib.Path(p).stem + ".png")
            Image.fromarray(rgb).save(png)
            jpegs.append((p, rgb))
            pngs.append(png)
    for (p, rgb), entry in zip(jpegs, cli_ocr(pngs)):
        out[p] = (rgb, entry)
    return out


def test_upside_down_image_is_labelled_and_read_turned(cli_results):
    """The set's labels file tags UPSIDE_DOWN "upside_down"; the CLI (oracle) finds it turned 180°,
    so the parity tests below cover orientation detection."""
    labels = json.loads((ROOT / "data/ocr_set/labels.json").read_text())
    tags = {im["file"]: im["tags"] for im in labels["images"]}
    assert "upside_down" in tags[pathlib.Path(UPSIDE_DOWN).name]
    assert cli_results[UPSIDE_DOWN]["orientation"] == 180
    assert cli_results[PHOTO]["orientation"] == 0
    assert all(len(cli_results[p]["lines"]) >= 4 for p in IMAGES)


@pytest.mark.parametrize("image", IMAGES)
@pytest.mark.parametrize("form", ["str", "pathlib", "bytes"])
def test_file_forms_match_cli(pipeline, cli_results, image, form):
    """run() on a path (str), a pathlib.Path and the file's encoded bytes equals `edgemm ocr IMAGE
    --json --threads 2` (oracle: the CLI on the same file)."""
    path = ROOT / image
    arg = {"str": str(path), "pathlib": path, "bytes": path.read_bytes()}[form]
    assert_same(pipeline.run(arg), cli_results[image])


@pytest.mark.parametrize("image", IMAGES)
@pytest.mark.parametrize("order", ["rgb", "bgr"])
def test_array_forms_match_cli(pipeline, array_cli_results, image, order):
    """run() on the PIL-decoded RGB uint8 array with order='rgb', and on the contiguous BGR copy with
    order='bgr', equals the CLI run on the same pixels: the original file for a PNG, a PNG written
    from the array for a JPEG (oracle: the CLI)."""
    rgb, ref = array_cli_results[image]
    arr = rgb if order == "rgb" else np.ascontiguousarray(rgb[..., ::-1])
    assert_same(pipeline.run(arr, order=order), ref)


def test_call_is_run(pipeline, cli_results):
    """pipeline(image) is pipeline.run(image) (oracle: the CLI)."""
    assert_same(pipeline(str(ROOT / ROTATED)), cli_results[ROTATED])


def test_rgba_and_gray_arrays_match_cli(pipeline, tmp_path):
    """An H×W×4 RGBA array (part transparent, part half-transparent) and an H×W gray array are read as
    the CLI reads the same pixels saved as RGBA / gray PNGs (alpha composited the same way)."""
    rgb = rgb_of(ROOT / ROTATED)
    h, w, _ = rgb.shape
    alpha = np.full((h, w, 1), 255, np.uint8)
    alpha[:, : w // 3] = 0
    alpha[:, w // 3 : w // 2] = 128
    rgba = np.ascontiguousarray(np.concatenate([rgb, alpha], -1))
    gray = np.asarray(Image.open(ROOT / ROTATED).convert("L"))
    Image.fromarray(rgba, "RGBA").save(tmp_path / "rgba.png")
    Image.fromarray(gray).save(tmp_path / "gray.png")
    ref_rgba, ref_gray = cli_ocr([tmp_path / "rgba.png", tmp_path / "gray.png"])
    assert_same(pipeline.run(rgba, order="rgb"), ref_rgba)
    assert_same(pipeline.run(np.ascontiguousarray(rgba[..., [2, 1, 0, 3]]), order="bgr"), ref_rgba)
    assert_same(pipeline.run(gray), ref_gray)


def test_to_dict_has_cli_image_schema(pipeline, cli_results):
    """to_dict() has exactly the keys of a CLI image entry without "file" (and the same line and
    timings keys), is JSON-serializable, and its values equal the CLI's (oracle: `edgemm ocr --json`)."""
    ref = cli_results[ROTATED]
    d = pipeline.run(str(ROOT / ROTATED)).to_dict()
    assert set(d) == set(ref) - {"file"}
    assert set(d["timings_ms"]) == set(ref["timings_ms"])
    assert all(set(line) == set(ref_line) for line, ref_line in zip(d["lines"], ref["lines"]))
    d = json.loads(json.dumps(d))
    assert (d["width"], d["height"], d["orientation"]) == (ref["width"], ref["height"], ref["orientation"])
    for line, ref_line in zip(d["lines"], ref["lines"]):
        assert line["text"] == ref_line["text"]
        assert line["rotated_180"] == ref_line["rotated_180"]
        np.testing.assert_allclose(line["polygon"], ref_line["polygon"], rtol=0, atol=1e-3)
        assert line["score"] == pytest.approx(ref_line["score"], abs=1e-5)
        assert line["box_score"] == pytest.approx(ref_line["box_score"], abs=1e-5)
    assert all(v >= 0 for v in d["timings_ms"].values())


@pytest.mark.parametrize(
    "image, options, flags",
    [
        (UPSIDE_DOWN, {"use_cls": False}, ["--no-cls"]),
        (ROTATED, {"det_limit_side": 480, "box_threshold": 0.7}, ["--det-limit-side", "480", "--box-threshold", "0.7"]),
    ],
    ids=["use_cls", "det_limit_side+box_threshold"],
)
def test_options_match_cli_flags(cli_results, image, options, flags):
    """Options change the result as the CLI flags do: OcrPipeline(**options).run() equals `edgemm ocr
    FLAGS` (use_cls=False on the upside-down page: no 180° detection), and differs from the default
    reading (so the option took effect) (oracle: the CLI)."""
    ref = cli_ocr([ROOT / image], *flags)[0]
    result = edgemm.OcrPipeline(str(MODELS), threads=2, **options).run(str(ROOT / image))
    assert_same(result, ref)
    default = cli_results[image]
    assert ref["lines"] != default["lines"] or ref["orientation"] != default["orientation"]


def test_concurrent_runs_match_cli(pipeline, cli_results):
    """run() may be called from several threads at once: two threads reading two images give the
    CLI's results (oracle: the CLI)."""
    results, errors = {}, []

    def work(image):
        try:
            results[image] = pipeline.run(str(ROOT / image))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(image,)) for image in (PHOTO, ROTATED)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for image in (PHOTO, ROTATED):
        assert_same(results[image], cli_results[image])


# ---------------------------------------------------------------------------------------------------
# Bad inputs


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    """A missing file, a text file, a zero-byte .png and a JPEG cut in half."""
    folder = tmp_path_factory.mktemp("ocr_bad")
    (folder / "notes.txt").write_text("not an image\n")
    (folder / "empty.png").write_bytes(b"")
    jpeg = (ROOT / PHOTO).read_bytes()
    (folder / "truncated.jpg").write_bytes(jpeg[: len(jpeg) // 2])
    return {
        "missing": folder / "missing.jpg",
        "text": folder / "notes.txt",
        "empty": folder / "empty.png",
        "truncated": folder / "truncated.jpg",
    }


@pytest.fixture(scope="module")
def bad_files_cli(bad_files):
    """The CLI's JSON entry of each bad file (one `edgemm ocr --json` run over all of them)."""
    names = list(bad_files)
    proc = run_cli("ocr", *(bad_files[n] for n in names), "--json", "--threads", "2", "--models", MODELS)
    assert proc.returncode != 0
    return dict(zip(names, json.loads(proc.stdout)["images"]))


@pytest.mark.parametrize(
    "name, error",
    [
        ("missing", edgemm.IoError),
        ("text", edgemm.InvalidArgument),
        ("empty", edgemm.InvalidArgument),
        ("truncated", edgemm.InvalidArgument),
    ],
)
def test_bad_files_raise_cli_error_category(pipeline, bad_files, bad_files_cli, name, error):
    """A missing file raises IoError, a text file / zero-byte file / truncated JPEG raise
    InvalidArgument; each exception's `code` is the one `edgemm ocr --json` reports for the same file
    (oracle: the CLI's error entry), and the message names the file."""
    path = bad_files[name]
    with pytest.raises(error) as info:
        pipeline.run(str(path))
    assert isinstance(info.value, edgemm.Error)
    entry = bad_files_cli[name]
    assert info.value.code == entry["error"]["code"]
    assert path.name in str(info.value)


@pytest.mark.parametrize(
    "name, data",
    [
        ("zero bytes", b""),
        ("text bytes", b"hello, not an image"),
        ("truncated JPEG", "truncated"),
    ],
)
def test_bad_bytes_raise_invalid_argument(pipeline, name, data):
    """Encoded bytes that are empty, not an image, or a JPEG cut in half raise edgemm.InvalidArgument
    (as the CLI refuses such files), never decode into garbage."""
    if data == "truncated":
        jpeg = (ROOT / PHOTO).read_bytes()
        data = jpeg[: len(jpeg) // 2]
    with pytest.raises(edgemm.InvalidArgument):
        pipeline.run(data)


@pytest.mark.parametrize(
    "name, make, error",
    [
        ("float array", lambda: np.zeros((32, 32, 3), np.float32), edgemm.InvalidArgument),
        ("4-D array", lambda: np.zeros((1, 32, 32, 3), np.uint8), edgemm.InvalidArgument),
        ("HxWx2 array", lambda: np.zeros((32, 32, 2), np.uint8), edgemm.InvalidArgument),
        ("HxWx5 array", lambda: np.zeros((32, 32, 5), np.uint8), edgemm.InvalidArgument),
        ("strided array", lambda: np.zeros((32, 64, 3), np.uint8)[:, ::2], edgemm.InvalidArgument),
        ("transposed array", lambda: np.zeros((64, 32, 3), np.uint8).transpose(1, 0, 2), edgemm.InvalidArgument),
        ("int", lambda: 5, edgemm.InvalidArgument),
        ("None", lambda: None, edgemm.InvalidArgument),
    ],
)
def test_bad_arrays_raise(pipeline, name, make, error):
    """Arrays that are not uint8 H×W / H×W×{1,3,4} with contiguous pixels, and values that are no
    image at all, raise edgemm.InvalidArgument (also a ValueError); the pipeline still works after."""
    with pytest.raises(error) as info:
        pipeline.run(make())
    assert isinstance(info.value, edgemm.Error) and isinstance(info.value, ValueError)
    assert str(info.value)


def test_non_contiguous_message_is_actionable(pipeline):
    """A strided (non-contiguous) array's error tells how to fix it (numpy.ascontiguousarray)."""
    with pytest.raises(edgemm.InvalidArgument, match="ascontiguousarray"):
        pipeline.run(np.zeros((32, 64, 3), np.uint8)[:, ::2])


def test_empty_array_says_empty(pipeline):
    """An image array with no pixels (0×5×3, 5×0×3, 0×0) raises InvalidArgument saying the image is
    empty, not a misleading "not contiguous: pass numpy.ascontiguousarray", which would not help."""
    for shape in [(0, 5, 3), (5, 0, 3), (0, 0)]:
        with pytest.raises(edgemm.InvalidArgument) as info:
            pipeline.run(np.zeros(shape, np.uint8))
        message = str(info.value)
        assert "empty" in message or "no pixels" in message, f"{shape}: {message}"


def test_wrong_order_string_raises(pipeline):
    """order must be "rgb" or "bgr": anything else raises InvalidArgument naming the bad value."""
    with pytest.raises(edgemm.InvalidArgument, match="xyz"):
        pipeline.run(np.zeros((32, 32, 3), np.uint8), order="xyz")


def test_unknown_option_raises_type_error():
    """An unknown keyword option raises TypeError naming it (as Python does for bad keywords)."""
    with pytest.raises(TypeError, match="no_such_option"):
        edgemm.OcrPipeline(str(MODELS), no_such_option=1)


@pytest.mark.parametrize("option, value", [("threads", "two"), ("use_cls", "no"), ("det_threshold", "high")])
def test_wrong_option_type_raises_type_error(option, value):
    """An option of the wrong type raises TypeError naming the option."""
    with pytest.raises(TypeError, match=option):
        edgemm.OcrPipeline(str(MODELS), **{option: value})


def test_bad_option_value_raises_invalid_argument():
    """Option values the CLI would refuse raise InvalidArgument (score_mode, threads < 0)."""
    with pytest.raises(edgemm.InvalidArgument, match="score_mode"):
        edgemm.OcrPipeline(str(MODELS), score_mode="medium")
    with pytest.raises(edgemm.InvalidArgument, match="threads"):
        edgemm.OcrPipeline(str(MODELS), threads=-1)


def test_missing_models_dir_raises_io_error(tmp_path):
    """A models folder that does not exist raises IoError naming it."""
    missing = tmp_path / "no_models_here"
    with pytest.raises(edgemm.IoError, match="no_models_here"):
        edgemm.OcrPipeline(str(missing))


def test_pipeline_still_works_after_errors(pipeline, cli_results, bad_files):
    """After a series of refused inputs the same pipeline still reads an image as the CLI does."""
    for bad in (str(bad_files["missing"]), b"", np.zeros((2, 2, 2), np.uint8), np.zeros((4, 4), np.float64)):
        with pytest.raises(edgemm.Error):
            pipeline.run(bad)
    assert_same(pipeline.run(str(ROOT / ROTATED)), cli_results[ROTATED])


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: np.broadcast_to(np.full((1, 64, 3), 255, np.uint8), (64, 64, 3)), id="broadcast rows"),
        pytest.param(lambda: np.zeros((16, 16, 3), np.uint8)[::-1], id="flipped rows"),
    ],
)
def test_row_stride_views_are_refused(make):
    """Views whose rows overlap or run backwards (stride 0 from broadcast_to, negative from [::-1])
    are refused naming the stride, never read past the buffer (a review found a segfault)."""
    ocr = edgemm.OcrPipeline(str(MODELS), threads=1)
    with pytest.raises(edgemm.InvalidArgument, match="row stride"):
        ocr.run(make())


def test_path_with_nul_is_refused():
    """A path with an embedded NUL raises ValueError as open() does, instead of reading the file
    the part before the NUL names."""
    ocr = edgemm.OcrPipeline(str(MODELS), threads=1)
    with pytest.raises(ValueError, match="null byte"):
        ocr.run(str(ROOT / PHOTO) + "\0.png")
