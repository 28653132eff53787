// A load client for `edgemm serve` (docs/serve.md "Tests"), node's plain `http` module only.
// Run by serve_load_test.sh (one server) and serve_nginx_test.sh (instances behind nginx).
//
//   node serve_load_client.js expect --base URL --kinds KINDS.json --out EXPECTED.json
//     sends each kind of request once, one at a time, and writes its answer (normalized: what
//     must not change between runs, e.g. no timings or ids) as the expected one.
//   node serve_load_client.js load --base URL --kinds KINDS.json --expected EXPECTED.json
//       --requests N --concurrency C [--time-limit S] [--request-timeout S] [--pid PID]
//       [--progress FILE] [--metrics] [--seed K] --out SUMMARY.json
//     sends N requests (a seeded random mix of the kinds) from C concurrent clients, each on its
//     own keep-alive connection, starting no new request after --time-limit seconds. Every 200
//     answer is compared with the expected one; a 429 must carry Retry-After. With --pid it samples
//     that process's VmRSS every 50 ms; with --progress it keeps the count of answered requests in
//     FILE (for a test that kills a server mid-run); with --metrics it reads /metrics before and
//     after and reports the change of edgemm_requests_total per endpoint and status.
//     The summary (JSON) has: planned, sent, answered, lost (no answer: connection error or
//     timeout), statuses, mismatches (200s that differ from the expected answer, with examples),
//     bad_429 (429 without Retry-After), per_endpoint counts, seconds, rps, p50/p90/p99/max ms and
//     every latency, rss_before_kib/rss_peak_kib/rss_after_kib, metrics_delta.
//
// KINDS.json: [{"name", "path", "content_type", "body" (a file), "check": "ocr" | "embeddings" |
//               "chat" | "chat_stream"}]
'use strict';
const fs = require('fs');
const http = require('http');

function parseArgs(argv) {
  const args = {mode: argv[0]};
  for (let i = 1; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error('unexpected argument ' + argv[i]);
    const key = argv[i].slice(2);
    if (key === 'metrics') {
      args.metrics = true;
    } else {
      args[key] = argv[++i];
    }
  }
  return args;
}

// One request; resolves {status, headers, body (Buffer), ms} or {error, ms}; never rejects.
function send(agent, base, method, path, headers, body, timeoutMs) {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - start) / 1e6;
    let done = false;
    const finish = (result) => {
      if (done) return;
      done = true;
      result.ms = ms();
      resolve(result);
    };
    const url = new URL(path, base);
    const req =
        http.request({host: url.hostname, port: url.port, path: url.pathname, method, headers, agent}, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => finish({status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks)}));
          res.on('error', (e) => finish({error: 'response: ' + e.message}));
          res.on('aborted', () => finish({error: 'response aborted'}));
        });
    req.setTimeout(timeoutMs, () => {
      req.destroy(new Error('timed out after ' + timeoutMs + ' ms'));
    });
    req.on('error', (e) => finish({error: e.message}));
    req.end(body);
  });
}

// What must be equal between two answers of one request.
function normalize(check, body) {
  const text = body.toString('utf8');
  if (check === 'chat_stream') {
    const events = text.split('\n\n').filter((e) => e.length);
    if (events[events.length - 1] !== 'data: [DONE]') throw new Error('the stream does not end with [DONE]');
    let content = '';
    let ids = null;
    let finish = null;
    for (const e of events.slice(0, -1)) {
      if (!e.startsWith('data: ')) throw new Error('not an SSE data event: ' + e.slice(0, 80));
      const chunk = JSON.parse(e.slice(6));
      if (chunk.error) throw new Error('error event: ' + JSON.stringify(chunk.error));
      if (!chunk.choices.length) continue;
      const c = chunk.choices[0];
      if (c.delta && c.delta.content) content += c.delta.content;
      if (c.finish_reason) {
        finish = c.finish_reason;
        ids = chunk.edgemm.ids;
      }
    }
    return {content, finish_reason: finish, ids};
  }
  const d = JSON.parse(text);
  if (check === 'ocr') {
    return {
      width: d.width,
      height: d.height,
      orientation: d.orientation,
      lines: d.lines.map((l) => ({
                           text: l.text,
                           polygon: l.polygon,
                           score: l.score,
                           box_score: l.box_score,
                           rotated_180: l.rotated_180,
                         })),
    };
  }
  if (check === 'embeddings') return d.data.map((r) => ({index: r.index, embedding: r.embedding}));
  if (check === 'chat') {
    const c = d.choices[0];
    return {content: c.message.content, finish_reason: c.finish_reason, ids: d.edgemm.ids};
  }
  throw new Error('unknown check ' + check);
}

