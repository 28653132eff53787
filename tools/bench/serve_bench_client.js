// Closed-loop HTTP clients for tools/bench/serve_bench.sh: CLIENTS connections, each sending its
// next request as soon as its last answer arrived, until REQUESTS were answered. Node's own http
// module (keep-alive agent), no npm package.
//   node serve_bench_client.js ocr  BASE_URL CLIENTS REQUESTS IMAGE...
//   node serve_bench_client.js chat BASE_URL CLIENTS REQUESTS IMAGE MAX_TOKENS
// Prints one JSON object: wall seconds, requests/s, latencies (ms, sorted), non-200 count, and per
// mode the server's own times (OCR: the pipeline's time without image decoding; chat: time to first token and
// decode tokens/s from the streamed events).
const fs = require("fs");
const http = require("http");

const [mode, base, clientsArg, requestsArg, ...rest] = process.argv.slice(2);
const clients = Number(clientsArg);
const requests = Number(requestsArg);
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });

function post(path, body, contentType, onData) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let firstByte = null;
    const req = http.request(
      { host: url.hostname, port: url.port, path, method: "POST", agent, headers: { "Content-Type": contentType, "Content-Length": body.length } },
      (res) => {
        const parts = [];
        res.on("data", (d) => {
          if (firstByte === null) firstByte = process.hrtime.bigint();
          parts.push(d);
          if (onData) onData(d, process.hrtime.bigint());
        });
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString(), ms: Number(process.hrtime.bigint() - start) / 1e6, start }));
      }
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function ocrRequest(image) {
  const r = await post("/v1/ocr", image.bytes, image.type);
  const out = { status: r.status, ms: r.ms };
  if (r.status === 200) {
    const t = JSON.parse(r.body).timings_ms;
    out.pipeline_ms = t.total - t.decode;  // the pipeline, without the request's image decoding
    out.decode_ms = t.decode;
  }
  return out;
}

async function chatRequest(body) {
  let firstToken = null;
  let start = process.hrtime.bigint();
  const r = await post("/v1/chat/completions", body, "application/json", (d, now) => {
    if (firstToken === null && d.toString().includes('"content":"') && !d.toString().includes('"role"')) firstToken = now;
  });
  const out = { status: r.status, ms: r.ms };
  if (r.status === 200) {
    const events = r.body.split("\n\n").filter((e) => e.startsWith("data: {"));
    const last = JSON.parse(events.filter((e) => e.includes('"finish_reason":"'))[0].slice(6));
    const t = last.edgemm.timings;
    out.ttft_ms = firstToken === null ? r.ms : Number(firstToken - r.start) / 1e6;
    out.decode_tokens_per_s = t.decode_tokens_per_s;
    out.new_tokens = t.new_tokens;
  }
  return out;
}

async function main() {
  let next;
  if (mode === "ocr") {
    const images = rest.map((p) => ({ bytes: fs.readFileSync(p), type: p.endsWith(".png") ? "image/png" : "image/jpeg" }));
    let i = 0;
    next = () => ocrRequest(images[i++ % images.length]);
  } else {
    const [image, maxTokens] = rest;
    const dataUrl = "data:image/png;base64," + fs.readFileSync(image).toString("base64");
    const body = Buffer.from(JSON.stringify({ temperature: 0, max_tokens: Number(maxTokens), stream: true, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: dataUrl } }, { type: "text", text: "What is in this image?" }] }] }));
    next = () => chatRequest(body);
  }
  const results = [];
  let issued = 0;
  const start = process.hrtime.bigint();
  async function client() {
    while (issued < requests) {
      issued++;
      results.push(await next());
    }
  }
  await Promise.all(Array.from({ length: clients }, client));
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const ok = results.filter((r) => r.status === 200);
  const sorted = (k) => ok.map((r) => r[k]).sort((a, b) => a - b);
  const summary = { mode, clients, requests: results.length, non_200: results.length - ok.length, wall_s: wall, requests_per_s: ok.length / wall, latency_ms: sorted("ms") };
  if (mode === "ocr") {
    summary.pipeline_ms = sorted("pipeline_ms");
    summary.decode_ms = sorted("decode_ms");
  } else {
    summary.ttft_ms = sorted("ttft_ms");
    summary.decode_tokens_per_s = sorted("decode_tokens_per_s");
  }
  console.log(JSON.stringify(summary));
  agent.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
