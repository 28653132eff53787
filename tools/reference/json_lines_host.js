// The JSON-lines protocol of edgemm's node-hosted benchmark peers (ort_server.js,
// guten_server.js; the C++ side is src/bench/node_host_runtime.cc): on start one line
// {"ok":true,"ready":true,"version":V,"node":N}; then one reply line per request line, from
// the handler named by the request's "op" ({"ok":true,...its result}), {"ok":false,"error":E}
// on any failure (the host keeps serving), and exit on {"op":"quit"} or end of input.
'use strict';
const readline = require('readline');

const reply = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

// Milliseconds since a process.hrtime.bigint() reading.
const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function serveJsonLines(version, handlers) {
  reply({ ok: true, ready: true, version, node: process.version });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    try {
      const req = JSON.parse(line);
      if (req.op === 'quit') break;
      const handler = handlers[req.op];
      if (!handler) throw new Error(`unknown op '${req.op}'`);
      reply({ ok: true, ...(await handler(req)) });
    } catch (e) {
      reply({ ok: false, error: String(e && e.message ? e.message : e) });
    }
  }
  process.exit(0);
}

module.exports = { serveJsonLines, msSince };