function loadKinds(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8')).map((k) => ({
                                                         ...k,
                                                         data: fs.readFileSync(k.body),
                                                       }));
}

function requestHeaders(kind) {
  return {'Content-Type': kind.content_type, 'Content-Length': kind.data.length};
}

async function expectMode(args) {
  const kinds = loadKinds(args.kinds);
  const agent = new http.Agent({keepAlive: false});
  const expected = {};
  for (const kind of kinds) {
    const r = await send(agent, args.base, 'POST', kind.path, requestHeaders(kind), kind.data, 120000);
    if (r.error || r.status !== 200) {
      throw new Error(kind.name + ': ' + (r.error || 'HTTP ' + r.status + ' ' + r.body.toString().slice(0, 300)));
    }
    expected[kind.name] = normalize(kind.check, r.body);
    console.log(kind.name + ': ' + r.ms.toFixed(0) + ' ms');
  }
  fs.writeFileSync(args.out, JSON.stringify(expected));
}

function vmRssKib(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch (e) {
    return null;  // the process is gone
  }
}

// edgemm_requests_total as {"endpoint status": count}.
async function requestCounts(base) {
  const r = await send(new http.Agent({keepAlive: false}), base, 'GET', '/metrics', {}, undefined, 10000);
  if (r.error || r.status !== 200) throw new Error('/metrics: ' + (r.error || 'HTTP ' + r.status));
  const counts = {};
  const re = /^edgemm_requests_total\{endpoint="([^"]*)",status="(\d+)"\} (\d+)$/gm;
  for (let m; (m = re.exec(r.body.toString()));) counts[m[1] + ' ' + m[2]] = Number(m[3]);
  return counts;
}

function delta(after, before, endpoints) {
  const out = {};
  for (const [key, value] of Object.entries(after)) {
    if (!endpoints.has(key.split(' ')[0])) continue;
    const d = value - (before[key] || 0);
    if (d) out[key] = d;
  }
  return out;
}

// A small seeded generator, so that a run's mix of requests can be repeated.
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function loadMode(args) {
  const kinds = loadKinds(args.kinds);
  const expected = JSON.parse(fs.readFileSync(args.expected, 'utf8'));
  const planned = Number(args.requests);
  const concurrency = Number(args.concurrency);
  const timeLimitMs = Number(args['time-limit'] || 60) * 1000;
  const requestTimeoutMs = Number(args['request-timeout'] || 60) * 1000;
  const pid = args.pid ? Number(args.pid) : null;
  const next = random(Number(args.seed || 12345));
  const plan = Array.from({length: planned}, () => kinds[Math.floor(next() * kinds.length)]);
  const endpoints = new Set(kinds.map((k) => k.path));

  const countsBefore = args.metrics ? await requestCounts(args.base) : null;
  const rssBefore = pid ? vmRssKib(pid) : null;
  let rssPeak = rssBefore;
  const sampler = pid ? setInterval(() => {
    const rss = vmRssKib(pid);
    if (rss !== null && rss > rssPeak) rssPeak = rss;
  }, 50) : null;

  const summary = {
    planned,
    concurrency,
    sent: 0,
    answered: 0,
    lost: 0,
    statuses: {},
    mismatches: 0,
    mismatch_examples: [],
    lost_examples: [],
    bad_429: 0,
    other_status_examples: [],
    per_endpoint: {},
    time_limited: false,
  };
  const latencies = [];
  const start = Date.now();
  let cursor = 0;
  const client = async (agent) => {
    for (;;) {
      if (cursor >= plan.length) return;
      if (Date.now() - start > timeLimitMs) {
        summary.time_limited = true;
        return;
      }
      const kind = plan[cursor++];
      summary.sent++;
      const r = await send(agent, args.base, 'POST', kind.path, requestHeaders(kind), kind.data, requestTimeoutMs);
      if (r.error) {
        summary.lost++;
        if (summary.lost_examples.length < 5) summary.lost_examples.push(kind.name + ': ' + r.error);
        continue;
      }
      summary.answered++;
      latencies.push(r.ms);
      summary.statuses[r.status] = (summary.statuses[r.status] || 0) + 1;
      const key = kind.path + ' ' + r.status;
      summary.per_endpoint[key] = (summary.per_endpoint[key] || 0) + 1;
      if (r.status === 200) {
        let same = false;
        let got;
        try {
          got = normalize(kind.check, r.body);
          same = JSON.stringify(got) === JSON.stringify(expected[kind.name]);
        } catch (e) {
          got = 'unreadable: ' + e.message;
        }
        if (!same) {
          summary.mismatches++;
          if (summary.mismatch_examples.length < 3) {
            summary.mismatch_examples.push({
              kind: kind.name,
              got: JSON.stringify(got).slice(0, 600),
              want: JSON.stringify(expected[kind.name]).slice(0, 600)
            });
          }
        }
      } else if (r.status === 429) {
        if (!r.headers['retry-after']) summary.bad_429++;
      } else if (summary.other_status_examples.length < 5) {
        summary.other_status_examples.push(kind.name + ': HTTP ' + r.status + ' ' + r.body.toString().slice(0, 300));
      }
      if (args.progress) fs.writeFileSync(args.progress, String(summary.answered + summary.lost));
    }
  };
  const agents = [];
  const clients = [];
  for (let i = 0; i < concurrency; i++) {
    const agent = new http.Agent({keepAlive: true, maxSockets: 1});
    agents.push(agent);
    clients.push(client(agent));
  }
  await Promise.all(clients);
  summary.seconds = (Date.now() - start) / 1000;
  if (sampler) clearInterval(sampler);
  for (const agent of agents) agent.destroy();
  summary.rps = summary.answered / summary.seconds;
  latencies.sort((a, b) => a - b);
  summary.p50_ms = percentile(latencies, 50);
  summary.p90_ms = percentile(latencies, 90);
  summary.p99_ms = percentile(latencies, 99);
  summary.max_ms = latencies.length ? latencies[latencies.length - 1] : null;
  summary.latencies_ms = latencies.map((x) => Math.round(x * 10) / 10);
  if (pid) {
    summary.rss_before_kib = rssBefore;
    summary.rss_peak_kib = rssPeak;
    summary.rss_after_kib = vmRssKib(pid);
  }
  if (args.metrics) {
    // The server counts a request after writing its answer: give the last ones a moment.
    const want = JSON.stringify(Object.fromEntries(Object.entries(summary.per_endpoint).sort()));
    for (let i = 0; i < 40; i++) {
      summary.metrics_delta =
          Object.fromEntries(Object.entries(delta(await requestCounts(args.base), countsBefore, endpoints)).sort());
      if (JSON.stringify(summary.metrics_delta) === want) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  fs.writeFileSync(args.out, JSON.stringify(summary, null, 1));
  const f = (x) => (x === null || x === undefined ? '-' : x.toFixed(0));
  console.log(
      `load: ${summary.answered}/${summary.sent} answered (${planned} planned, ${concurrency} clients), ` +
      `statuses ${JSON.stringify(summary.statuses)}, ${summary.lost} lost, ${summary.mismatches} mismatches, ` +
      `${summary.seconds.toFixed(1)} s, ${summary.rps.toFixed(1)} req/s, p50 ${f(summary.p50_ms)} ms, ` +
      `p99 ${f(summary.p99_ms)} ms` +
      (pid ? `, RSS before ${f(rssBefore / 1024)} MiB, peak ${f(rssPeak / 1024)} MiB` : ''));
}

const args = parseArgs(process.argv.slice(2));
(args.mode === 'expect' ?
     expectMode(args) :
     args.mode === 'load' ?
     loadMode(args) :
     Promise.reject(new Error('usage: serve_load_client.js expect|load --base URL --kinds KINDS.json ...')))
    .catch((e) => {
      console.error('serve_load_client: ' + e.message);
      process.exit(1);
    });
